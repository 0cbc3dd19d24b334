// Flag parsing for the `agentstore` CLI. Every flag is checked before the store is opened, so a
// typo can never reach a write: `Number()` alone reads "" as 0, "abc" as NaN and "0x10" as 16.
import { parseArgs } from 'node:util';
import { MAX_RETENTION_BATCH } from '../store/retention.ts';

/** A mistake in the command line: one line on stderr, exit code 2, no stack. */
export class UsageError extends Error {}

export const COMMANDS = ['inspect', 'sessions', 'retention', 'studio'] as const;
export type Command = (typeof COMMANDS)[number];

const OPTIONS = {
  at: { type: 'string' },
  json: { type: 'boolean' },
  owner: { type: 'string' },
  tenant: { type: 'string' },
  agent: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  'idle-days': { type: 'string' },
  'idle-before': { type: 'string' },
  batch: { type: 'string' },
  'max-batches': { type: 'string' },
  port: { type: 'string' },
  open: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type FlagName = keyof typeof OPTIONS;

/** The flags each command takes; any other is refused rather than silently ignored. */
const ALLOWED: Record<Command, readonly FlagName[]> = {
  inspect: ['at', 'json'],
  sessions: ['owner', 'tenant', 'agent', 'limit', 'cursor', 'json'],
  retention: ['idle-days', 'idle-before', 'batch', 'max-batches', 'cursor', 'json'],
  studio: ['port', 'tenant', 'owner', 'open'],
};

const DAY_MS = 86_400_000;
/** The range whose ISO-8601 text sorts in time order, as stores compare it. */
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

export type ParsedCommand =
  | { command: 'help' }
  | { command: 'inspect'; store: string; sessionId: string; at: number | undefined; json: boolean }
  | {
      command: 'sessions';
      store: string;
      json: boolean;
      limit: number;
      ownerId: string | undefined;
      tenantId: string | undefined;
      agentName: string | undefined;
      cursor: string | null;
    }
  | {
      command: 'studio';
      store: string;
      /** 0: a free port. */
      port: number;
      tenantId: string | undefined;
      ownerId: string | undefined;
      open: boolean;
    }
  | {
      command: 'retention';
      store: string;
      json: boolean;
      idleDays: number | undefined;
      idleBefore: string | undefined;
      batch: number | undefined;
      maxBatches: number | undefined;
      cursor: string | null;
    };

/** A whole number within [min, max], written as plain digits. */
export function wholeNumberFlag(flag: string, text: string, min: number, max: number): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${flag} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  }
  return value;
}

/** A non-negative decimal number of days (e.g. `30`, `0.5`) whose cutoff, counted back from now, is still a date. */
export function daysFlag(flag: string, text: string, nowMs = Date.now()): number {
  const value = /^\d{1,16}(\.\d{1,16})?$/.test(text) ? Number(text) : Number.NaN;
  const max = Math.floor((nowMs - EARLIEST_MS) / DAY_MS);
  if (!Number.isFinite(value) || value > max) {
    throw new UsageError(
      `--${flag} takes a number of days from 0 to ${max} (e.g. 30 or 0.5), not ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** Parses and checks the whole command line; throws `UsageError` on the first mistake. */
export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // node:util's own message names the flag ("Unknown option '--x'"); keep only that line.
    throw new UsageError(String((error as Error).message).split('\n')[0]);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  const [command, store, sessionId, ...extra] = positionals;
  if (command === undefined) throw new UsageError('missing command: inspect, sessions, retention or studio');
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(
      `unknown command ${JSON.stringify(command)}: use inspect, sessions, retention or studio`,
    );
  }
  const cmd = command as Command;
  if (store === undefined)
    throw new UsageError(`${cmd} needs a <store> (a URL, a SQLite path or a store module)`);
  for (const flag of Object.keys(values) as FlagName[]) {
    if (flag !== 'help' && !ALLOWED[cmd].includes(flag)) {
      throw new UsageError(`${cmd} does not take --${flag}`);
    }
  }
  const json = values.json === true;
  const cursor = values.cursor ?? null;
  if (cursor === '') throw new UsageError('--cursor takes the cursor a previous run printed, not ""');
  if (cmd === 'inspect') {
    if (sessionId === undefined) throw new UsageError('inspect needs a <sessionId> after the store');
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    const at =
      values.at === undefined ? undefined : wholeNumberFlag('at', values.at, 0, Number.MAX_SAFE_INTEGER);
    return { command: 'inspect', store, sessionId, at, json };
  }
  if (sessionId !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(sessionId)}`);
  if (cmd === 'sessions') {
    return {
      command: 'sessions',
      store,
      json,
      limit: values.limit === undefined ? 20 : wholeNumberFlag('limit', values.limit, 1, 10_000),
      ownerId: values.owner,
      tenantId: values.tenant,
      agentName: values.agent,
      cursor,
    };
  }
  if (cmd === 'studio') {
    for (const flag of ['tenant', 'owner'] as const) {
      if (values[flag] === '') throw new UsageError(`--${flag} takes an id, not ""`);
    }
    return {
      command: 'studio',
      store,
      port: values.port === undefined ? 0 : wholeNumberFlag('port', values.port, 0, 65_535),
      tenantId: values.tenant,
      ownerId: values.owner,
      open: values.open === true,
    };
  }
  const idleDays = values['idle-days'] === undefined ? undefined : daysFlag('idle-days', values['idle-days']);
  const idleBefore = values['idle-before'];
  if ((idleDays === undefined) === (idleBefore === undefined)) {
    throw new UsageError('retention needs exactly one of --idle-days and --idle-before');
  }
  if (idleBefore !== undefined && !isIsoTime(idleBefore)) {
    throw new UsageError(
      `--idle-before takes an ISO-8601 time between the years 0000 and 9999 (e.g. 2026-01-31T00:00:00Z), not ${JSON.stringify(idleBefore)}`,
    );
  }
  return {
    command: 'retention',
    store,
    json,
    idleDays,
    idleBefore,
    batch:
      values.batch === undefined ? undefined : wholeNumberFlag('batch', values.batch, 1, MAX_RETENTION_BATCH),
    maxBatches:
      values['max-batches'] === undefined
        ? undefined
        : wholeNumberFlag('max-batches', values['max-batches'], 1, Number.MAX_SAFE_INTEGER),
    cursor,
  };
}

function isIsoTime(text: string): boolean {
  // Date.parse alone accepts "1" or "March 7"; a cutoff must be an unambiguous ISO-8601 time.
  if (!/^[+-]?\d{4,6}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return false;
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS;
}
