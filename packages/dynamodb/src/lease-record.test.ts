import { expect, it } from 'vitest';
import { type LeaseSighting, newLeaseVersion, sameSighting, sightingTtlMs } from './lease-record.ts';

const expiresAt = '2026-11-28T06:00:30.000Z';
const sighting = (overrides: Partial<LeaseSighting> = {}): LeaseSighting => ({
  holder: 'h',
  epoch: 3,
  expiresAt,
  version: newLeaseVersion(30_000, expiresAt),
  ...overrides,
});

it('a version names the TTL it was written with, and is never written twice', () => {
  const seen = sighting();
  expect(sightingTtlMs(seen)).toBe(30_000);
  expect(newLeaseVersion(30_000, expiresAt)).not.toBe(newLeaseVersion(30_000, expiresAt));
  expect(sameSighting(seen, { ...seen, version: newLeaseVersion(30_000, expiresAt) })).toBe(false);
});

it('names no TTL for a lease an earlier package version granted or renewed (no version, or one left from another expiry)', () => {
  expect(sightingTtlMs(sighting({ version: null }))).toBeNull();
  // An earlier version re-granted or renewed: it moved the expiry and left the old version.
  const left = newLeaseVersion(30_000, expiresAt);
  expect(sightingTtlMs(sighting({ version: left, expiresAt: '2026-11-28T06:01:00.000Z' }))).toBeNull();
  for (const version of [
    '',
    'x',
    '0/x/y',
    `-5/${expiresAt}/y`,
    `1e9/${expiresAt}/y`,
    `${2 ** 53}/${expiresAt}/y`,
  ]) {
    expect(sightingTtlMs(sighting({ version }))).toBeNull();
  }
});
