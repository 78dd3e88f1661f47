// @trpc/server's declarations import 'ws' for its WebSocket adapter; an app that does not use
// it and has no @types/ws declares the two names they use, as here (skipLibCheck stays off).
declare module 'ws' {
  namespace ws {
    interface WebSocket {}
    interface WebSocketServer {}
  }
  const ws: unknown;
  export = ws;
}
