import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** What every operation of one store needs. */
export interface StoreContext {
  client: DynamoDBClient;
  tableName: string;
  /** When set, every written item gets `ttl` = now + ttlSeconds (epoch seconds). */
  ttlSeconds: number | null;
  /** A lease counts as expired only this long after its stored expiry (client clocks differ). */
  maxClockSkewMs: number;
}

/**
 * DynamoDB has no server clock a condition can read, so expiry is judged by the caller's clock
 * less the declared skew: the ISO time before which a stored expiry has surely passed for every
 * client whose clock is within `maxClockSkewMs` of this one.
 */
export function expiredBeforeIso(context: StoreContext, nowMs: number): string {
  return new Date(nowMs - context.maxClockSkewMs).toISOString();
}

/** `ttl` for a session item that holds no lease: idle from now. */
export function ttlValue(context: StoreContext, nowMs: number): number | null {
  return context.ttlSeconds === null ? null : Math.floor(nowMs / 1000) + context.ttlSeconds;
}

/**
 * `ttl` for a session item whose lease runs until `leaseExpiresAtMs`: idle from the moment the
 * lease has surely ended for every client (its expiry plus `maxClockSkewMs`, rounded up), so
 * DynamoDB never expires a session under a live holder. Appends under a held lease leave `ttl`
 * alone (they cannot know the stored expiry); any append made while the lease lives is then still
 * followed by at least `ttlSeconds`.
 */
export function leaseTtlValue(context: StoreContext, leaseExpiresAtMs: number): number | null {
  return context.ttlSeconds === null
    ? null
    : Math.ceil((leaseExpiresAtMs + context.maxClockSkewMs) / 1000) + context.ttlSeconds;
}

/**
 * A session item's `incarnation`: 96 random bits, drawn each time a session may be created. It
 * also is the session's `incarnationId`, the part of its idempotency keys that tells incarnations
 * of one id apart: `INCARNATION_ID_PREFIX` marks the ones drawn since it is. An older package drew
 * them without the prefix, and those sessions' calls keep the key formula they started with.
 */
export const newIncarnation = (): string =>
  `${INCARNATION_ID_PREFIX}${randomBytes(12).toString('base64url')}`;

/** Never in base64url, so no incarnation drawn before it can carry it. */
export const INCARNATION_ID_PREFIX = 'i.';

export const errorName = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Jittered exponential backoff for the few retries the store does itself. */
export const backoff = (attempt: number) => sleep(Math.random() * 10 * 2 ** attempt);

/** BatchGetItem / BatchWriteItem leave keys unprocessed under throttling; retry them this often. */
export const UNPROCESSED_ATTEMPTS = 8;
