import type { Logger } from '../../logging/logger';

// The part of node-redis's client used here.
interface NodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 500;

export class RedisNotAnsweringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisNotAnsweringError';
  }
}

// A Redis client whose commands answer, or fail, within a deadline.
//
// node-redis bounds a command only until it is written: its `timeout` and `abortSignal`
// options stop applying once the command is on the socket. A server that takes the bytes and
// never answers (frozen, SIGSTOP, a stuck host) would hold every request for as long as that
// lasts, since the connection still looks healthy.
//
// Here a command that misses its deadline fails, and the connection is taken as silent: from
// then on commands fail at once instead of piling up on a socket nobody reads (each would
// still run when the server wakes). One PING waits for the server. node-redis matches replies
// to commands in the order they were sent, so when the server wakes, the replies it still owes
// go to the commands that were given up on (and are dropped), the PING's reply comes after
// them, and only then are commands sent again: no late reply is read as a later command's.
// A dropped connection is node-redis's to handle (it reconnects; without an offline queue,
// commands fail at once meanwhile).
export class BoundedRedisClient {
  private silent = false;

  constructor(
    private readonly client: NodeRedisClient,
    private readonly logger: Logger,
    private readonly timeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  ) {}

  async sendCommand(args: string[]): Promise<unknown> {
    if (this.silent) throw new RedisNotAnsweringError('Redis has not answered since a command timed out');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.waitForAnswer();
        reject(new RedisNotAnsweringError(`Redis did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([this.client.sendCommand(args), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  // Graceful (replies still owed are awaited), but never longer than a command may take.
  async close(): Promise<void> {
    const closing = this.client.close().catch(() => undefined);
    const waited = await Promise.race([closing.then(() => true), sleep(this.timeoutMs).then(() => false)]);
    if (!waited) this.client.destroy();
  }

  // The underlying client's events (connection errors while it reconnects).
  on(event: 'error', listener: (error: Error) => void): this {
    this.client.on(event, listener);
    return this;
  }

  destroy(): void {
    this.client.destroy();
  }

  private waitForAnswer() {
    if (this.silent) return;
    this.silent = true;
    this.logger.error({ timeoutMs: this.timeoutMs }, 'redis did not answer in time: rate limits answer 503 until it does');
    this.client
      .sendCommand(['PING'])
      .then(
        () => this.logger.info('redis answers again'),
        // The connection dropped: node-redis reconnects, and fails commands at once meanwhile.
        () => undefined,
      )
      .finally(() => {
        this.silent = false;
      });
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
