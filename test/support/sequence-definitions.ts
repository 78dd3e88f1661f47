import { randomUUID } from 'node:crypto';
import { select } from '../../src/db/sql/statements';
import { SequenceEngine } from '../../src/services/engine/engine';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { silentLogger } from './app';
import { testDb } from './db';
import { buildAccount } from './factories';
import { manualTimers } from './manual-timers';

// What the sequence-definition suites share (test/procedures/sequence-definitions.test.ts over
// createCaller, test/http/sequence-definitions.test.ts over REST): the bad definitions and the
// path each must be refused at, row counts, and an engine on a clock the test moves.

export interface BadDefinition {
  what: string;
  // The definition fields (steps, sendingWindow, ...), without the name.
  body: Record<string, unknown>;
  // The path of the first detail of the 400, and what its message must say.
  path: string;
  message: RegExp;
}

const exit = { id: 'end', type: 'exit' };
const branch = (then: string, otherwise: string, id = 'b') => ({ id, type: 'branch', if: { tag: 'vip' }, then, else: otherwise });
const wait = (duration: string) => ({ body: { steps: [{ id: 'mark', type: 'tag', add: ['x'] }, { id: 'w', type: 'wait', duration }] }, path: 'steps.1.duration' });

// Endpoints the webhook cases name: one of another account, made per test (the database is
// emptied before each).
export async function badDefinitions(): Promise<BadDefinition[]> {
  const other = await buildAccount();
  const { webhook } = await createWebhook(
    testDb(),
    { accountId: other.id, url: 'http://127.0.0.1:9/hook' },
    { allowInsecure: true, now: () => new Date() },
  );
  const hook = (endpointId: string) => ({ steps: [{ id: 'h', type: 'webhook', endpointId }] });
  return [
    { what: 'an unknown step type', body: { steps: [{ type: 'sms' }] }, path: 'steps.0.type', message: /Invalid discriminator value/ },
    { what: 'a duplicate step id', body: { steps: [{ id: 'a', type: 'tag', add: ['x'] }, { id: 'a', type: 'exit' }] }, path: 'steps.1.id', message: /"a" is used by step 1 too/ },
    { what: 'a branch then to an unknown id', body: { steps: [branch('nowhere', 'end'), exit] }, path: 'steps.0.then', message: /"nowhere" is not a step of this sequence/ },
    { what: 'a branch else to an unknown id', body: { steps: [branch('end', 'nowhere'), exit] }, path: 'steps.0.else', message: /"nowhere" is not a step of this sequence/ },
    {
      what: 'a branch back to itself (a cycle with no wait)',
      body: { steps: [branch('b', 'end'), exit] },
      path: 'steps.0.then',
      message: /^Step "b": its then goes back to itself, closing the cycle "b" -> "b" with no wait step on it$/,
    },
    {
      what: 'a -> b -> a with no wait',
      body: { steps: [{ id: 'a', type: 'tag', add: ['x'] }, branch('a', 'end'), exit] },
      path: 'steps.1.then',
      message: /^Step "b": its then goes back to step "a", closing the cycle "a" -> "b" -> "a" with no wait step on it$/,
    },
    { what: 'a duration of PT0S', ...wait('PT0S'), message: /at least 1 second/ },
    { what: 'a duration of P2Y', ...wait('P2Y'), message: /more than 366 days/ },
    { what: 'a duration of PT-1H', ...wait('PT-1H'), message: /negative/ },
    { what: 'a duration of "2 hours"', ...wait('2 hours'), message: /not an ISO 8601 duration/ },
    { what: 'a wait with both duration and until', body: { steps: [{ type: 'wait', duration: 'PT1H', until: { time: '09:00' } }] }, path: 'steps.0.duration', message: /exactly one of duration and until/ },
    { what: 'a wait with neither duration nor until', body: { steps: [{ type: 'wait' }] }, path: 'steps.0.duration', message: /exactly one of duration and until/ },
    { what: 'a wait until 25:00', body: { steps: [{ type: 'wait', until: { time: '25:00' } }] }, path: 'steps.0.until.time', message: /HH:MM/ },
    { what: 'a sending window in Mars/Olympus', body: { sendingWindow: { timeZone: 'Mars/Olympus' } }, path: 'sendingWindow.timeZone', message: /"Mars\/Olympus" is not an IANA time zone/ },
    { what: 'a sending window from 17:00 to 09:00', body: { sendingWindow: { timeZone: 'UTC', from: '17:00', to: '09:00' } }, path: 'sendingWindow.to', message: /must be later than from/ },
    { what: 'a sending window from 09:00 to 09:00', body: { sendingWindow: { timeZone: 'UTC', from: '09:00', to: '09:00' } }, path: 'sendingWindow.to', message: /must be later than from/ },
    { what: 'a tag step with no tags', body: { steps: [{ id: 't', type: 'tag' }] }, path: 'steps.0.add', message: /at least one tag/ },
    { what: 'a tag step with empty add and remove', body: { steps: [{ id: 't', type: 'tag', add: [], remove: [] }] }, path: 'steps.0.add', message: /at least one tag/ },
    { what: 'a webhook endpointId that is not a UUID', body: hook('not-a-uuid'), path: 'steps.0.endpointId', message: /"not-a-uuid" is not a webhook endpoint of the account/ },
    { what: 'a webhook endpointId that does not exist', body: hook(randomUUID()), path: 'steps.0.endpointId', message: /is not a webhook endpoint of the account/ },
    { what: 'a webhook endpointId of another account', body: hook(webhook.id), path: 'steps.0.endpointId', message: /is not a webhook endpoint of the account/ },
    { what: '101 steps', body: { steps: Array.from({ length: 101 }, () => ({ type: 'exit' })) }, path: 'steps', message: /At most 100 steps/ },
    { what: 'an unknown field in a step', body: { steps: [{ type: 'exit', colour: 'red' }] }, path: 'steps.0.colour', message: /Unknown field$/ },
    { what: 'an unknown field in the sending window', body: { sendingWindow: { timeZone: 'UTC', zone: 'UTC' } }, path: 'sendingWindow.zone', message: /Unknown field/ },
    { what: 'a webhook payload over 16 KiB', body: { steps: [{ type: 'webhook', endpointId: randomUUID(), payload: { blob: 'x'.repeat(17_000) } }] }, path: 'steps.0.payload', message: /at most 16 KiB/ },
    { what: 'a wait until on no weekday', body: { steps: [{ type: 'wait', until: { time: '09:00', weekdays: [] } }] }, path: 'steps.0.until.weekdays', message: /at least one weekday/ },
    {
      what: 'a branch on an unknown condition',
      body: { steps: [{ id: 'b', type: 'branch', if: { colour: 'red' }, then: 'b2', else: 'b2' }, { id: 'b2', type: 'exit' }] },
      path: 'steps.0.if',
      message: /A condition is one of \{ "tag": "…" \}, .*, \{ "channel": "email" or "whatsapp", "status": "subscribed" or "unsubscribed" \} or, on the run's trigger, \{ "property": "…" \} with one of equals, in, exists, gt, gte, lt or lte; got an object with "colour"$/,
    },
    {
      what: 'an unknown exit rule',
      body: { exitWhen: [{ bounced: 'email' }] },
      path: 'exitWhen.0',
      message: /An exit rule is \{ "tag": "…" \} or \{ "unsubscribed": "email" or "whatsapp" \}; got an object with "bounced"$/,
    },
    { what: 'a window on a weekday twice', body: { sendingWindow: { timeZone: 'UTC', weekdays: ['sat', 'sat'] } }, path: 'sendingWindow.weekdays.1', message: /"sat" is listed twice: name each weekday once$/ },
    { what: 'a wait until on a weekday twice', body: { steps: [{ type: 'wait', until: { time: '09:00', weekdays: ['mon', 'sat', 'mon'] } }] }, path: 'steps.0.until.weekdays.2', message: /"mon" is listed twice: name each weekday once$/ },
    { what: 'a tag step with no tags and no id', body: { steps: [{ id: 'w', type: 'wait', duration: 'PT1H' }, { type: 'tag' }] }, path: 'steps.1.add', message: /^Step 2 \(tag\): give at least one tag to add or remove$/ },
    { what: 'a step id with a space', body: { steps: [{ id: 'my step', type: 'exit' }] }, path: 'steps.0.id', message: /letters, digits/ },
    { what: 'steps that are not an array', body: { steps: { type: 'exit' } }, path: 'steps', message: /expected array/ },
    { what: 'a step that is not an object', body: { steps: ['exit'] }, path: 'steps.0', message: /./ },
    ...messageStepCases(),
    ...activityStepCases(),
  ];
}

// wait_for and split steps, and the sequence's entry and goal (docs/sequences.md, docs/activities.md).
const waitFor = (fields: Record<string, unknown>) => ({ id: 'wf', type: 'wait_for', activity: 'checkout_completed', timeout: 'PT3H', onTimeout: 'end', next: 'end', ...fields });
const split = (variants: unknown) => ({ id: 'sp', type: 'split', variants });

function activityStepCases(): BadDefinition[] {
  return [
    { what: 'a wait_for onTimeout to an unknown id', body: { steps: [waitFor({ onTimeout: 'nowhere' }), exit] }, path: 'steps.0.onTimeout', message: /"nowhere" is not a step of this sequence/ },
    { what: 'a wait_for next to an unknown id', body: { steps: [waitFor({ next: 'nowhere' }), exit] }, path: 'steps.0.next', message: /"nowhere" is not a step of this sequence/ },
    { what: 'a wait_for timeout of PT0S', body: { steps: [waitFor({ timeout: 'PT0S' }), exit] }, path: 'steps.0.timeout', message: /at least 1 second/ },
    { what: 'a wait_for timeout of P400D', body: { steps: [waitFor({ timeout: 'P400D' }), exit] }, path: 'steps.0.timeout', message: /more than 366 days/ },
    { what: 'a wait_for with no onTimeout', body: { steps: [waitFor({ onTimeout: undefined }), exit] }, path: 'steps.0.onTimeout', message: /./ },
    { what: 'a last wait_for with no next', body: { steps: [exit, waitFor({ next: undefined })] }, path: 'steps.1.next', message: /the last step needs a `next`/ },
    { what: 'a wait_for match that does not parse', body: { steps: [waitFor({ match: { cartId: '{{ trigger.properties.cartId ' } }), exit] }, path: 'steps.0.match.cartId', message: /match.cartId does not parse/ },
    { what: 'a wait_for match value that is an object', body: { steps: [waitFor({ match: { cartId: { a: 1 } } }), exit] }, path: 'steps.0.match.cartId', message: /./ },
    { what: 'a wait_for with an empty activity', body: { steps: [waitFor({ activity: '' }), exit] }, path: 'steps.0.activity', message: /Must not be empty/ },
    { what: 'a split with one variant', body: { steps: [split([{ id: 'a', weight: 1, next: 'end' }]), exit] }, path: 'steps.0.variants', message: /at least two variants/ },
    { what: 'a split variant named twice', body: { steps: [split([{ id: 'a', weight: 1, next: 'end' }, { id: 'a', weight: 2, next: 'end' }]), exit] }, path: 'steps.0.variants.1.id', message: /variant "a" is named twice/ },
    { what: 'a split variant to an unknown id', body: { steps: [split([{ id: 'a', weight: 1, next: 'end' }, { id: 'b', weight: 2, next: 'nowhere' }]), exit] }, path: 'steps.0.variants.1.next', message: /"nowhere" is not a step of this sequence/ },
    { what: 'a split weight of 0', body: { steps: [split([{ id: 'a', weight: 0, next: 'end' }, { id: 'b', weight: 2, next: 'end' }]), exit] }, path: 'steps.0.variants.0.weight', message: /at least 1/ },
    { what: 'a split weight of 1.5', body: { steps: [split([{ id: 'a', weight: 1.5, next: 'end' }, { id: 'b', weight: 2, next: 'end' }]), exit] }, path: 'steps.0.variants.0.weight', message: /whole number/ },
    {
      what: 'a split back to itself (a cycle with no wait)',
      body: { steps: [split([{ id: 'a', weight: 1, next: 'sp' }, { id: 'b', weight: 1, next: 'end' }]), exit] },
      path: 'steps.0.variants.0.next',
      message: /^Step "sp": its variant "a" goes back to itself/,
    },
    { what: 'a branch on a property with two operators', body: { steps: [{ id: 'b', type: 'branch', if: { property: 'total', gt: 1, lt: 5 }, then: 'end', else: 'end' }, exit] }, path: 'steps.0.if', message: /on the run's trigger, \{ "property": "…" \} with one of equals/ },
    { what: 'an entry with no activity', body: { entry: { where: [] } }, path: 'entry.activity', message: /./ },
    { what: 'an entry reentry that is not a rule', body: { entry: { activity: 'x', reentry: 'always' } }, path: 'entry.reentry', message: /reentry is "after_exit", "never" or \{ "after"/ },
    { what: 'an entry reentry.after of "soon"', body: { entry: { activity: 'x', reentry: { after: 'soon' } } }, path: 'entry.reentry.after', message: /not an ISO 8601 duration/ },
    { what: 'an entry where of an unknown shape', body: { entry: { activity: 'x', where: [{ field: 'total', equals: 1 }] } }, path: 'entry.where.0', message: /A property condition is/ },
    { what: 'a goal within of P2Y', body: { goal: { activity: 'order_placed', within: 'P2Y' } }, path: 'goal.within', message: /more than 366 days/ },
    { what: 'a goal with an unknown field', body: { goal: { activity: 'order_placed', by: 'P1D' } }, path: 'goal.by', message: /Unknown field/ },
  ];
}

// Email and WhatsApp steps (docs/templates.md): the shape, and templates that do not parse,
// named by the step, the field and the line.
const mail = (fields: Record<string, unknown>, id?: string) => ({ ...(id ? { id } : {}), type: 'email', subject: 'Hi', html: '<p>Hi</p>', ...fields });
const chat = (template: Record<string, unknown>) => ({ type: 'whatsapp', template: { name: 'welcome', language: { code: 'en_US' }, ...template } });
const body = (...texts: string[]) => ({ type: 'body', parameters: texts.map((text) => ({ type: 'text', text })) });

function messageStepCases(): BadDefinition[] {
  return [
    {
      what: 'an html template unclosed on line 3',
      body: { steps: [{ id: 'w', type: 'wait', duration: 'P1D' }, mail({ html: '<p>Hello,</p>\n<p>\n{{ contact.firstName </p>' }, 'welcome')] },
      path: 'steps.1.html',
      message: /^Step "welcome": html does not parse: line 3, column 1: output "\{\{ contact.firstName <\/p>" not closed$/,
    },
    {
      what: 'a subject with an unknown filter',
      body: { steps: [mail({ subject: 'Hi {{ contact.firstName | shout }}' })] },
      path: 'steps.0.subject',
      message: /^Step 1 \(email\): subject does not parse: line 1, column 4: undefined filter: shout$/,
    },
    { what: 'a text template with an unclosed if', body: { steps: [mail({ text: 'Hi\n{% if contact.firstName %}there' })] }, path: 'steps.0.text', message: /^Step 1 \(email\): text does not parse: line 2, column 1: tag \{% if contact.firstName %\} not closed$/ },
    { what: 'an include tag', body: { steps: [mail({ html: '{% include "secrets.txt" %}' })] }, path: 'steps.0.html', message: /line 1, column 1: the include tag is not available in message templates$/ },
    {
      what: 'a whatsapp parameter that does not parse',
      body: { steps: [{ ...chat({ components: [body('{{ contact.firstName }}'), body('ok', 'Hi {{ contact.firstName | | }}')] }), id: 'wa' }] },
      path: 'steps.0.template.components.1.parameters.1.text',
      message: /^Step "wa": template.components.1.parameters.1.text does not parse: line 1, column \d+: /,
    },
    { what: 'an email with no html', body: { steps: [{ type: 'email', subject: 'Hi' }] }, path: 'steps.0.html', message: /expected string, received undefined/ },
    { what: 'an empty subject', body: { steps: [mail({ subject: '' })] }, path: 'steps.0.subject', message: /The subject must not be empty/ },
    { what: 'a subject over 998 characters', body: { steps: [mail({ subject: 'x'.repeat(999) })] }, path: 'steps.0.subject', message: /at most 998 characters/ },
    { what: 'an html over 100 KiB', body: { steps: [mail({ html: 'x'.repeat(100 * 1024 + 1) })] }, path: 'steps.0.html', message: /at most 102400 characters/ },
    { what: 'a from that is no address', body: { steps: [mail({ from: 'Shop' })] }, path: 'steps.0.from', message: /Must be an email address/ },
    { what: 'a replyTo with a line break', body: { steps: [mail({ replyTo: 'a@example.com\r\nBcc: b@example.com' })] }, path: 'steps.0.replyTo', message: /Must be an email address/ },
    { what: 'an unknown field in an email step', body: { steps: [mail({ cc: 'a@example.com' })] }, path: 'steps.0.cc', message: /Unknown field/ },
    { what: 'a whatsapp language as a string', body: { steps: [chat({ language: 'en_US' })] }, path: 'steps.0.template.language', message: /\{ "code": "en_US" \}/ },
    { what: 'a whatsapp template name in capitals', body: { steps: [chat({ name: 'Welcome' })] }, path: 'steps.0.template.name', message: /lower-case letters, digits or _/ },
    {
      what: 'a whatsapp image parameter',
      body: { steps: [chat({ components: [{ type: 'header', parameters: [{ type: 'image', image: { link: 'https://x.example/a.png' } }] }] })] },
      path: 'steps.0.template.components.0.parameters.0.type',
      message: /Only parameters of type "text" are supported/,
    },
    { what: 'a whatsapp footer component', body: { steps: [chat({ components: [{ type: 'footer', parameters: [{ type: 'text', text: 'x' }] }] })] }, path: 'steps.0.template.components.0.type', message: /Expected 'header' \| 'body' \| 'button'/ },
    { what: 'a whatsapp button with no sub_type', body: { steps: [chat({ components: [{ type: 'button', index: '0', parameters: [{ type: 'text', text: 'x' }] }] })] }, path: 'steps.0.template.components.0.sub_type', message: /expected "url"/ },
    { what: 'a whatsapp component with no parameters', body: { steps: [chat({ components: [{ type: 'body', parameters: [] }] })] }, path: 'steps.0.template.components.0.parameters', message: /at least one parameter/ },
  ];
}

export interface DefinitionRows {
  sequences: number;
  versions: number;
}

export async function definitionRows(): Promise<DefinitionRows> {
  const count = async (table: string) => Number((await select<{ n: number | string }>(testDb(), `SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n);
  return { sequences: await count('sequences'), versions: await count('sequence_versions') };
}

// The stored versions of a sequence, oldest first.
export async function storedVersions(sequenceId: string): Promise<Array<{ version: number; steps: unknown }>> {
  const rows = await select<{ version: number | string; steps: string }>(
    testDb(),
    'SELECT version, steps FROM sequence_versions WHERE sequence_id = ? ORDER BY version',
    [sequenceId],
  );
  return rows.map((row) => ({ version: Number(row.version), steps: JSON.parse(row.steps) }));
}

// An engine on a clock the test moves, a moment after now (runs enrolled now are due).
export function engineNow() {
  const clock = manualTimers(Date.now() + 1);
  const engine = new SequenceEngine(testDb(), {
    logger: silentLogger,
    timers: clock.timers,
    webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 },
  });
  return { engine, advance: (ms: number) => clock.advance(ms) };
}
