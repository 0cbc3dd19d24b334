import { InvalidArgumentError } from '../errors.ts';
import type { DeleteIdleSessionsInput } from './contract.ts';

/** The largest batch one `deleteIdleSessions` call may examine. */
export const MAX_RETENTION_BATCH = 1000;

export interface RetentionRequest {
  /** `idleBefore` normalised by `toISOString()`, so it compares as text with stored timestamps. */
  idleBefore: string;
  idleBeforeMs: number;
  limit: number;
  cursor: string | null;
}

/**
 * Checks a `deleteIdleSessions` input before anything is read or deleted. `idleBefore` must be an
 * ISO-8601 time between years 0 and 9999 (the range whose ISO text sorts in time order).
 */
export function validateRetentionInput(input: DeleteIdleSessionsInput): RetentionRequest {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidArgumentError({ argument: 'input', reason: 'must be an object' });
  }
  const { idleBefore, limit, cursor } = input;
  const ms = typeof idleBefore === 'string' ? Date.parse(idleBefore) : Number.NaN;
  if (!Number.isFinite(ms) || ms < Date.UTC(0, 0, 1) || ms > Date.UTC(9999, 11, 31, 23, 59, 59, 999)) {
    throw new InvalidArgumentError({
      argument: 'idleBefore',
      reason: 'must be an ISO-8601 time between the years 0000 and 9999',
    });
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RETENTION_BATCH) {
    throw new InvalidArgumentError({
      argument: 'limit',
      reason: `must be an integer from 1 to ${MAX_RETENTION_BATCH}`,
    });
  }
  if (cursor !== undefined && cursor !== null && (typeof cursor !== 'string' || cursor.length === 0)) {
    throw new InvalidArgumentError({ argument: 'cursor', reason: 'must be a cursor this store returned' });
  }
  return { idleBefore: new Date(ms).toISOString(), idleBeforeMs: ms, limit, cursor: cursor ?? null };
}

/**
 * Cursor of a sweep ordered by (activity time, session id): both parts in one JSON string,
 * opaque to callers. `null` for anything that is not such a cursor.
 */
export function encodeRetentionCursor(activity: string | number, sessionId: string): string {
  return JSON.stringify([activity, sessionId]);
}

export function decodeRetentionCursor<T extends string | number>(
  cursor: string,
  activityType: 'string' | 'number',
): [T, string] {
  return parseRetentionCursor(
    cursor,
    (parsed): parsed is [T, string] =>
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === activityType &&
      typeof parsed[1] === 'string',
  );
}

/**
 * A store's own sweep cursor (JSON it wrote), checked by `valid`; anything else is an
 * `InvalidArgumentError` naming `cursor`, before the store reads or deletes anything.
 */
export function parseRetentionCursor<T>(cursor: string, valid: (parsed: unknown) => parsed is T): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    parsed = null;
  }
  if (!valid(parsed)) {
    throw new InvalidArgumentError({ argument: 'cursor', reason: 'is not a cursor this store returned' });
  }
  return parsed;
}
