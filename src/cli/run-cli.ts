import type { CliSettings } from './cli-settings';
import { dataDirFor, type Config } from '../config';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../services/channels/channel-settings';
import { findSecretsKey } from '../startup/channel-settings';
import { openDatabase, prepareDatabase } from '../db/database';
import { migrateToLatest } from '../db/migrator';
import { AppError } from '../errors/app-errors';
import { lastLocalBaseUrl } from '../services/service-addresses';
import { COMMANDS, type CommandName } from './commands';
import { importsDir } from '../services/imports/imports-dir';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export class UsageError extends Error {}

function synopsis(name: string, command: { usage: string }): string {
  return `${name} ${command.usage}`.trimEnd();
}

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${synopsis(name, c)}`);
  return ['Usage: npm run -s cli -- <command> [--flag value ...]', 'Commands:', ...lines].join('\n');
}

// --flag value pairs; every flag takes a value, and none may repeat.
export function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i];
    const value = args[i + 1];
    if (!flag.startsWith('--') || flag.length < 3) throw new UsageError(`unexpected argument "${flag}"`);
    const key = flag.slice(2);
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    if (key in flags) throw new UsageError(`${flag} given twice`);
    flags[key] = value;
  }
  return flags;
}

// Returns the exit code: 0 done, 2 bad arguments (nothing written), 1 anything else.
export async function runCli(
  argv: string[],
  config: Pick<Config, 'databaseUrl'> &
    Partial<Pick<Config, 'publicBaseUrl' | 'publicOrigin' | 'webhookAllowInsecure' | 'dataDir' | 'secretsKey' | 'channels'>>,
  io: CliIo,
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) return fail(io, 'no command given (npm run -s cli -- --help lists them)', 2);
  if (name === '--help' || name === 'help') {
    io.stdout(`${usage()}\n`);
    return 0;
  }
  const command = COMMANDS[name as CommandName];
  if (!command) return fail(io, `unknown command "${name}" (npm run -s cli -- --help lists them)`, 2);

  let raw: Record<string, string>;
  try {
    // A command may take one argument before its flags (contacts:import FILE).
    const positional = (command as { positional?: string }).positional;
    const [first, ...flags] = rest;
    raw = positional && first !== undefined && !first.startsWith('--') ? { ...parseFlags(flags), [positional]: first } : parseFlags(rest);
  } catch (error) {
    if (error instanceof UsageError) return fail(io, `${error.message} (usage: ${synopsis(name, command)})`, 2);
    throw error;
  }
  const known = Object.keys((command.flags as unknown as { shape: object }).shape);
  const unknown = Object.keys(raw).find((flag) => !known.includes(flag));
  if (unknown) return fail(io, `unknown flag --${unknown} (usage: ${synopsis(name, command)})`, 2);
  const parsed = command.flags.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = String(issue.path[0]);
    const message = flag in raw ? issue.message : 'is required';
    return fail(io, `--${flag}: ${message} (usage: ${synopsis(name, command)})`, 2);
  }

  const db = openDatabase(config.databaseUrl);
  let channels: ChannelSettings | undefined;
  try {
    await prepareDatabase(db);
    await migrateToLatest(db);
    const settings: CliSettings = {
      // PUBLIC_BASE_URL when set; else where the service's last start said it was, since this
      // shell's PORT need not be the server's.
      publicBaseUrl: config.publicOrigin
        ? config.publicBaseUrl!
        : ((await lastLocalBaseUrl(db)) ?? config.publicBaseUrl ?? 'http://localhost:3000'),
      webhooks: { allowInsecure: config.webhookAllowInsecure ?? false, now: () => new Date() },
      channels: () => (channels ??= cliChannelSettings(config)),
      importsDir: importsDir(config.dataDir ?? dataDirFor(undefined, config.databaseUrl)),
    };
    const result = await (command.run as (db: unknown, flags: unknown, s: unknown) => Promise<unknown>)(db, parsed.data, settings);
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof AppError) return fail(io, error.message, 2);
    return fail(io, `failed: ${error instanceof Error ? error.message : String(error)}`, 1);
  } finally {
    await db.close();
  }
}

function cliChannelSettings(config: Parameters<typeof runCli>[1]): ChannelSettings {
  const secrets = findSecretsKey({ ...config, dataDir: config.dataDir ?? dataDirFor(undefined, config.databaseUrl) });
  return { ...DEFAULT_CHANNEL_SETTINGS, ...config.channels, secrets, publicBaseUrl: config.publicBaseUrl ?? DEFAULT_CHANNEL_SETTINGS.publicBaseUrl };
}

function fail(io: CliIo, message: string, code: number): number {
  io.stderr(`error: ${message}\n`);
  return code;
}
