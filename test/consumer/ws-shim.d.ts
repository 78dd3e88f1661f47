// @trpc/server's declarations import 'ws' for its WebSocket adapter; an app that does not use
// it and has no @types/ws declares the module, as here (skipLibCheck stays off).
declare module 'ws';
