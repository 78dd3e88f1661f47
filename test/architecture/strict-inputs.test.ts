import { expect } from 'chai';
import { appRouter } from '../../src/routers/app-router';
import { editDistance, nearestName } from '../../src/schemas/nearest-name';

// Every input object of the API's procedures (REST and tRPC, outside the dashboard's own
// procedures) is strict, nested ones too: a field it does not know is a 400, never dropped in
// silence (docs/api.md "Requests"). A new procedure with a plain z.object fails here.

interface ZodLike {
  _zod: { def: Record<string, unknown> & { type: string } };
}

function looseObjects(schema: ZodLike | undefined, path: string, found: string[], seen = new Set<unknown>()): string[] {
  if (!schema?._zod || seen.has(schema)) return found;
  seen.add(schema);
  const def = schema._zod.def as Record<string, any> & { type: string };
  const walk = (inner: ZodLike, at = path) => looseObjects(inner, at, found, seen);
  switch (def.type) {
    case 'object':
      if (def.catchall?._zod?.def?.type !== 'never') found.push(path || '(the body)');
      for (const [key, field] of Object.entries(def.shape as Record<string, ZodLike>)) walk(field, path ? `${path}.${key}` : key);
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      walk(def.innerType);
      break;
    case 'array':
      walk(def.element, `${path}[]`);
      break;
    case 'pipe':
      walk(def.in);
      walk(def.out);
      break;
    case 'union':
      for (const option of def.options as ZodLike[]) walk(option);
      break;
    case 'intersection':
      walk(def.left);
      walk(def.right);
      break;
    case 'lazy':
      walk(def.getter());
      break;
    case 'record':
      walk(def.valueType, `${path}{}`);
      break;
  }
  return found;
}

describe('strict input objects', () => {
  const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { inputs: ZodLike[] } }>).filter(
    ([name]) => !name.startsWith('dashboard.'),
  );

  it('reads the procedures and their inputs', () => {
    expect(procedures.length).to.be.greaterThan(50);
    expect(looseObjects({ _zod: { def: { type: 'object', shape: {} } } }, '', [])).to.deep.equal(['(the body)']);
  });

  it('makes every input object of the API strict', () => {
    const loose = procedures.flatMap(([name, procedure]) =>
      procedure._def.inputs.flatMap((input) => looseObjects(input, '', [])).map((path) => `${name}: ${path}`),
    );
    expect(loose).to.deep.equal([]);
  });
});

describe('nearest known name', () => {
  const contactFields = ['email', 'phone', 'firstName', 'lastName', 'tags', 'customFields', 'emailSubscriptionStatus'];

  it('offers the name a typo most likely meant', () => {
    expect(nearestName('firstname', contactFields)).to.equal('firstName');
    expect(nearestName('first_name', contactFields)).to.equal('firstName');
    expect(nearestName('tag', contactFields)).to.equal('tags');
    expect(nearestName('emial', contactFields)).to.equal('email');
    expect(nearestName('custom_field', contactFields)).to.equal('customFields');
  });

  it('offers nothing for a name far from every known one', () => {
    expect(nearestName('favouriteColour', contactFields)).to.equal(undefined);
    expect(nearestName('x', contactFields)).to.equal(undefined);
    expect(nearestName('a'.repeat(10_000), contactFields)).to.equal(undefined);
  });

  it('counts a swap of two neighbours as one edit', () => {
    expect(editDistance('emial', 'email')).to.equal(1);
    expect(editDistance('kitten', 'sitting')).to.equal(3);
    expect(editDistance('', 'abc')).to.equal(3);
  });
});
