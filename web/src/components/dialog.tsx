import { useEffect, useId, useRef, type ReactNode } from 'react';

// A modal on the browser's own <dialog>: it keeps focus inside, closes on Escape and gives
// focus back to whatever opened it. Focus starts on the element marked data-autofocus.
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      // React's autoFocus runs before the dialog is shown (and so does nothing): the element to
      // start on is marked instead.
      dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

// The foot of a dialog that only informs: its one button closes it.
export function CloseButton({ label, onClose }: { label: string; onClose: () => void }) {
  return (
    <div className="actions">
      <button type="button" className="secondary" onClick={onClose}>
        {label}
      </button>
    </div>
  );
}
