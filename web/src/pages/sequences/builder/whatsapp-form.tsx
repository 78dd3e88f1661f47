import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import type { Step } from '../step-words';
import { TemplateField } from './fields';
import type { Of, WithEditor } from './form-types';

// A WhatsApp step's template: its name and language, and the parameters of each of its parts as
// the Cloud API takes them: the header's and the body's text variables, and each URL button's
// variable (the end of the URL the button was approved with). Each parameter is a Liquid
// template; with the message editor open, its code fields take their place (one set shown).

type Component = NonNullable<Of<'whatsapp'>['template']['components']>[number];
type Parameter = Component['parameters'][number];
type Button = Extract<Component, { type: 'button' }>;

const INDEXES = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

export function WhatsAppForm({ step, onChange, errors, editor }: WithEditor<'whatsapp'>) {
  const template = step.template;
  const components = template.components ?? [];
  const header = components.find((c) => c.type === 'header');
  const body = components.find((c) => c.type === 'body');
  const buttons = components.filter((c): c is Button => c.type === 'button');
  const setTemplate = (next: Partial<typeof template>) => onChange({ ...step, template: { ...template, ...next } });
  // The parts in the API's order (header, body, buttons); a part left with no parameter is left out.
  const setParts = (next: { header?: Parameter[]; body?: Parameter[]; buttons?: Button[] }) => {
    const headerParameters = next.header ?? header?.parameters ?? [];
    const bodyParameters = next.body ?? body?.parameters ?? [];
    const list: Component[] = [
      ...(headerParameters.length > 0 ? [{ type: 'header' as const, parameters: headerParameters }] : []),
      ...(bodyParameters.length > 0 ? [{ type: 'body' as const, parameters: bodyParameters }] : []),
      ...(next.buttons ?? buttons),
    ];
    const { components: _old, ...rest } = template;
    onChange({ ...step, template: list.length > 0 ? { ...rest, components: list } : rest } as Step);
  };
  // The API's error for a parameter names the part by its place in the stored list.
  const errorOf = (part: Component | undefined, i: number) => (part ? errors[`template.components.${components.indexOf(part)}.parameters.${i}.text`] : undefined);
  const freeIndex = INDEXES.find((index) => !buttons.some((button) => button.index === index));
  return (
    <>
      <div className="field-pair">
        <Field label="Template name" hint="As approved in WhatsApp Manager." value={template.name} error={errors['template.name']} onChange={(e) => setTemplate({ name: e.target.value })} />
        <Field
          label="Language"
          hint="The approved translation: en, en_US."
          value={template.language?.code ?? ''}
          error={errors['template.language.code'] ?? errors['template.language']}
          onChange={(e) => setTemplate({ language: { ...template.language, code: e.target.value } })}
        />
      </div>
      {editor}
      <Parameters part="Header" none="None: the template's header has no variable (or it has no text header)." parameters={header?.parameters ?? []} errorOf={(i) => errorOf(header, i)} editing={Boolean(editor)} onChange={(parameters) => setParts({ header: parameters })} />
      <Parameters part="Body" none="None: the template has no variables in its body." parameters={body?.parameters ?? []} errorOf={(i) => errorOf(body, i)} editing={Boolean(editor)} onChange={(parameters) => setParts({ body: parameters })} />
      <fieldset className="field">
        <legend>URL button parameters</legend>
        <p className="hint">A URL button&apos;s variable: the end of the URL it was approved with. The first button of the template is button 0.</p>
        {buttons.map((button) => {
          const others = buttons.filter((b) => b !== button);
          const setButton = (next: Partial<Button>) => setParts({ buttons: buttons.map((b) => (b === button ? { ...b, ...next } : b)) });
          return (
            <div className="parameter" key={button.index}>
              <SelectField
                label={`Place of URL button ${button.index}`}
                options={INDEXES.filter((index) => !others.some((b) => b.index === index)).map((index) => [index, `Button ${index}`] as const)}
                value={button.index}
                error={errors[`template.components.${components.indexOf(button)}.index`]}
                onChange={(e) => setButton({ index: e.target.value })}
              />
              {!editor && (
                <TemplateField
                  label={`URL button ${button.index} parameter`}
                  value={button.parameters[0]?.text ?? ''}
                  error={errorOf(button, 0)}
                  onChange={(text) => setButton({ parameters: [{ type: 'text', text }] })}
                />
              )}
              <button type="button" className="secondary" onClick={() => setParts({ buttons: others })}>
                Remove URL button {button.index}
              </button>
            </div>
          );
        })}
        {freeIndex !== undefined && (
          <button type="button" className="secondary" onClick={() => setParts({ buttons: [...buttons, { type: 'button', sub_type: 'url', index: freeIndex, parameters: [{ type: 'text', text: '{{ contact.id }}' }] }] })}>
            Add a URL button parameter
          </button>
        )}
      </fieldset>
    </>
  );
}

// The text variables of the header or the body, in order ({{1}}, {{2}}, …), added and removed.
function Parameters({
  part,
  none,
  parameters,
  errorOf,
  editing,
  onChange,
}: {
  part: 'Header' | 'Body';
  none: string;
  parameters: Parameter[];
  errorOf: (i: number) => string | undefined;
  editing: boolean;
  onChange: (parameters: Parameter[]) => void;
}) {
  const noun = part.toLowerCase();
  return (
    <fieldset className="field">
      <legend>{part} parameters</legend>
      {parameters.length === 0 && <p className="hint">{none}</p>}
      {parameters.map((parameter, i) => (
        <div className="parameter" key={i}>
          {!editing && (
            <TemplateField label={`${part} parameter ${i + 1}`} value={parameter.text} error={errorOf(i)} onChange={(text) => onChange(parameters.map((p, j) => (j === i ? { ...p, text } : p)))} />
          )}
          <button type="button" className="secondary" onClick={() => onChange(parameters.filter((_, j) => j !== i))}>
            Remove {noun} parameter {i + 1}
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...parameters, { type: 'text', text: '{{ contact.firstName }}' }])}>
        Add a {noun} parameter
      </button>
    </fieldset>
  );
}
