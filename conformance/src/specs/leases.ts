import type { ConformanceSpec } from '../check.ts';
import { leaseAccessChecks } from './lease-access.ts';
import { leaseFencingChecks } from './lease-fencing.ts';
import { leaseGrantChecks } from './lease-grants.ts';
import { leaseTtlChecks } from './lease-ttl.ts';

/** Leases and fencing: grant, busy, renew, release, expiry, epochs, access control, TTL bounds, skewed clocks. */
export const leaseSpec: ConformanceSpec = {
  title: 'leases and fencing',
  checks: [...leaseGrantChecks, ...leaseAccessChecks, ...leaseTtlChecks, ...leaseFencingChecks],
};
