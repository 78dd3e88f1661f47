import { useRef, useState } from 'react';
import { CodeField, type CodeFieldHandle } from './code-field';
import { ContactPicker, MessagePreview } from './message-preview';
import type { EmailStep, MessageStepInput, PreviewContact, WhatsAppStep } from './message-types';
import { SendTest } from './send-test';
import { useTemplateCheck } from './template-check';
import { templateErrors, templateErrorsOf, type TemplateError } from './template-errors';
import { customFieldPaths, liquidOutput, VARIABLE_GROUPS } from './variables';
import './message-editor.css';

// The message editor of an email or WhatsApp step: each template in a code editor with Liquid
// highlighting, the variables a template can read (a click inserts one where the cursor was),
// and a live preview for a contact from the service's own preview, with a template error shown
// at its line. It holds no saved state: the step comes in, each change goes out by onChange,
// and whoever mounts it saves (the builder's step form; the message page for now).
// This file and what it imports are one lazily loaded chunk (CodeMirror is most of it).

export interface MessageEditorProps {
  sequenceId: string;
  stepId: string;
  step: MessageStepInput;
  onChange: (step: MessageStepInput) => void;
  // Errors the caller has for this step by path inside it (a save's 400: `html`), shown like the check's.
  errors?: Record<string, string>;
}

interface Template {
  path: string;
  label: string;
  hint?: string;
  value: string;
  multiline: boolean;
}

function templatesOf(step: MessageStepInput): Template[] {
  if (step.type === 'email') {
    return [
      { path: 'subject', label: 'Subject', value: step.subject, multiline: false },
      { path: 'html', label: 'HTML', value: step.html, multiline: true },
      { path: 'text', label: 'Plain text', hint: 'Optional: made from the rendered HTML when left empty.', value: step.text ?? '', multiline: true },
    ];
  }
  return (step.template.components ?? []).flatMap((component, c) =>
    component.parameters.map((parameter, p) => ({
      path: `template.components.${c}.parameters.${p}.text`,
      // As the builder's form names them: "Body parameter 2", "URL button 0 parameter".
      label: `${component.type === 'button' ? `URL button ${component.index} parameter` : `${component.type === 'header' ? 'Header' : 'Body'} parameter ${p + 1}`}${'parameter_name' in parameter && parameter.parameter_name ? ` (${parameter.parameter_name})` : ''}`,
      value: parameter.text,
      multiline: false,
    })),
  );
}

function withTemplate(step: MessageStepInput, path: string, value: string): MessageStepInput {
  if (step.type === 'email') {
    if (path === 'text') {
      const { text: _old, ...rest } = step;
      return value === '' ? (rest as EmailStep) : { ...step, text: value };
    }
    return { ...step, [path]: value } as EmailStep;
  }
  const [, , c, , p] = path.split('.').map((part) => Number(part));
  const components = (step.template.components ?? []).map((component, ci) =>
    ci !== c ? component : { ...component, parameters: component.parameters.map((parameter, pi) => (pi !== p ? parameter : { ...parameter, text: value })) },
  );
  return { ...step, template: { ...step.template, components } } as WhatsAppStep;
}

export function MessageEditor({ sequenceId, stepId, step, onChange, errors: given }: MessageEditorProps) {
  const editors = useRef(new Map<string, CodeFieldHandle>());
  const templates = templatesOf(step);
  const [active, setActive] = useState(templates.find((t) => t.multiline)?.path ?? templates[0]?.path ?? '');
  const [contact, setContact] = useState<PreviewContact | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const checkError = useTemplateCheck(stepId, step);
  // A parse error is the check's as typed; the preview adds what only rendering finds (a limit).
  const errors: Record<string, TemplateError> = { ...templateErrorsOf(given ?? {}), ...templateErrors(previewError), ...templateErrors(checkError) };
  const customFields = customFieldPaths(contact?.customFields);
  const groups = customFields.length > 0 ? [...VARIABLE_GROUPS.slice(0, 1), { label: `Custom fields (of ${contact!.email})`, variables: customFields.map((name) => ({ name, what: name.slice('contact.customFields.'.length) })) }, ...VARIABLE_GROUPS.slice(1)] : VARIABLE_GROUPS;
  const activeLabel = templates.find((t) => t.path === active)?.label ?? '';

  return (
    <div className="message-editor">
      <div className="editor-main">
        {step.type === 'whatsapp' && (
          <p className="meta">
            Template <code>{step.template.name}</code> ({step.template.language.code}): its parameters are Liquid templates.
            {templates.length === 0 && ' This template takes no parameters.'}
          </p>
        )}
        {templates.map((template) => {
          const problem = errors[template.path];
          const id = `template-${stepId}-${template.path.replace(/\./g, '-')}`;
          return (
            <div className="field" key={template.path}>
              <span className="label" aria-hidden="true">
                {template.label}
              </span>
              {template.hint && <p className="hint">{template.hint}</p>}
              <CodeField
                id={id}
                ref={(handle) => {
                  if (handle) editors.current.set(template.path, handle);
                  else editors.current.delete(template.path);
                }}
                label={template.label}
                value={template.value}
                multiline={template.multiline}
                errorLine={problem?.line ?? null}
                describedBy={problem ? `${id}-error` : undefined}
                onFocus={() => setActive(template.path)}
                onChange={(value) => onChange(withTemplate(step, template.path, value))}
              />
              {problem && (
                <p className="error" id={`${id}-error`} role="alert">
                  {problem.line !== null && <strong>Line {problem.line}: </strong>}
                  {problem.message}
                </p>
              )}
            </div>
          );
        })}
      </div>
      <aside className="variables" aria-labelledby={`variables-${stepId}`}>
        <h3 id={`variables-${stepId}`}>Variables</h3>
        <p className="meta">A click inserts one at the cursor{activeLabel ? ` in ${activeLabel}` : ''}.</p>
        {groups.map((group) => (
          <div key={group.label} className="variable-group">
            <h4>{group.label}</h4>
            <ul>
              {group.variables.map((variable) => (
                <li key={variable.name}>
                  <button type="button" className="variable" title={variable.what} onClick={() => editors.current.get(active)?.insert(liquidOutput(variable.name))}>
                    <code>{variable.name}</code>
                    <span className="visually-hidden">: insert {variable.what}</span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </aside>
      <section className="preview-pane" aria-labelledby={`preview-${stepId}`}>
        <h3 id={`preview-${stepId}`}>Preview</h3>
        <ContactPicker chosen={contact} onChoose={setContact} />
        {contact && (
          <p className="meta">
            For <span className="mono">{contact.email}</span>
          </p>
        )}
        <MessagePreview sequenceId={sequenceId} stepId={stepId} step={step} contact={contact} onError={setPreviewError} />
        {contact && <SendTest sequenceId={sequenceId} stepId={stepId} step={step} contact={contact} />}
      </section>
    </div>
  );
}

export default MessageEditor;
