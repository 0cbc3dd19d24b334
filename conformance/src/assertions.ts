import type { LoadResult, MessageRecord } from '@agentstore/core';
import type { CheckContext } from './check.ts';
import type { RawMessageRow, RawSessionRow } from './target.ts';

/** A broken promise of the store under test. */
export class ConformanceViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceViolation';
  }
}

export function violation(message: string): never {
  throw new ConformanceViolation(message);
}

/** JSON for messages, cut short so a 256 KiB payload does not flood the report. */
export function preview(value: unknown, max = 400): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/**
 * Deep equality for JSON-like data: same keys (a key set to undefined is not an absent key),
 * same values, arrays in order. Prototypes are not compared, so rows a driver returns as
 * null-prototype objects equal plain ones.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameData(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && sameData(left[key], right[key]));
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) violation(message);
}

export function assertEqual<T>(actual: T, expected: T, what: string): void {
  if (!sameData(actual, expected)) {
    violation(`${what}: expected ${preview(expected)}, got ${preview(actual)}`);
  }
}

/** Messages must come back exactly: same fields, same values, absent fields absent, in seq order. */
export function assertMessages(actual: MessageRecord[], expected: MessageRecord[], what: string): void {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (!sameData(actual[i], expected[i])) {
      violation(
        `${what}: message #${i + 1} of ${expected.length} expected ${preview(expected[i])}, ` +
          `got ${preview(actual[i])} (${actual.length} messages returned)`,
      );
    }
  }
}

/** The typed error the contract names, matched by its `code` so two copies of core still agree. */
export type StoreError = Error & { code: string } & Record<string, unknown>;

export async function expectStoreError(
  operation: Promise<unknown> | (() => Promise<unknown>),
  code: string,
  what: string,
): Promise<StoreError> {
  let result: unknown;
  try {
    result = await (typeof operation === 'function' ? operation() : operation);
  } catch (error) {
    const actual = (error as { code?: unknown } | null)?.code;
    if (error instanceof Error && actual === code) return error as StoreError;
    violation(
      `${what}: expected an error with code ${code}, got ${error instanceof Error ? `${error.name} (code ${String(actual)}): ${error.message}` : preview(error)}`,
    );
  }
  return violation(`${what}: expected an error with code ${code}, but it resolved with ${preview(result)}`);
}

/** Why a store would report a conflict at the head it reads: its own writes are not atomic. */
export const NOT_ATOMIC_CAUSE =
  'the append is not atomic: its messages and its head move are separate writes, so another reader (or a crash between them) sees messages beyond the head; write both in one transaction or one conditional request';

/**
 * A `SeqConflictError`'s `actualSeq` must be null or the stored head. One equal to the caller's
 * `expectedSeq` means the store refused an append at the head it saw: rows beyond the head.
 */
export function assertConflictHead(error: Record<string, unknown>, head: number, what: string): void {
  if (error.actualSeq === null) return;
  if (error.actualSeq === error.expectedSeq && error.actualSeq !== head) {
    violation(
      `${what}: SeqConflictError says the head is ${String(error.actualSeq)}, which is the expectedSeq it refused — ${NOT_ATOMIC_CAUSE}`,
    );
  }
  assertEqual(error.actualSeq, head, `${what}: SeqConflictError.actualSeq (null or the stored head)`);
}

export function assertFacts(error: StoreError, facts: Record<string, unknown>, what: string): void {
  for (const [key, value] of Object.entries(facts)) {
    assertEqual(error[key], value, `${what}: ${error.name}.${key}`);
  }
}

/** Everything observable about a session: through the store, and through the raw reader when given. */
export interface SessionSnapshot {
  loaded: LoadResult | null;
  rawSession?: RawSessionRow | null;
  rawMessages?: RawMessageRow[];
}

export async function snapshot(ctx: CheckContext, sessionId: string): Promise<SessionSnapshot> {
  const loaded = await ctx.store.load(sessionId);
  const raw = ctx.capabilities.raw;
  if (!raw) return { loaded };
  return { loaded, rawSession: await raw.session(sessionId), rawMessages: await raw.messages(sessionId) };
}

/** A failed write must leave no trace: not in `load`, not in the backend itself. */
export async function assertUnchanged(
  ctx: CheckContext,
  sessionId: string,
  before: SessionSnapshot,
  what: string,
) {
  const after = await snapshot(ctx, sessionId);
  assertEqual(
    after.loaded?.session ?? null,
    before.loaded?.session ?? null,
    `${what}: session after the failed write`,
  );
  assertMessages(
    after.loaded?.messages ?? [],
    before.loaded?.messages ?? [],
    `${what}: messages after the failed write`,
  );
  if (ctx.capabilities.raw) {
    assertEqual(after.rawSession, before.rawSession, `${what}: raw session row after the failed write`);
    assertEqual(after.rawMessages, before.rawMessages, `${what}: raw message rows after the failed write`);
  }
}

/** Seqs 1..head, no gaps or duplicates, every message id once: through `load` and the raw reader. */
export async function assertContiguous(
  ctx: CheckContext,
  sessionId: string,
  what: string,
): Promise<LoadResult> {
  const loaded = await ctx.store.load(sessionId);
  assert(loaded, `${what}: session ${preview(sessionId)} is missing`);
  const check = (rows: { seq: number; id: string }[], source: string, headSeq: number) => {
    rows.forEach((row, i) => {
      assert(row.seq === i + 1, `${what}: ${source} has seq ${row.seq} at position ${i + 1}`);
    });
    assert(
      rows.length === headSeq,
      `${what}: ${source} holds ${rows.length} messages but headSeq is ${headSeq}`,
    );
    const ids = new Set(rows.map((row) => row.id));
    assert(ids.size === rows.length, `${what}: ${source} holds a message id more than once`);
  };
  check(loaded.messages, 'load', loaded.session.headSeq);
  const raw = ctx.capabilities.raw;
  if (raw) {
    const rawSession = await raw.session(sessionId);
    assert(rawSession, `${what}: the raw reader finds no session row`);
    assertEqual(rawSession.headSeq, loaded.session.headSeq, `${what}: raw headSeq vs load`);
    const rows = await raw.messages(sessionId);
    check(rows, 'the raw reader', rawSession.headSeq);
    assertEqual(
      rows.map((row) => row.id),
      loaded.messages.map((m) => m.id),
      `${what}: raw message ids vs load`,
    );
  }
  return loaded;
}
