import { InvalidArgumentError } from '../errors.ts';
import type { AgentStore } from '../store/contract.ts';
import { MAX_RETENTION_BATCH, validateRetentionInput } from '../store/retention.ts';

export interface RetentionCommandOptions {
  /** ISO-8601 cutoff; or give `idleDays`. */
  idleBefore?: string;
  /** Sessions idle for at least this many days (from now). */
  idleDays?: number;
  /** Sessions examined per call (default 500, at most MAX_RETENTION_BATCH). */
  batch?: number;
  /** Stop after this many calls (a sweep can be resumed with the printed cursor). */
  maxBatches?: number;
  cursor?: string | null;
}

export interface RetentionReport {
  idleBefore: string;
  deleted: number;
  batches: number;
  /** Where to resume when `maxBatches` stopped the sweep; null when it ran to the end. */
  nextCursor: string | null;
}

const DAY_MS = 86_400_000;
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');

/**
 * `agentstore retention`: runs `deleteIdleSessions` batch after batch until the sweep is done
 * (or `maxBatches`), reporting progress through `progress`. Each batch is bounded by `batch`.
 */
export async function runRetention(
  store: AgentStore,
  options: RetentionCommandOptions,
  progress: (line: string) => void = () => {},
): Promise<RetentionReport> {
  const { idleDays } = options;
  if ((options.idleBefore === undefined) === (idleDays === undefined)) {
    throw new InvalidArgumentError({
      argument: 'idleBefore',
      reason: 'give exactly one of --idle-before and --idle-days',
    });
  }
  if (idleDays !== undefined && (!Number.isFinite(idleDays) || idleDays < 0)) {
    throw new InvalidArgumentError({ argument: 'idleDays', reason: 'must be a non-negative number of days' });
  }
  const cutoff = idleDays === undefined ? null : new Date(Date.now() - idleDays * DAY_MS);
  // Too many days is a typed error naming the flag, not toISOString's RangeError.
  if (cutoff !== null && !(cutoff.getTime() >= EARLIEST_MS)) {
    throw new InvalidArgumentError({ argument: 'idleDays', reason: 'counts back past the year 0000' });
  }
  const idleBefore = options.idleBefore ?? cutoff!.toISOString();
  const batch = options.batch ?? 500;
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(batch) || batch < 1 || batch > MAX_RETENTION_BATCH) {
    throw new InvalidArgumentError({
      argument: 'batch',
      reason: `must be an integer from 1 to ${MAX_RETENTION_BATCH}`,
    });
  }
  // 0, NaN or a fraction would still run one batch (the loop tests after it): refuse them.
  if (maxBatches !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(maxBatches) || maxBatches < 1)) {
    throw new InvalidArgumentError({ argument: 'maxBatches', reason: 'must be a positive integer' });
  }
  // Every value the store will see is checked now, before the first batch deletes anything.
  validateRetentionInput({ idleBefore, limit: batch, cursor: options.cursor ?? null });
  let cursor = options.cursor ?? null;
  let deleted = 0;
  let batches = 0;
  do {
    const page = await store.deleteIdleSessions({ idleBefore, limit: batch, cursor });
    batches += 1;
    deleted += page.deleted.length;
    cursor = page.nextCursor;
    progress(`batch ${batches}: deleted ${page.deleted.length} (total ${deleted})`);
  } while (cursor !== null && batches < maxBatches);
  return { idleBefore, deleted, batches, nextCursor: cursor };
}
