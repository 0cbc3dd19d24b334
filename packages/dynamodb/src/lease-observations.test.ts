import { expect, it } from 'vitest';
import { leaseObservations } from './lease-observations.ts';
import { type LeaseSighting, newLeaseVersion } from './lease-record.ts';

const expiresAt = '2026-11-28T06:00:30.000Z';
const sighting = (overrides: Partial<LeaseSighting> = {}): LeaseSighting => ({
  holder: 'h',
  epoch: 3,
  expiresAt,
  version: newLeaseVersion(30_000, expiresAt),
  ...overrides,
});

it('a watch adds up over sightings of one record and starts over on any change', () => {
  let now = 0;
  const watches = leaseObservations(() => now);
  const first = sighting();
  expect(watches.watch('s', first, 1_000)).toBe(1_000);
  now = 600;
  expect(watches.ripe('s')).toBeNull();
  expect(watches.watch('s', { ...first }, 1_000)).toBe(400);
  now = 1_000;
  expect(watches.ripe('s')).toEqual(first);
  for (const change of [{ holder: 'g' }, { epoch: 4 }, { expiresAt: 'later' }, { version: null }]) {
    expect(watches.watch('s', { ...first, ...change }, 1_000)).toBe(1_000);
    expect(watches.ripe('s')).toBeNull();
  }
  watches.forget('s');
  expect(watches.watch('s', first, 1_000)).toBe(1_000);
});

it('a record this store wrote is watched from the write; sessions are watched apart', () => {
  let now = 50;
  const watches = leaseObservations(() => now);
  const written = sighting();
  watches.wrote('a', written, 200);
  now = 150;
  expect(watches.watch('a', { ...written }, 200)).toBe(100);
  expect(watches.ripe('b')).toBeNull();
  now = 250;
  expect(watches.ripe('a')).toEqual(written);
  expect(watches.ripe('b')).toBeNull();
});

it('remembers a bounded number of sessions: the oldest watch is forgotten first, which only restarts it', () => {
  let now = 0;
  const watches = leaseObservations(() => now);
  for (let i = 0; i <= 10_000; i++) watches.watch(`s${i}`, sighting(), 100);
  now = 100;
  expect(watches.ripe('s0')).toBeNull();
  expect(watches.ripe('s1')).not.toBeNull();
});
