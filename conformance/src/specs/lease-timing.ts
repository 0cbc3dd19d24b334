import type { AgentStore } from '@agentstore/core';
import { sleep } from '../fixtures.ts';

/** Short TTLs and real waiting (plus the store's declared clock skew, if any). */
export const SHORT_TTL_MS = 150;
export const LONG_TTL_MS = 30_000;
/** Room for a slow backend round trip when comparing an expiry with the client's clock. */
export const CLOCK_SLACK_MS = 1_000;

export const holderId = (name: string) => `${name}-${crypto.randomUUID()}`;

/** How long past its expiry a lease stays live for takers: the store's declared clock skew (0 for server-clock stores). */
export const skewOf = (store: AgentStore) => store.maxClockSkewMs ?? 0;

/** Sleeps until a lease of `ttlMs` granted now has expired for every taker. */
export const outlive = (store: AgentStore, ttlMs: number) => sleep(ttlMs + skewOf(store) + 60);
