import type { Lease, SessionRecord } from '../records.ts';
import type { LeaseToken, SessionInit } from './contract.ts';

/**
 * The lease and ownership rules every store applies, as pure functions, so adapters that decide
 * in JavaScript (memory, SQLite) and the conformance kit agree on one definition.
 */

/**
 * Lease TTL bounds. The upper bound keeps every timer a lease arms below 2^31 − 1 ms (Node and
 * browsers fire larger delays at once) and every stored expiry within four-digit years, so ISO
 * expiries always compare correctly as text. The lower bound only refuses TTLs no worker could
 * do anything within; a TTL that is safe on a loaded machine is the caller's choice (seconds).
 */
export const MIN_LEASE_TTL_MS = 10;
export const MAX_LEASE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How much earlier than the store the holder gives up its lease: one fifth of the TTL. It covers
 * what the send-time measurement does not: the holder's timers firing late on a busy event loop,
 * the handler reacting to `ctx.signal`, and drift between the holder's monotonic clock and the
 * store's authority clock over one TTL (ppm, far below it).
 */
export function leaseSafetyMarginMs(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / 5));
}

export function isLeaseLive(lease: Lease | null, nowMs: number): lease is Lease {
  return lease !== null && Date.parse(lease.expiresAt) > nowMs;
}

/** An acquire succeeds when the lease is free, expired, or already this holder's. */
export function canAcquireLease(lease: Lease | null, holder: string, nowMs: number): boolean {
  return !isLeaseLive(lease, nowMs) || lease.holder === holder;
}

/** An append with a token needs that exact holder and epoch; without one, no live lease may exist. */
export function appendLeaseMatches(lease: Lease | null, token: LeaseToken | null, nowMs: number): boolean {
  if (token === null) return !isLeaseLive(lease, nowMs);
  return lease !== null && lease.holder === token.holder && lease.epoch === token.epoch;
}

export function retryAfterMs(lease: Lease, nowMs: number): number {
  return Math.max(1, Date.parse(lease.expiresAt) - nowMs);
}

/**
 * The store's own clock in ms since the epoch, for stores that decide in JavaScript and hold
 * their data in this process (the memory store): it never follows a changed or faked `Date`.
 */
export function processClockMs(): number {
  return Math.floor(performance.timeOrigin + performance.now());
}

/** A session may be leased only by a caller with the same owner and tenant (null matches null only). */
export function ownerMatches(
  session: Pick<SessionRecord, 'ownerId' | 'tenantId'>,
  init: SessionInit,
): boolean {
  return session.ownerId === init.ownerId && session.tenantId === init.tenantId;
}

export function expiryIso(nowMs: number, ttlMs: number): string {
  return new Date(nowMs + ttlMs).toISOString();
}
