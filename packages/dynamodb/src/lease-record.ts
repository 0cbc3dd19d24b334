import { randomBytes } from 'node:crypto';
import { MAX_LEASE_TTL_MS } from '@agentstore/core';
import { A } from './attributes.ts';
import type { Item } from './session-item.ts';

/**
 * A lease record as a taker sees it: who holds it, under which epoch, and its record version
 * number (the AWS DynamoDB Lock Client's rule), which every grant and renewal writes anew. The
 * expiry belongs to it too: a holder on an earlier version of this package renews by moving only
 * the expiry, and that must count as a change.
 */
export interface LeaseSighting {
  holder: string;
  epoch: number;
  expiresAt: string;
  /** `null` on a lease granted by an earlier version of this package, which wrote none. */
  version: string | null;
}

/**
 * A fresh record version: `<ttlMs>/<expiresAt>/<random>`. It carries the TTL it was written with
 * (how long a taker must watch it) and the expiry written beside it, so a version left behind by
 * a later grant or renewal of an earlier package version (which sets only the expiry) is told
 * apart from a current one.
 */
export function newLeaseVersion(ttlMs: number, expiresAt: string): string {
  return `${ttlMs}/${expiresAt}/${randomBytes(9).toString('base64url')}`;
}

/** The held lease of a session item (already decoded, so well-formed); `null` when it is free. */
export function leaseSighting(item: Item): LeaseSighting | null {
  const holder = item[A.leaseHolder]?.S;
  if (holder === undefined) return null;
  return {
    holder,
    epoch: Number(item[A.leaseEpoch]?.N),
    expiresAt: item[A.leaseExpiresAt]?.S ?? '',
    version: item[A.leaseVersion]?.S ?? null,
  };
}

export const sameSighting = (a: LeaseSighting, b: LeaseSighting): boolean =>
  a.holder === b.holder && a.epoch === b.epoch && a.expiresAt === b.expiresAt && a.version === b.version;

/**
 * The TTL the holder was granted or renewed with, when this package wrote the record's current
 * expiry; `null` when an earlier version did (no version, or one written with another expiry).
 */
export function sightingTtlMs(sighting: LeaseSighting): number | null {
  if (sighting.version === null) return null;
  const [ttl, expiresAt] = sighting.version.split('/');
  const ttlMs = Number(ttl);
  const valid = Number.isSafeInteger(ttlMs) && ttlMs > 0 && ttlMs <= MAX_LEASE_TTL_MS;
  return valid && expiresAt === sighting.expiresAt ? ttlMs : null;
}
