import type { FormEvent, ReactNode } from 'react';
import { Dialog } from './dialog';
import { ErrorBanner } from './error-banner';
import type { MutationState } from './mutation-state';

// A dialog that is one form: the service's complaint on top, the fields, then Cancel beside the
// button that sends it.
export function FormDialog({
  open,
  title,
  submit,
  action,
  onSubmit,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  submit: string;
  action: MutationState;
  onSubmit: () => void;
  onClose: () => void;
  children: ReactNode;
}) {
  const send = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  const close = () => {
    action.reset();
    onClose();
  };
  return (
    <Dialog open={open} title={title} onClose={close}>
      <form onSubmit={send} noValidate>
        <ErrorBanner error={action.error} />
        {children}
        <div className="actions">
          <button type="button" className="secondary" onClick={close}>
            Cancel
          </button>
          <button type="submit" disabled={action.isPending}>
            {submit}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
