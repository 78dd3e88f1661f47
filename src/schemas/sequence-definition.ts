import { z } from 'zod';
import { activityNameSchema } from './activity';
import { customFieldsSchema, tagSchema } from './contact';
import { SUBSCRIPTION_STATUSES } from './statuses';
import { isMailbox, jsonProblem, text, utf8Length } from './text';

// What a sequence does: its steps, its exit rules and its sending window (docs/sequences.md).
// These schemas hold the shape; the rules that read across fields (ids unique, branch targets,
// cycles, duration ranges, time zones, webhook endpoints) are checked by the service
// (src/services/sequences/definition-rules.ts), with errors that name the step.

export const MAX_STEPS = 100;
export const MAX_PAYLOAD_BYTES = 16 * 1024;
const MAX_TAGS_IN_STEP = 100;

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const STEP_TYPES = ['wait', 'wait_for', 'tag', 'update', 'webhook', 'email', 'whatsapp', 'branch', 'split', 'exit'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const stepIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'A step id is 1 to 64 letters, digits, _ or -')
  .describe('Unique in the sequence; 1 to 64 letters, digits, `_` or `-`.')
  .meta({ example: 'welcome-wait' });

const timeOfDay = (allow24: boolean) =>
  z
    .string()
    .regex(allow24 ? /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/ : /^([01]\d|2[0-3]):[0-5]\d$/, `A local time of day, HH:MM${allow24 ? ' (24:00 for the end of the day)' : ''}`)
    .meta({ example: '09:00' });

// Each day once: ["sat", "sat"] is a mistake more often than a meaning.
export const repeatedWeekdayMessage = (day: string) => `"${day}" is listed twice: name each weekday once`;

const weekdaysSchema = z
  .array(z.enum(WEEKDAYS))
  .min(1, 'Name at least one weekday')
  .max(7 * 4)
  .superRefine((days, ctx) => {
    const index = days.findIndex((day, i) => days.indexOf(day) !== i);
    if (index >= 0) ctx.addIssue({ code: 'custom', path: [index], message: repeatedWeekdayMessage(days[index]!) });
  })
  .describe('Days of the week: `mon` to `sun`, each at most once. Absent: every day.')
  .meta({ example: ['mon', 'tue', 'wed', 'thu', 'fri'] });

const timeZoneSchema = z
  .string()
  .min(1)
  .max(64)
  .describe('An IANA time zone, e.g. `Europe/Paris` or `UTC`.')
  .meta({ example: 'Europe/Paris' });

const id = stepIdSchema.optional().describe('Given by you, or generated; stable once stored.');

const waitStep = z
  .strictObject({
    id,
    type: z.literal('wait'),
    duration: z.string().max(64).optional().describe('ISO 8601 duration, PT1S to 366 days: `PT2H`, `P3D`, `P1W`.').meta({ example: 'P3D' }),
    until: z
      .strictObject({ time: timeOfDay(false), weekdays: weekdaysSchema.optional() })
      .optional()
      .describe('The next moment the run\'s local clock reads `time`, on one of `weekdays`.'),
  })
  .describe('The run sleeps for `duration`, or until a local time of day. Give exactly one of the two.')
  .meta({ id: 'WaitStep' });

const tagStep = z
  .strictObject({
    id,
    type: z.literal('tag'),
    add: z.array(tagSchema).max(MAX_TAGS_IN_STEP).optional().describe('Tags to add (appended, as add-tags does).'),
    remove: z.array(tagSchema).max(MAX_TAGS_IN_STEP).optional().describe('Tags to remove.'),
  })
  .describe('Changes the contact\'s tags, with the usual contact events. Give at least one tag.')
  .meta({ id: 'TagStep' });

const updateStep = z
  .strictObject({
    id,
    type: z.literal('update'),
    customFields: customFieldsSchema.describe('Deep-merged into the contact\'s custom fields, as upsert merges them.'),
  })
  .describe('Changes the contact\'s custom fields.')
  .meta({ id: 'UpdateStep' });

const payloadSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    const problem = jsonProblem(value);
    if (problem) return void ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    if (utf8Length(JSON.stringify(value) ?? '') > MAX_PAYLOAD_BYTES) {
      ctx.addIssue({ code: 'custom', message: 'The payload must be at most 16 KiB as JSON' });
    }
  })
  .describe('Static JSON sent as `data.payload`, at most 16 KiB.')
  .meta({ example: { campaign: 'welcome' } });

const webhookStep = z
  .strictObject({
    id,
    type: z.literal('webhook'),
    endpointId: z.string().max(64).describe('A webhook endpoint of the account (`/api/v1/webhooks`).').meta({ example: '5c4b3a29-1e0d-4f8c-9b7a-6d5e4f3a2b1c' }),
    payload: payloadSchema.optional(),
  })
  .describe(
    'POSTs `{ id, type: "run.step", createdAt, accountId, data: { run, step, contact, payload } }` to the endpoint\'s URL, ' +
      'signed with its secret as events are. `id` (and the `webhook-id` header) is the same on every retry of one step ' +
      'of one run. A 2xx succeeds; anything else is retried (5 s, 30 s, 2 min, 10 min, 1 h), then the step fails.',
  )
  .meta({ id: 'WebhookStep' });

// Message steps (docs/sequences.md "Email and WhatsApp steps", docs/templates.md). Their texts are
// Liquid templates, parsed when the sequence is saved (src/services/messages/templates.ts).
// Sizes: Gmail clips a message whose HTML passes about 100 KB, and RFC 5322 caps a header line at
// 998 characters; WhatsApp caps a template's body at 1,024 characters.
export const MAX_SUBJECT_CHARS = 998;
export const MAX_EMAIL_BODY_CHARS = 100 * 1024;
export const MAX_WHATSAPP_PARAMETER_CHARS = 1024;
const MAX_WHATSAPP_COMPONENTS = 12;
const MAX_WHATSAPP_PARAMETERS = 50;

// Only marketing messages count toward the channel's frequency cap, and only they are capped
// (docs/channels.md "Frequency caps").
export const MESSAGE_CATEGORIES = ['marketing', 'transactional'] as const;
export type MessageCategory = (typeof MESSAGE_CATEGORIES)[number];
const categorySchema = z
  .enum(MESSAGE_CATEGORIES)
  .optional()
  .describe('`marketing` (the default) counts toward the channel\'s frequency cap and is capped; `transactional` is neither.');

const mailboxSchema = text()
  .trim()
  .max(320, 'Must be at most 320 characters')
  .refine(isMailbox, 'Must be an email address, or a name and an address: `Shop <news@shop.example>`');

const template = (max: number, what: string) =>
  text().min(1, `${what} must not be empty`).max(max, `${what} must be at most ${max} characters`);

const emailStep = z
  .strictObject({
    id,
    type: z.literal('email'),
    subject: template(MAX_SUBJECT_CHARS, 'The subject')
      .describe('A Liquid template, rendered per contact without HTML escaping; line breaks in the result become spaces.')
      .meta({ example: 'Welcome, {{ contact.firstName | default: "friend" }}' }),
    html: template(MAX_EMAIL_BODY_CHARS, 'The html')
      .describe('A Liquid template of the HTML part. Every `{{ }}` output is HTML-escaped unless piped through `raw` last.')
      .meta({ example: '<p>Hello {{ contact.firstName }}!</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' }),
    text: template(MAX_EMAIL_BODY_CHARS, 'The text')
      .optional()
      .describe('A Liquid template of the plain-text part, not escaped. Absent: made from the rendered HTML.'),
    from: mailboxSchema.optional().describe('Absent: the account\'s email sender (`EMAIL_FROM` when it has none).').meta({ example: 'Shop <news@shop.example>' }),
    replyTo: mailboxSchema.optional().describe('Absent: the account\'s reply-to, if any.').meta({ example: 'help@shop.example' }),
    category: categorySchema,
    trackClicks: z
      .boolean()
      .optional()
      .describe(
        'True: the html\'s http(s) links (not the unsubscribe link) go through a signed redirect that records `email.clicked`, when the ' +
          'account\'s email channel has `tracking.clicks` on. Absent or false: links are sent as written.',
      ),
  })
  .describe(
    'Sends an email to the contact, with `List-Unsubscribe` (one click). Templates read `contact`, `run`, `sequence` and ' +
      '`unsubscribe_url`; a template that does not parse is a 400 naming the step, the field and the line.',
  )
  .meta({ id: 'EmailStep' });

const whatsappParameter = z
  .strictObject({
    type: z.literal('text', { error: 'Only parameters of type "text" are supported' }),
    text: template(MAX_WHATSAPP_PARAMETER_CHARS, 'A parameter\'s text')
      .describe('A Liquid template, rendered per contact without escaping.')
      .meta({ example: '{{ contact.firstName | default: "there" }}' }),
    parameter_name: z
      .string()
      .regex(/^[a-z0-9_]{1,64}$/, 'A parameter name is 1 to 64 lower-case letters, digits or _')
      .optional()
      .describe('For a template with named parameters: the name, as approved.'),
  })
  .meta({ id: 'WhatsAppTextParameter' });

const parameters = z.array(whatsappParameter).min(1, 'Give at least one parameter').max(MAX_WHATSAPP_PARAMETERS, `At most ${MAX_WHATSAPP_PARAMETERS} parameters`);

const whatsappComponent = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('header'), parameters }),
    z.strictObject({ type: z.literal('body'), parameters }),
    z.strictObject({
      type: z.literal('button'),
      sub_type: z.literal('url').describe('A URL button: its parameter is appended to the URL the template was approved with.'),
      index: z.string().regex(/^\d$/, 'A button index is "0" to "9"').describe('The button\'s place in the template, "0" to "9".'),
      parameters,
    }),
  ])
  .describe('As the WhatsApp Cloud API takes it: `header` and `body` fill text variables, a `url` button its URL\'s variable.')
  .meta({ id: 'WhatsAppTemplateComponent' });

const whatsappStep = z
  .strictObject({
    id,
    type: z.literal('whatsapp'),
    template: z
      .strictObject({
        name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'A template name is 1 to 512 lower-case letters, digits or _').meta({ example: 'order_update' }),
        language: z
          .strictObject({
            code: z
              .string()
              .regex(/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/, 'A language code is like en or en_US')
              .meta({ example: 'en_US' }),
            policy: z.literal('deterministic').optional(),
          }, { error: (issue) => (issue.code === 'invalid_type' ? 'The language is an object, as the Cloud API takes it: { "code": "en_US" }' : undefined) })
          .describe('The approved translation to send: `{ "code": "en_US" }`.'),
        components: z.array(whatsappComponent).max(MAX_WHATSAPP_COMPONENTS, `At most ${MAX_WHATSAPP_COMPONENTS} components`).optional(),
      })
      .describe('A template approved in WhatsApp Manager, in the Cloud API\'s own shape; each parameter\'s `text` is a Liquid template.'),
    category: categorySchema,
  })
  .describe('Sends an approved WhatsApp template message to the contact\'s phone (E.164).')
  .meta({ id: 'WhatsAppStep' });

const fieldPath = text().min(1).max(255).describe('A custom field; a dot reaches into an object: `address.city`.');

// What a client sees when a condition or an exit rule matches none of the shapes: the shapes
// allowed, not zod's "Invalid input". (A value that has one shape's keys but a bad value, like an
// empty tag, is named by that shape's own message.)
export const CONDITION_SHAPES =
  'A condition is one of { "tag": "…" }, { "field": "…", "equals": any JSON }, { "field": "…", "exists": true or false }, ' +
  `{ "channel": "email" or "whatsapp", "status": ${SUBSCRIPTION_STATUSES.map((status) => `"${status}"`).join(' or ')} } ` +
  'or, on the run\'s trigger, { "property": "…" } with one of equals, in, exists, gt, gte, lt or lte';
export const EXIT_RULE_SHAPES = 'An exit rule is { "tag": "…" } or { "unsubscribed": "email" or "whatsapp" }';
const shapesError = (shapes: string) => (issue: { code?: string; input?: unknown }) =>
  issue.code === 'invalid_union' ? `${shapes}; got ${sentShape(issue.input)}` : undefined;

// What was sent, briefly: an object by its keys, anything else by its JSON type.
function sentShape(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  if (typeof input !== 'object') return `a ${typeof input}`;
  const keys = Object.keys(input);
  return keys.length === 0 ? '{}' : `an object with ${keys.map((key) => JSON.stringify(key)).join(', ')}`;
}

// A condition on an activity's properties (docs/activities.md "Conditions on properties"): an
// entry's or a goal's `where`, and a branch's `if` on the run's trigger. Exactly one operator.
export const PROPERTY_OPERATORS = ['equals', 'in', 'exists', 'gt', 'gte', 'lt', 'lte'] as const;
export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number];
export const PROPERTY_CONDITION_SHAPES =
  'A property condition is { "property": "…" } with one of equals (any JSON), in (a list), exists (true or false), ' +
  'gt, gte, lt or lte (a number, or a string compared as text)';
const propertyPath = text()
  .min(1)
  .max(255)
  .describe('A dot path into the activity\'s properties: `cartId`, `items.0.sku`.')
  .meta({ example: 'cartId' });
const ordered = z.union([z.number(), z.string()]).describe('A number, or a string compared as text (an ISO date compares in time order).');
export const propertyConditionSchema = z
  .union(
    [
      z.strictObject({ property: propertyPath, equals: z.unknown().describe('Equal as JSON (same type and value).') }),
      z.strictObject({ property: propertyPath, in: z.array(z.unknown()).min(1).max(100).describe('Equal as JSON to one of these.') }),
      z.strictObject({ property: propertyPath, exists: z.boolean().describe('The property is there (true) or not (false).') }),
      z.strictObject({ property: propertyPath, gt: ordered }),
      z.strictObject({ property: propertyPath, gte: ordered }),
      z.strictObject({ property: propertyPath, lt: ordered }),
      z.strictObject({ property: propertyPath, lte: ordered }),
    ],
    { error: shapesError(PROPERTY_CONDITION_SHAPES) },
  )
  .describe('One condition on a property: `{ property, equals | in | exists | gt | gte | lt | lte }`.')
  .meta({ id: 'PropertyCondition', example: { property: 'total', gte: 50 } });
export type PropertyCondition = z.infer<typeof propertyConditionSchema>;

const whereSchema = z
  .array(propertyConditionSchema)
  .max(20, 'At most 20 conditions')
  .describe('Conditions on the activity\'s properties; every one must hold.');

export const conditionSchema = z
  .union(
    [
      z.strictObject({ tag: tagSchema.describe('The contact has this tag.') }),
      z.strictObject({ field: fieldPath, equals: z.unknown().describe('Equal as JSON (same type and value).') }),
      z.strictObject({ field: fieldPath, exists: z.boolean().describe('The field is there (true) or not (false).') }),
      z.strictObject({ channel: z.enum(['email', 'whatsapp']), status: z.enum(SUBSCRIPTION_STATUSES) }),
      ...propertyConditionSchema.options,
    ],
    { error: shapesError(CONDITION_SHAPES) },
  )
  .describe(
    'One condition on the contact: `{ tag }`, `{ field, equals }`, `{ field, exists }` or `{ channel, status }`; or on the ' +
      'properties of the activity that started the run: `{ property, equals | in | exists | gt | gte | lt | lte }`.',
  )
  .meta({ id: 'StepCondition', example: { tag: 'vip' } });
export type Condition = z.infer<typeof conditionSchema>;

const branchStep = z
  .strictObject({
    id,
    type: z.literal('branch'),
    if: conditionSchema,
    then: stepIdSchema.describe('The step to go to when the condition holds.'),
    else: stepIdSchema.describe('The step to go to otherwise.'),
  })
  .describe('Jumps to `then` or `else`. Every other step goes on to the next one in the list.')
  .meta({ id: 'BranchStep' });

const exitStep = z.strictObject({ id, type: z.literal('exit') }).describe('Completes the run.').meta({ id: 'ExitStep' });

const isoDuration = (example: string) => z.string().max(64).describe('An ISO 8601 duration, PT1S to 366 days.').meta({ example });

// A match value: a Liquid template (rendered per run, as a message's texts are) or a plain JSON
// value, compared with the activity's property as JSON; a template that renders empty matches
// nothing (docs/sequences.md "Wait for an activity").
export const MAX_MATCH_KEYS = 10;
const matchValue = z.union([text().max(1024, 'A match value must be at most 1024 characters'), z.number(), z.boolean()]);

const waitForStep = z
  .strictObject({
    id,
    type: z.literal('wait_for'),
    activity: activityNameSchema.describe('The activity to wait for, by name (case-sensitive).').meta({ example: 'checkout_completed' }),
    match: z
      .record(propertyPath, matchValue)
      .optional()
      .describe(
        'Property path -> value: only an activity whose properties have every one of these values matches. A value is a ' +
          'Liquid template (`{{ trigger.properties.cartId }}`) or a JSON number or boolean.',
      )
      .meta({ example: { cartId: '{{ trigger.properties.cartId }}' } }),
    timeout: isoDuration('PT3H').describe('How long to wait, PT1S to 366 days; then the run goes to `onTimeout`.'),
    next: stepIdSchema.optional().describe('Where a matched run goes; absent: the following step.'),
    onTimeout: stepIdSchema.describe('Where a run goes when the timeout passes with no match.'),
  })
  .describe(
    'Waits until the run\'s contact has a matching activity (the run moves on as it is recorded), or the timeout passes. ' +
      'Later steps read the matched activity as `waited` (`waited.properties`).',
  )
  .meta({ id: 'WaitForStep' });

export const MAX_SPLIT_VARIANTS = 10;
const splitStep = z
  .strictObject({
    id,
    type: z.literal('split'),
    variants: z
      .array(
        z.strictObject({
          id: stepIdSchema.describe('The variant\'s name, unique in the step: 1 to 64 letters, digits, `_` or `-`.').meta({ example: 'a' }),
          weight: z.number().int('A weight is a whole number').min(1, 'A weight is at least 1').max(1_000_000).describe('Relative to the other variants\' weights.'),
          next: stepIdSchema.describe('Where a run of this variant goes; a holdout goes to an `exit` step.'),
        }),
      )
      .min(2, 'Give at least two variants')
      .max(MAX_SPLIT_VARIANTS, `At most ${MAX_SPLIT_VARIANTS} variants`),
  })
  .describe(
    'Sends each run down one variant, chosen by weight from a hash of the run id and the step id: the same run always takes ' +
      'the same variant, through retries, crashes and restarts.',
  )
  .meta({ id: 'SplitStep' });

export const stepInputSchema = z.discriminatedUnion('type', [
  waitStep,
  waitForStep,
  tagStep,
  updateStep,
  webhookStep,
  emailStep,
  whatsappStep,
  branchStep,
  splitStep,
  exitStep,
]);
export type StepInput = z.infer<typeof stepInputSchema>;
// A stored step: its id is always there.
export type Step = StepInput & { id: string };
export type StepOf<T extends StepType> = Extract<Step, { type: T }>;

export const stepsInputSchema = z
  .array(stepInputSchema)
  .max(MAX_STEPS, `At most ${MAX_STEPS} steps`)
  .describe(`The steps, in order, at most ${MAX_STEPS}. An empty list: runs are moved from outside, as before steps existed.`);

export const exitRuleSchema = z
  .union(
    [
      z.strictObject({ unsubscribed: z.enum(['email', 'whatsapp']).describe('The contact unsubscribes from this channel.') }),
      z.strictObject({ tag: tagSchema.describe('The contact gets this tag.') }),
    ],
    { error: shapesError(EXIT_RULE_SHAPES) },
  )
  .meta({ id: 'ExitRule', example: { tag: 'purchased' } });
export type ExitRule = z.infer<typeof exitRuleSchema>;

export const exitWhenSchema = z
  .array(exitRuleSchema)
  .max(20, 'At most 20 exit rules')
  .describe(
    'The run is cancelled, with a reason, when the contact unsubscribes from a channel or gets a tag: checked when it ' +
      'happens and again before every step. (A deleted contact\'s runs are deleted with it.)',
  );

export const sendingWindowSchema = z
  .strictObject({
    timeZone: timeZoneSchema,
    useContactTimeZone: z
      .boolean()
      .optional()
      .describe('Read times in the contact\'s own zone, `customFields.timeZone`, when that is a valid zone; `timeZone` otherwise.'),
    weekdays: weekdaysSchema.optional(),
    from: timeOfDay(false).optional().describe('Opens at, local time. Give `from` and `to`, or neither (the whole day).'),
    to: timeOfDay(true).optional().describe('Closes at, local time (exclusive); after `from`.').meta({ example: '17:00' }),
  })
  .describe(
    'Steps that act on the contact or the outside (tag, update, webhook, email, whatsapp) run only inside the window; one due outside it ' +
      'waits for the next opening. Its zone is also the zone of `wait.until`.',
  )
  .meta({ id: 'SendingWindow' });
export type SendingWindow = z.infer<typeof sendingWindowSchema>;

// Entry by event (docs/activities.md "Entry by event"): an activity that matches enrolls its
// contact, with every enrollment rule.
export const REENTRY_RULES = ['after_exit', 'never'] as const;
export const entrySchema = z
  .strictObject({
    activity: activityNameSchema.describe('The activity that enrolls its contact.').meta({ example: 'cart_abandoned' }),
    where: whereSchema.optional(),
    reentry: z
      .union([z.enum(REENTRY_RULES), z.strictObject({ after: isoDuration('P30D').describe('Since the previous run started.') })], {
        error: () => 'reentry is "after_exit", "never" or { "after": "<ISO 8601 duration>" }',
      })
      .optional()
      .describe(
        '`after_exit` (the default): again once the previous run has ended; `never`: never a contact that had a run of this ' +
          'sequence by an activity; `{ after }`: again once that long has passed since the previous run started.',
      ),
  })
  .describe('Enrolls the contact of every matching activity while the sequence is active, in the activity\'s transaction.')
  .meta({ id: 'SequenceEntry', example: { activity: 'cart_abandoned', reentry: 'after_exit' } });
export type Entry = z.infer<typeof entrySchema>;

export const goalSchema = z
  .strictObject({
    activity: activityNameSchema.describe('The activity that converts the run.').meta({ example: 'checkout_completed' }),
    where: whereSchema.optional(),
    within: isoDuration('P7D').optional().describe('Only within this long of the run\'s start; absent: any time while it is active.'),
  })
  .describe('A run whose contact has a matching activity completes with reason `goal_met`, wherever it is: a conversion.')
  .meta({ id: 'SequenceGoal', example: { activity: 'order_placed', within: 'P7D' } });
export type Goal = z.infer<typeof goalSchema>;
