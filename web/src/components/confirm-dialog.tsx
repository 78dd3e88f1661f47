import type { ReactNode } from 'react';
import { Dialog } from './dialog';
import { ErrorBanner } from './error-banner';
import type { MutationState } from './mutation-state';

// "Are you sure?" before an action: what it does, why it failed if it did, and Cancel (where
// focus starts, so Enter does not confirm by accident) beside the button that does it.
export function ConfirmDialog({
  open,
  title,
  children,
  confirm,
  danger = true,
  action,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  danger?: boolean;
  action: MutationState;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const close = () => {
    action.reset();
    onClose();
  };
  return (
    <Dialog open={open} title={title} onClose={close}>
      <p>{children}</p>
      <ErrorBanner error={action.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={close} data-autofocus>
          Cancel
        </button>
        <button type="button" className={danger ? 'danger' : ''} disabled={action.isPending} onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </Dialog>
  );
}
