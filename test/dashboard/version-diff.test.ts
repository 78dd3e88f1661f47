import { expect } from 'chai';
import { diffVersions } from '../../web/src/pages/sequences/builder/version-diff';
import { claimsError } from '../../web/src/pages/sequences/builder/error-claims';
import { canonical, cleaned, duplicate, errorsOfStep, freeId, move, toRows } from '../../web/src/pages/sequences/builder/model';

// The builder's pure parts: the difference between two versions' steps, and the working copy's
// edits (ids, duplicate, reorder, what is sent, which errors belong to which step).

const wait = { id: 'wait', type: 'wait', duration: 'P1D' };
const hello = { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' };
const done = { id: 'done', type: 'exit' };

describe('the builder\'s version diff and working copy', () => {
  it('names the steps added, removed, changed (with the fields) and moved, by id', () => {
    const after = [{ ...hello, subject: 'Hi again' }, { id: 'nudge', type: 'wait', duration: 'PT2H' }, done];
    const diff = diffVersions([wait, hello, done], after);
    expect(diff.added.map((s) => s.id)).to.deep.equal(['nudge']);
    expect(diff.removed.map((s) => s.id)).to.deep.equal(['wait']);
    expect(diff.changed.map((c) => [c.id, c.fields])).to.deep.equal([['hello', ['subject']]]);
    // An insertion or a removal moves nothing that kept its order.
    expect(diff.moved).to.deep.equal([]);
    expect(diff.unchanged).to.equal(1);
  });

  it('sees a reorder as a move, and the same steps in another key order as no change', () => {
    const diff = diffVersions([wait, hello, done], [hello, { duration: 'P1D', type: 'wait', id: 'wait' }, done]);
    expect(diff.changed).to.deep.equal([]);
    expect(diff.moved.map((m) => m.id).sort()).to.deep.equal(['hello', 'wait']);
    expect(diffVersions([wait, done], [wait, done])).to.deep.equal({ added: [], removed: [], changed: [], moved: [], unchanged: 2 });
  });

  it('duplicates with a free id, reorders, leaves empty optional texts out and files errors by step', () => {
    const rows = toRows([wait, hello, done] as never);
    const copied = duplicate(rows, 1);
    expect(copied.map((r) => r.step.id)).to.deep.equal(['wait', 'hello', 'hello-copy', 'done']);
    expect(duplicate(copied, 1).map((r) => r.step.id)).to.include('hello-copy-2');
    expect(move(rows, 0, 1).map((r) => r.step.id)).to.deep.equal(['hello', 'wait', 'done']);
    expect(move(rows, 0, -1).map((r) => r.step.id)).to.deep.equal(['wait', 'hello', 'done']);
    expect(freeId('email', new Set(['email', 'email-2']))).to.equal('email-3');
    expect(cleaned({ ...hello, text: '', from: '' } as never)).to.deep.equal(hello);
    expect(canonical({ b: 1, a: { d: 1, c: 2 } })).to.equal('{"a":{"c":2,"d":1},"b":1}');
    expect(errorsOfStep({ 'steps.1.subject': 'bad', 'steps.10.html': 'other', 'steps.1': 'whole', exitWhen: 'x' }, 1)).to.deep.equal({ subject: 'bad', '': 'whole' });
  });

  it('shows an error at the field that holds it, and above the form when no field does', () => {
    const whatsapp = {
      id: 'w',
      type: 'whatsapp',
      template: { name: 'x', language: { code: 'en' }, components: [{ type: 'header', parameters: [{ type: 'text', text: 'a' }] }, { type: 'body', parameters: [{ type: 'text', text: 'b' }] }] },
    } as never;
    expect(claimsError(whatsapp, 'template.components.1.parameters.0.text')).to.equal(true);
    expect(claimsError(whatsapp, 'template.components.0.parameters.0.text')).to.equal(false);
    expect(claimsError(whatsapp, 'template.name')).to.equal(true);
    expect(claimsError({ id: 'e', type: 'email', subject: 's', html: 'h' } as never, 'subject')).to.equal(true);
    expect(claimsError({ id: 's', type: 'sms' } as never, 'type')).to.equal(false);
    expect(claimsError({ id: 'b', type: 'branch', if: { tag: 'x' }, then: 'a', else: 'b' } as never, 'then')).to.equal(true);
    expect(claimsError({ id: 'b', type: 'branch', if: { tag: 'x' }, then: 'a', else: 'b' } as never, 'type')).to.equal(false);
  });
});
