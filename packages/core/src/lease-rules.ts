import type { Lease, SessionRecord } from './records.ts';
import type { LeaseToken, SessionInit } from './store.ts';

/**
 * The lease and ownership rules every store applies, as pure functions, so adapters that decide
 * in JavaScript (memory, SQLite) and the conformance kit agree on one definition.
 */

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
