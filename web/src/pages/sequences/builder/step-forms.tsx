import { useState, type ReactNode } from 'react';
import { Field } from '../../../components/field';
import { MessageEditor } from '../../../components/message-editor';
import { SelectField } from '../../../components/select-field';
import type { Step } from '../step-words';
import type { FormContext, FormProps, Of, WithEditor } from './form-types';
import { DurationField } from './duration-field';
import { JsonField, TagsField, TemplateField, WeekdaysField } from './fields';
import { errorsUnder, PropertyConditionFields, type PropertyCondition } from './property-condition-fields';
import { SplitForm } from './split-form';
import { targetOptions } from './targets';
import { WaitForForm } from './wait-for-form';
import { FromField } from './from-field';
import { WhatsAppForm } from './whatsapp-form';

// One form per step type. Each edits the step it is given and hands back the changed step; the
// errors are the API's (or its schemas', run here first) for this step, keyed by the path inside
// the step ("subject", "then", "template.name"). Their shared types are in form-types.ts, so a
// form in a file of its own imports no file that imports it.

export function StepForm({ step, onChange, errors, context }: { step: Step; onChange: (step: Step) => void; errors: Record<string, string>; context: FormContext }) {
  const idField = (
    <Field
      label="Step id"
      hint="Letters, digits, _ or -; branches and the run lists name the step by it."
      value={step.id}
      error={errors.id}
      onChange={(e) => onChange({ ...step, id: e.target.value })}
    />
  );
  let form: ReactNode;
  switch (step.type) {
    case 'wait':
      form = <WaitForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'tag':
      form = <TagForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'update':
      form = <UpdateForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'webhook':
      form = <WebhookForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'email':
    case 'whatsapp':
      form = <MessageStepForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'wait_for':
      form = <WaitForForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'split':
      form = <SplitForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'branch':
      form = <BranchForm step={step} onChange={onChange} errors={errors} context={context} />;
      break;
    case 'exit':
      form = <p className="hint">Completes the run: the contact leaves the sequence here.</p>;
      break;
    default:
      form = <p className="hint">This step&apos;s type is not one the builder knows; remove it, or the API will refuse the steps.</p>;
  }
  return (
    <div className="step-form">
      {idField}
      {form}
    </div>
  );
}

function WaitForm({ step, onChange, errors, context }: FormProps<'wait'>) {
  const mode = step.until ? 'until' : 'duration';
  return (
    <>
      <fieldset className="field">
        <legend>Wait</legend>
        <label className="choice">
          <input type="radio" name={`${step.id}-wait-mode`} checked={mode === 'duration'} onChange={() => onChange({ id: step.id, type: 'wait', duration: 'P1D' })} />
          For a time
        </label>
        <label className="choice">
          <input type="radio" name={`${step.id}-wait-mode`} checked={mode === 'until'} onChange={() => {
              context.onProblem('duration', null);
              onChange({ id: step.id, type: 'wait', until: { time: '09:00' } });
            }}
          />
          Until a time of day
        </label>
      </fieldset>
      {mode === 'duration' ? (
        <DurationField
          label="Duration"
          value={step.duration}
          error={errors.duration}
          onProblem={(problem) => context.onProblem('duration', problem)}
          onChange={(duration) => onChange({ ...step, duration })}
        />
      ) : (
        <>
          <Field
            label="Time of day"
            hint="HH:MM, in the sending window's time zone (UTC without one)."
            value={step.until?.time ?? ''}
            error={errors['until.time'] ?? errors.until}
            onChange={(e) => onChange({ ...step, until: { ...step.until, time: e.target.value } })}
          />
          <WeekdaysField
            legend="On"
            value={step.until?.weekdays}
            error={Object.entries(errors).find(([path]) => path.startsWith('until.weekdays'))?.[1]}
            onChange={(weekdays) => {
              const until = { time: step.until?.time ?? '09:00', ...(weekdays ? { weekdays } : {}) };
              onChange({ ...step, until });
            }}
          />
        </>
      )}
    </>
  );
}

// Marketing (the default, left out when sent) or transactional: only marketing messages count
// toward the channel's frequency cap and are held by it.
function CategoryField({ step, onChange, error }: { step: Of<'email'> | Of<'whatsapp'>; onChange: (step: Step) => void; error?: string }) {
  return (
    <>
    <SelectField
      label="Category"
      options={[
        ['marketing', 'Marketing'],
        ['transactional', 'Transactional'],
      ]}
      value={step.category ?? 'marketing'}
      error={error}
      onChange={(e) => {
        const { category: _old, ...rest } = step;
        onChange(e.target.value === 'transactional' ? { ...rest, category: 'transactional' } : rest);
      }}
    />
    <p className="hint">Marketing messages count toward the channel&apos;s frequency cap and are held by it; transactional ones (a receipt, a password reset) are not.</p>
    </>
  );
}

export function firstError(errors: Record<string, string>, field: string): string | undefined {
  return errors[field] ?? Object.entries(errors).find(([path]) => path.startsWith(`${field}.`))?.[1];
}

function TagForm({ step, onChange, errors }: FormProps<'tag'>) {
  return (
    <>
      <TagsField label="Tags to add" value={step.add} error={firstError(errors, 'add')} onChange={(add) => onChange({ ...step, add })} />
      <TagsField label="Tags to remove" value={step.remove} error={firstError(errors, 'remove')} onChange={(remove) => onChange({ ...step, remove })} />
    </>
  );
}

function UpdateForm({ step, onChange, errors, context }: FormProps<'update'>) {
  return (
    <JsonField
      label="Custom fields (JSON)"
      hint="Merged into the contact's custom fields, as upsert merges them."
      value={step.customFields}
      error={firstError(errors, 'customFields')}
      onProblem={(problem) => context.onProblem('customFields', problem)}
      onChange={(customFields) => onChange({ ...step, customFields: customFields as Record<string, unknown> })}
    />
  );
}

function WebhookForm({ step, onChange, errors, context }: FormProps<'webhook'>) {
  const known = context.endpoints.some(([id]) => id === step.endpointId);
  const options: Array<readonly [string, string]> = [
    ...(step.endpointId === '' ? [['', 'Choose an endpoint'] as const] : []),
    ...(known || step.endpointId === '' ? [] : [[step.endpointId, 'An endpoint that is gone'] as const]),
    ...context.endpoints,
  ];
  return (
    <>
      <SelectField label="Endpoint" options={options} value={step.endpointId} error={errors.endpointId} onChange={(e) => onChange({ ...step, endpointId: e.target.value })} />
      {context.endpoints.length === 0 && <p className="hint">The account has no webhook endpoint yet: add one under Settings → Developer → Webhooks.</p>}
      <JsonField
        label="Payload (JSON, optional)"
        hint="Sent as data.payload, at most 16 KiB."
        optional
        value={step.payload}
        error={firstError(errors, 'payload')}
        onProblem={(problem) => context.onProblem('payload', problem)}
        onChange={(payload) => {
          const { payload: _old, ...rest } = step;
          onChange(payload === undefined ? rest : { ...rest, payload });
        }}
      />
    </>
  );
}

// An email or WhatsApp step: its own fields, its category, and the message editor (Liquid
// highlighting, the variables, a live preview for a contact) on demand. Opened, the editor's code
// fields take the place of the plain template fields, so each template is shown once; the fields
// that are no template (From, the template's name, which parameters there are) stay. Both edit one
// step, and the builder's Save steps saves it; the save's errors are shown in the editor too. It
// loads its own chunk the first time it is opened.
function MessageStepForm({ step, onChange, errors, context }: FormProps<'email' | 'whatsapp'>) {
  const [editing, setEditing] = useState(false);
  const toggle = (
    <button type="button" className="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
      {editing ? 'Close the editor and preview' : 'Open the editor with a live preview'}
    </button>
  );
  const editor = editing && <MessageEditor sequenceId={context.sequenceId} stepId={step.id} step={step} errors={errors} onChange={(next) => onChange(next as Step)} />;
  return (
    <>
      {step.type === 'email' ? (
        <EmailForm step={step} onChange={onChange} errors={errors} context={context} editor={editing ? editor : null} />
      ) : (
        <WhatsAppForm step={step} onChange={onChange} errors={errors} context={context} editor={editing ? editor : null} />
      )}
      <CategoryField step={step} onChange={onChange} error={errors.category} />
      <div className="editor-toggle">{toggle}</div>
    </>
  );
}

const VARIABLES_HINT = (
  <>
    Liquid: <code>{'{{ contact.firstName }}'}</code>, <code>{'{{ contact.customFields.plan }}'}</code>, <code>{'{{ unsubscribe_url }}'}</code>.
  </>
);

function EmailForm({ step, onChange, errors, editor }: WithEditor<'email'>) {
  return (
    <>
      {editor || (
        <>
      <TemplateField label="Subject" value={step.subject} error={errors.subject} hint={VARIABLES_HINT} onChange={(subject) => onChange({ ...step, subject })} />
      <TemplateField label="HTML" multiline value={step.html} error={errors.html} onChange={(html) => onChange({ ...step, html })} />
      <TemplateField
        label="Text (optional)"
        multiline
        hint="Left empty: made from the HTML."
        value={step.text ?? ''}
        error={errors.text}
        onChange={(text) => onChange({ ...step, text })}
      />
        </>
      )}
      <div className="field-pair">
        <FromField value={step.from ?? ''} error={errors.from} onChange={(from) => onChange({ ...step, from })} />
        <Field label="Reply-To (optional)" hint="Empty: the account's, if any." value={step.replyTo ?? ''} error={errors.replyTo} onChange={(e) => onChange({ ...step, replyTo: e.target.value })} />
      </div>
    </>
  );
}

type Condition = Of<'branch'>['if'];
const CONDITION_KINDS = [
  ['tag', 'Has a tag'],
  ['equals', 'A custom field equals'],
  ['exists', 'A custom field is there'],
  ['missing', 'A custom field is not there'],
  ['channel', 'A subscription status is'],
  ['property', 'A property of the trigger (the activity that started the run)'],
] as const;
type ConditionKind = (typeof CONDITION_KINDS)[number][0];

// '': none chosen yet (a new branch's).
function kindOf(condition: Condition): ConditionKind | '' {
  if (Object.keys(condition).length === 0) return '';
  if ('tag' in condition) return 'tag';
  if ('channel' in condition) return 'channel';
  if ('property' in condition) return 'property';
  if ('exists' in condition) return condition.exists ? 'exists' : 'missing';
  return 'equals';
}

function conditionOf(kind: ConditionKind, previous: Condition): Condition {
  const field = 'field' in previous ? previous.field : 'plan';
  switch (kind) {
    case 'tag':
      return { tag: 'tag' in previous ? previous.tag : '' };
    case 'equals':
      return { field, equals: 'equals' in previous ? previous.equals : 'pro' };
    case 'exists':
      return { field, exists: true };
    case 'missing':
      return { field, exists: false };
    case 'channel':
      return { channel: 'email', status: 'subscribed' };
    case 'property':
      return { property: 'total', gte: 50 };
  }
}

function BranchForm({ step, onChange, errors, context }: FormProps<'branch'>) {
  const condition = step.if;
  const kind = kindOf(condition);
  const ifError = errors.if;
  const targets = (value: string) => targetOptions(context.targets, value);
  return (
    <>
      <SelectField
        label="If"
        options={kind === '' ? [['', 'Choose a condition'], ...CONDITION_KINDS] : CONDITION_KINDS}
        value={kind}
        error={kind === '' ? ifError : undefined}
        onChange={(e) => onChange({ ...step, if: conditionOf(e.target.value as ConditionKind, condition) })}
      />
      {'property' in condition && (
        <PropertyConditionFields
          label="Trigger"
          condition={condition as PropertyCondition}
          errors={errorsUnder(errors, 'if')}
          onProblem={(field, problem) => context.onProblem(`if.${field}`, problem)}
          onChange={(next) => onChange({ ...step, if: next })}
        />
      )}
      {'tag' in condition && <Field label="Tag" value={condition.tag} error={errors['if.tag'] ?? ifError} onChange={(e) => onChange({ ...step, if: { tag: e.target.value } })} />}
      {'field' in condition && (
        <Field label="Custom field" hint="A dot reaches into an object: address.city." value={condition.field} error={errors['if.field'] ?? ifError} onChange={(e) => onChange({ ...step, if: { ...condition, field: e.target.value } })} />
      )}
      {'equals' in condition && 'field' in condition && (
        <JsonField
          label="Equals (a JSON value)"
          hint={'Same type and value: "pro", 3, true.'}
          rows={1}
          value={condition.equals}
          error={errors['if.equals']}
          onProblem={(problem) => context.onProblem('if.equals', problem)}
          onChange={(equals) => onChange({ ...step, if: { field: condition.field, equals } })}
        />
      )}
      {'channel' in condition && (
        <div className="field-pair">
          <SelectField
            label="Channel"
            options={[
              ['email', 'Email'],
              ['whatsapp', 'WhatsApp'],
            ]}
            value={condition.channel}
            error={errors['if.channel'] ?? ifError}
            onChange={(e) => onChange({ ...step, if: { ...condition, channel: e.target.value as 'email' | 'whatsapp' } })}
          />
          <SelectField
            label="Status"
            options={[
              ['subscribed', 'Subscribed'],
              ['unsubscribed', 'Unsubscribed'],
            ]}
            value={condition.status}
            error={errors['if.status']}
            onChange={(e) => onChange({ ...step, if: { ...condition, status: e.target.value as typeof condition.status } })}
          />
        </div>
      )}
      <div className="field-pair">
        <SelectField label="Then go to" options={targets(step.then)} value={step.then} error={errors.then} onChange={(e) => onChange({ ...step, then: e.target.value })} />
        <SelectField label="Else go to" options={targets(step.else)} value={step.else} error={errors.else} onChange={(e) => onChange({ ...step, else: e.target.value })} />
      </div>
    </>
  );
}
