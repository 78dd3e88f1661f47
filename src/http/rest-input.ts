import type { Request } from 'express';
import { decodeOrKeep } from './url-decode';
import type { RestRoute } from './rest-routes';

type Input = Record<string, unknown>;

// A REST request's input for its procedure, before validation:
// - POST, PUT, PATCH: the JSON body's fields (express.json parsed it);
// - GET: the query, a parameter given once as a one-element array where the field takes an
//   array, and an empty value left out;
// - DELETE: the JSON body when it sent an object (remove tags), else the query as for GET.
// Path parameters are added last, percent-decoded, and win over fields of the same name.
export function restInput(req: Request, route: RestRoute, params: Record<string, string>, takesBody: boolean): Input {
  const body = req.body as unknown;
  let input: Input;
  if (takesBody) input = { ...(body as Input | undefined), ...params };
  else if (req.method === 'DELETE' && isPlainObject(body)) input = { ...body, ...params };
  else {
    input = { ...queryOf(req), ...params };
    for (const name of route.input.arrayFields) {
      if (input[name] !== undefined && !Array.isArray(input[name])) input[name] = [input[name]];
    }
  }
  // A JSON "__proto__" key is an own field after a spread; the adapter this replaced dropped it
  // (its Object.assign set the copy's prototype instead, which its next copy left behind).
  if (Object.hasOwn(input, '__proto__')) delete input.__proto__;
  for (const name of route.parameters) {
    const value = input[name];
    if (typeof value === 'string') input[name] = decodeOrKeep(value);
  }
  return input;
}

function queryOf(req: Request): Input {
  const parsed = req.query as Record<string, unknown>;
  const query: Input = {};
  for (const key of Object.keys(parsed)) {
    const value = parsed[key];
    if (value) query[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  return query;
}

function isPlainObject(value: unknown): value is Input {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
