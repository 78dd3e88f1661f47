import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

// The parent's side of smtp-sink-process.cjs: start it, read its counts, stop it.

export interface SinkStats {
  messages: number;
  bytes: number;
  // Distinct Message-IDs, and how many of them arrived more than once.
  distinct: number;
  duplicated: number;
  withoutId: number;
}

export interface SmtpSink {
  url: string;
  stats(): Promise<SinkStats>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const child = fork(path.join(__dirname, 'smtp-sink-process.cjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port?: number }) => (message.port ? resolve(message.port) : reject(new Error('the SMTP sink did not start'))));
    child.once('exit', (code) => reject(new Error(`the SMTP sink exited with ${code}`)));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    stats: () => ask<SinkStats>(child, 'stats'),
    reset: async () => void (await ask(child, 'reset')),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('close');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

function ask<T>(child: ChildProcess, question: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(question);
  });
}
