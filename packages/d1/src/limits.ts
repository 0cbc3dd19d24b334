import type { StoreLimits } from '@agentstore/core';

/**
 * Cloudflare D1's documented limits (developers.cloudflare.com/d1/platform/limits/, 2026) that
 * shape this store. Miniflare's local D1 is looser on row size (2 MB), so these are enforced
 * here, not discovered in production.
 */
export const D1_PLATFORM_LIMITS = {
  /** "Maximum bound parameters per query". */
  boundParametersPerStatement: 100,
  /** "Maximum string, BLOB or table row size". */
  rowBytes: 1_000_000,
  /** "Maximum SQL statement length" (SQL text only; values are bound, never spliced in). */
  statementBytes: 100_000,
} as const;

/** Room left in a message row for the session id (at most 1,024 bytes), the message id (256), role, seq and record header. */
const ROW_OVERHEAD_BYTES = 2_000;

/**
 * What this store accepts. One message is one row whose `message` column holds the message's JSON,
 * which is exactly what `messageByteLength` measures, so a message of `maxMessageBytes` fits a
 * D1 row with room to spare. An append of up to 100 messages is one `batch()`: its rows are
 * spread over as many INSERT statements as the parameter and size limits need.
 */
export const D1_STORE_LIMITS: StoreLimits = {
  maxMessageBytes: D1_PLATFORM_LIMITS.rowBytes - ROW_OVERHEAD_BYTES,
  maxMessagesPerAppend: 100,
};
