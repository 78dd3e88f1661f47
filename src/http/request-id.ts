import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import './express-types';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

// A caller's X-Request-Id is kept when it is harmless in logs; otherwise a new one is made.
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  req.id = given && SAFE_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.id);
  next();
};
