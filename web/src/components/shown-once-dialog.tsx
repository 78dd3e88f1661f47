import { useState } from 'react';
import { CloseButton, Dialog } from './dialog';

// A secret the service shows only once (an API key, a webhook signing secret), with a copy
// button and the warning that it will not be shown again.
export function ShownOnceDialog({
  shown,
  label,
  why,
  onClose,
}: {
  shown: { title: string; value: string } | null;
  label: string;
  why: string;
  onClose: () => void;
}) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(shown!.value);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  const close = () => {
    setCopied(null);
    onClose();
  };
  return (
    <Dialog open={shown !== null} title={shown?.title ?? ''} onClose={close}>
      <p className="banner warning">
        <strong>Copy this {label} now.</strong> It will not be shown again: {why}
      </p>
      <label className="label" htmlFor="shown-once-value">
        {label[0]!.toUpperCase() + label.slice(1)}
      </label>
      <div className="copy-row">
        <input id="shown-once-value" className="mono" readOnly value={shown?.value ?? ''} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={copy} data-autofocus>
          Copy
        </button>
      </div>
      <p role="status" className="hint">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? `Copying failed: select the ${label} and copy it yourself.` : ''}
      </p>
      <CloseButton label="Done" onClose={close} />
    </Dialog>
  );
}
