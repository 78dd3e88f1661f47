import type { NextFunction, Request, RequestHandler, Response } from 'express';

// Handlers run one after another as one Express layer, with the semantics they would have as
// layers of their own (Express 5's Layer#handleRequest): next() runs the next one, next(error)
// or a throw or a rejected promise skips to the error handlers, and a handler that answers
// simply never calls next. Mounted one by one under a path, each handler would cost a match
// of the mount path and a rewrite of req.url and req.baseUrl, there and back: the API's eleven
// handlers did that eleven times per request, for the same mount.
export function chain(handlers: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next: NextFunction = (error?: unknown) => {
      if (error) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        const result = handler(req, res, next) as unknown;
        if (result instanceof Promise) result.then(undefined, (rejection: unknown) => next(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };
}
