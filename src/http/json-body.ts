import express, { type RequestHandler } from 'express';
import { nestsDeeperThan } from '../schemas/text';
import { sendError, type HttpLayerError } from './send-error';

export const BODY_LIMIT = '1mb';
// Deeper than anything the API takes (customFields inside a batch item is 19 levels), and
// shallow enough for the recursive code downstream: tRPC serialises the input before any
// validation runs.
const MAX_BODY_DEPTH = 32;

// JSON bodies, up to 1 MiB. express.json accepts `application/json; charset=utf-8`, which the
// REST adapter alone does not. A GET's body is never read: its input is the path and query.
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: BODY_LIMIT });
  return [
    (req, res, next) => (req.method === 'GET' ? next() : parse(req, res, next)),
    (req, res, next) =>
      nestsDeeperThan(req.body, MAX_BODY_DEPTH)
        ? sendError(req, res, validationFailed(`Request body is nested deeper than ${MAX_BODY_DEPTH} levels`))
        : next(),
  ];
}

// REST takes objects only: the adapter would spread an array into the input.
export const requireJsonObject: RequestHandler = (req, res, next) => {
  const body = req.body as unknown;
  if (body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body))) return next();
  sendError(req, res, notAnObject);
};

// A 400 about the request as a whole: its one detail has an empty path.
export function validationFailed(message: string, path = ''): HttpLayerError {
  return { status: 400, code: 'validation_failed', message, details: [{ path, message }] };
}

export const notAnObject = validationFailed('Request body must be a JSON object');
