import { preview } from './assertions.ts';

/** Driver codes of a unique-key (primary-key) violation: Postgres, MySQL/MariaDB, SQLite. */
const UNIQUE_CODES = new Set<unknown>([
  '23505',
  'ER_DUP_ENTRY',
  1062,
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
  1555,
  2067,
]);
const UNIQUE_MESSAGE = /duplicate key|unique constraint|Duplicate entry|UNIQUE constraint failed/i;

/** Whether an append failed on the database's unique key rather than on the store's own seq check. */
export function isUniqueKeyError(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown; errcode?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return typeof error === 'string' && UNIQUE_MESSAGE.test(error);
  return (
    UNIQUE_CODES.has(e.code) ||
    UNIQUE_CODES.has(e.errno) ||
    UNIQUE_CODES.has(e.errcode) ||
    (typeof e.message === 'string' && UNIQUE_MESSAGE.test(e.message))
  );
}

/** An error in one line: its name, code and the first line of its message — never a driver's whole object. */
export function briefError(error: unknown): string {
  if (!(error instanceof Error)) return preview(error, 200);
  const code = (error as { code?: unknown }).code;
  const first = error.message.split('\n')[0] ?? '';
  return `${error.name}${code === undefined ? '' : ` (code ${String(code)})`}: ${first.length > 200 ? `${first.slice(0, 200)}…` : first}`;
}

/** The two mistakes behind a raw unique-key error where a racing append expected SeqConflictError. */
export const UNIQUE_RACE_CAUSE =
  "the database's unique key on (session, seq) caught a race the store's own check missed, so two appends read the same head and both went on to insert. Likely causes: the head is checked outside the write transaction, or inside a READ COMMITTED transaction without a row lock (SELECT … FOR UPDATE). Check and write in one transaction that holds the session row (SELECT … FOR UPDATE, BEGIN IMMEDIATE, or an UPDATE … WHERE head_seq = expectedSeq whose row count decides), and report a conflict as SeqConflictError";

/** What to say when a racing append failed with something other than SeqConflictError. */
export function lostRaceMessage(who: string, error: unknown): string {
  if (isUniqueKeyError(error)) {
    return `${who} failed with the database's unique-key error (${briefError(error)}), not SeqConflictError — ${UNIQUE_RACE_CAUSE}`;
  }
  return `${who} failed with ${briefError(error)}; expected SeqConflictError`;
}
