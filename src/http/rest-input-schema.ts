import type { AnyTRPCProcedure } from '@trpc/server';

// What a REST request's input needs from a procedure's zod input schema, read as
// trpc-to-openapi reads it (its OpenAPI document describes the same parameters): whether the
// procedure takes input at all, which object fields take arrays (a query parameter given once
// arrives as a plain string), and the coercion marks that let a query string's "5" be a number.

interface ZodLike {
  _zod: { def: ZodDef };
  shape?: Record<string, ZodLike>;
}

interface ZodDef {
  type: string;
  coerce?: boolean;
  innerType?: ZodLike;
  element?: ZodLike;
  getter?: () => ZodLike;
  in?: ZodLike;
  out?: ZodLike;
  shape?: Record<string, ZodLike>;
}

export interface RestInputSchema {
  // z.void() and the like: the procedure is called with undefined.
  takesNoInput: boolean;
  arrayFields: string[];
  // Sets the coercion marks, on the first REST request for the procedure, as the adapter this
  // replaces did. The marks are on the shared schema objects, so the tRPC transport coerces
  // those fields too from then on (unchanged behaviour, kept on purpose).
  markCoercible: () => void;
}

const kind = (type: ZodLike | undefined): string | undefined => type?._zod?.def?.type;

// A wrapper's inner schema, as trpc-to-openapi's unwrapZodType: through arrays, nullables,
// optionals, defaults, prefaults and lazies; an enum reads as a string; with throughPipes, a
// pipe reads as its input (a transform) or its output (a preprocess).
function unwrap(type: ZodLike, throughPipes: boolean): ZodLike {
  const def = type._zod?.def;
  switch (def?.type) {
    case 'array':
      return unwrap(def.element!, throughPipes);
    case 'nullable':
    case 'optional':
    case 'default':
    case 'prefault':
      return unwrap(def.innerType!, throughPipes);
    case 'lazy':
      return unwrap(def.getter!(), throughPipes);
    case 'pipe':
      if (!throughPipes) return type;
      return unwrap(kind(def.out) === 'transform' ? def.in! : def.out!, throughPipes);
    default:
      return type;
  }
}

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);

function markCoercible(object: ZodLike): void {
  for (const field of Object.values(shapeOf(object))) {
    const inner = unwrap(field, false);
    const type = kind(inner);
    if (type && COERCIBLE.has(type)) inner._zod.def.coerce = true;
    else if (type === 'object') markCoercible(inner);
  }
}

function shapeOf(object: ZodLike): Record<string, ZodLike> {
  return object.shape ?? object._zod.def.shape ?? {};
}

export function restInputSchema(procedure: AnyTRPCProcedure): RestInputSchema {
  const inputs = (procedure._def as unknown as { inputs: ZodLike[] }).inputs;
  // Several .input() calls merge into one object (trpc-to-openapi merges them the same way).
  const parts = inputs.length === 0 ? [] : inputs.map((input) => unwrap(input, true));
  const objects = parts.filter((part) => kind(part) === 'object');
  const takesNoInput = parts.length === 1 && ['void', 'undefined', 'never'].includes(kind(parts[0]) ?? '');
  // No .input() at all reads as an empty object; a single non-object input (none here) is
  // passed as it is, without array fields or coercion.
  const isObject = parts.length === 0 || objects.length === parts.length;
  const arrayFields: string[] = [];
  if (isObject) {
    for (const object of objects) {
      for (const [name, field] of Object.entries(shapeOf(object))) {
        const type = kind(field);
        if (type === 'array' || (type === 'optional' && kind(field._zod.def.innerType) === 'array')) arrayFields.push(name);
      }
    }
  }
  let marked = !isObject;
  return {
    takesNoInput,
    arrayFields,
    markCoercible: () => {
      if (marked) return;
      marked = true;
      for (const object of objects) markCoercible(object);
    },
  };
}
