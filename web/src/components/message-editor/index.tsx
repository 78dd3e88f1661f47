import { lazy, Suspense } from 'react';
import type { MessageEditorProps } from './message-editor';

// The message editor for whoever mounts it (the builder's email and WhatsApp step forms): this
// file is small; the editor and CodeMirror come in their own chunk the first time one is shown.
const Editor = lazy(() => import('./message-editor'));

export type { MessageEditorProps } from './message-editor';
export type { MessageStepInput } from './message-types';

export function MessageEditor(props: MessageEditorProps) {
  return (
    <Suspense fallback={<p role="status">Loading the message editor…</p>}>
      <Editor {...props} />
    </Suspense>
  );
}
