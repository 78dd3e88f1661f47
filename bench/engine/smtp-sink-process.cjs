// The email case's SMTP server, in a process of its own (so that its parsing does not share the
// engine's CPU): smtp-server on loopback, no STARTTLS (the engine and the floor pay the same),
// accepting every message. It counts messages and their Message-IDs, and answers the parent's
// 'stats' and 'reset' over IPC. Plain CommonJS: it runs under `node`, without tsx.
const { SMTPServer } = require('smtp-server');

let messages = 0;
let bytes = 0;
let ids = new Map();
let withoutId = 0;

function messageIdOf(head) {
  const match = /^message-id:\s*(<[^>\r\n]+>)/im.exec(head);
  return match ? match[1] : null;
}

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  maxClients: 1000,
  size: 10 * 1024 * 1024,
  onData(stream, _session, callback) {
    let head = '';
    let inHead = true;
    stream.on('data', (chunk) => {
      bytes += chunk.length;
      if (!inHead) return;
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) inHead = false;
    });
    stream.on('end', () => {
      messages += 1;
      const id = messageIdOf(head.split('\r\n\r\n')[0]);
      if (id) ids.set(id, (ids.get(id) || 0) + 1);
      else withoutId += 1;
      callback(null, 'queued');
    });
  },
});

process.on('message', (message) => {
  if (message === 'stats') {
    let duplicated = 0;
    for (const n of ids.values()) if (n > 1) duplicated += 1;
    process.send({ messages, bytes, distinct: ids.size, duplicated, withoutId });
  } else if (message === 'reset') {
    messages = 0;
    bytes = 0;
    ids = new Map();
    withoutId = 0;
    process.send({ reset: true });
  } else if (message === 'close') {
    server.close(() => process.exit(0));
  }
});

server.listen(0, '127.0.0.1', () => process.send({ port: server.server.address().port }));
