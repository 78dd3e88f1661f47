import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { liquid } from '@codemirror/lang-liquid';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, keymap, lineNumbers, type DecorationSet } from '@codemirror/view';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import { VARIABLE_COMPLETIONS } from './variables';

// One template in CodeMirror 6 with Liquid highlighting (over HTML), loaded with the editor's
// own chunk (message-editor.tsx imports this file lazily). The line a template error names is
// marked, and the editor can insert a variable where the cursor is.

export interface CodeFieldHandle {
  insert(text: string): void;
}

const setErrorLine = StateEffect.define<number | null>();

// The marked line: set by the effect, kept where it is while the text around it changes.
const errorLine = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = marks.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (!effect.is(setErrorLine)) continue;
      const line = effect.value;
      next =
        line === null || line < 1 || line > transaction.state.doc.lines
          ? Decoration.none
          : Decoration.set([Decoration.line({ class: 'cm-template-error', attributes: { 'data-error-line': String(line) } }).range(transaction.state.doc.line(line).from)]);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

// The page's stylesheet does not reach into the shadow root: the editor's look is here.
const THEME = EditorView.theme({
  '&': { fontSize: '0.9rem', backgroundColor: '#fff' },
  '&.cm-focused': { outline: '2px solid #1f5fbf', outlineOffset: '1px' },
  '.cm-scroller': { maxHeight: '24rem', overflow: 'auto', fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace" },
  '.cm-content': { padding: '0.35rem 0' },
  '.cm-gutters': { backgroundColor: '#f7f8fa', color: '#4a5360', borderRight: '1px solid #d8dee6' },
  '.cm-template-error': { backgroundColor: '#fdecea', boxShadow: 'inset 3px 0 0 #b3261e' },
  '.cm-line': { padding: '0 0.5rem' },
});
// The error that describes the field comes and goes as it is typed: its attribute is reconfigured.
function describedByAttribute(describedBy: string | undefined): Extension {
  return EditorView.contentAttributes.of(describedBy ? { 'aria-describedby': describedBy } : {});
}

const MULTILINE = EditorView.theme({ '.cm-content, .cm-gutter': { minHeight: '8rem' } });

interface Props {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  onFocus: () => void;
  errorLine: number | null;
  describedBy?: string;
  multiline: boolean;
}

export const CodeField = forwardRef<CodeFieldHandle, Props>(function CodeField(props, ref) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // The latest callbacks, for the listener made once with the view.
  const latest = useRef(props);
  latest.current = props;
  const describedBy = useRef(new Compartment());

  useEffect(() => {
    const extensions: Extension[] = [
      history(),
      keymap.of([...defaultKeymap, ...historyKeymap]),
      liquid({ variables: VARIABLE_COMPLETIONS }),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      errorLine,
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-label': props.label, id: props.id }),
      describedBy.current.of(describedByAttribute(props.describedBy)),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) latest.current.onChange(update.state.doc.toString());
        if (update.focusChanged && update.view.hasFocus) latest.current.onFocus();
      }),
    ];
    extensions.push(THEME);
    if (props.multiline) extensions.unshift(lineNumbers(), MULTILINE);
    // One line (a subject, a parameter): a line break typed or pasted is refused.
    else extensions.push(EditorState.transactionFilter.of((transaction) => (transaction.newDoc.lines > 1 ? [] : transaction)));
    // In a shadow root: CodeMirror's styles then go in as a constructed stylesheet, which the
    // dashboard's Content-Security-Policy (style-src 'self') allows, where the <style> element it
    // adds to a document would be refused and leave the editor unstyled.
    const root = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    view.current = new EditorView({ root, parent: root, state: EditorState.create({ doc: props.value, extensions }) });
    return () => view.current?.destroy();
    // The view is made once; value and error line are pushed in by the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // A value changed from outside (another step chosen, a variable inserted elsewhere).
  useEffect(() => {
    const current = view.current;
    if (current && current.state.doc.toString() !== props.value) {
      current.dispatch({ changes: { from: 0, to: current.state.doc.length, insert: props.value } });
    }
  }, [props.value]);

  useEffect(() => {
    view.current?.dispatch({ effects: setErrorLine.of(props.errorLine) });
  }, [props.errorLine, props.value]);

  useEffect(() => {
    view.current?.dispatch({ effects: describedBy.current.reconfigure(describedByAttribute(props.describedBy)) });
  }, [props.describedBy]);

  useImperativeHandle(ref, () => ({
    insert(text: string) {
      const current = view.current;
      if (!current) return;
      const { from, to } = current.state.selection.main;
      current.dispatch({ changes: { from, to, insert: text }, selection: { anchor: from + text.length } });
      current.focus();
    },
  }));

  return <div ref={host} className={`code-field${props.multiline ? ' multiline' : ''}${props.errorLine !== null ? ' invalid' : ''}`} />;
});
