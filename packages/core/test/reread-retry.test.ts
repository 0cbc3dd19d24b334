import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CorruptRecordError, isAgentStoreError, LeaseLostError } from '../src/errors.ts';
import { durableLedger, REREAD_RETRY_DELAYS_MS } from '../src/loop/durable-ledger.ts';
import { keepLeaseAlive } from '../src/loop/lease-keeper.ts';
import type { NewMessage } from '../src/records.ts';
import type { AgentStore } from '../src/store/contract.ts';
import { leaseSafetyMarginMs } from '../src/store/lease-rules.ts';
import {
  durableMemoryStore,
  renewFaults,
  SimulatedAckLostError,
  SimulatedNetworkError,
} from '../src/testing/index.ts';

const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };
const message: NewMessage = { id: 'm1', role: 'user', content: 'hi', createdAt: new Date(0).toISOString() };

/**
 * The append lands and its ack is lost; then the re-read fails `failingLoads` times the way a
 * cluster mid-failover fails (CLUSTERDOWN), with `loadError` when given.
 */
async function ackLostThenFailingReads(failingLoads: number, loadError = () => new Error('CLUSTERDOWN')) {
  const inner = durableMemoryStore();
  const { epoch } = await inner.acquireLease('s', { holder: 'h', ttlMs: 60_000, init });
  let loads = 0;
  const store: AgentStore = {
    ...inner,
    async append(id, input) {
      await inner.append(id, input);
      throw new SimulatedAckLostError('after append');
    },
    async load(id, options) {
      loads += 1;
      if (loads <= failingLoads) throw loadError();
      return inner.load(id, options);
    },
  };
  const ledger = durableLedger({
    store,
    sessionId: 's',
    lease: { holder: 'h', epoch },
    headSeq: 0,
    init,
    state: () => null,
    assertHeld: () => {},
    leaseLost: new AbortController().signal,
  });
  return { inner, ledger, loads: () => loads };
}

describe('the re-read of an append whose outcome is unknown', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('rides through a failover: retries failed re-reads, then finds the append landed', async () => {
    const failing = REREAD_RETRY_DELAYS_MS.length - 1;
    const { inner, ledger, loads } = await ackLostThenFailingReads(failing);
    const committed = ledger.commit([message]);
    await vi.runAllTimersAsync();
    expect((await committed).map((m) => m.seq)).toEqual([1]);
    expect(loads()).toBe(failing + 1);
    expect((await inner.load('s'))!.messages.map((m) => m.id)).toEqual(['m1']); // exactly once
    expect(ledger.headSeq).toBe(1);
  });

  it('gives up within its bound with AppendOutcomeUnknownError carrying the last re-read failure', async () => {
    const { ledger, loads } = await ackLostThenFailingReads(Number.POSITIVE_INFINITY);
    const started = Date.now();
    const committed = ledger.commit([message]).catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    const error = await committed;
    expect(isAgentStoreError(error, 'APPEND_OUTCOME_UNKNOWN')).toBe(true);
    expect((error as { rereadError: Error }).rereadError.message).toBe('CLUSTERDOWN');
    expect(loads()).toBe(REREAD_RETRY_DELAYS_MS.length + 1);
    expect(Date.now() - started).toBe(REREAD_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));
  });

  it('does not wait on a typed store error, which waiting cannot heal', async () => {
    const corrupt = () => new CorruptRecordError({ sessionId: 's', seq: null, reason: 'bad row' });
    const { ledger, loads } = await ackLostThenFailingReads(Number.POSITIVE_INFINITY, corrupt);
    const error = await ledger.commit([message]).catch((e: unknown) => e);
    expect(isAgentStoreError(error, 'APPEND_OUTCOME_UNKNOWN')).toBe(true);
    expect(loads()).toBe(1);
  });
});

it('does not wait on an error that declares itself not retryable (a dead process)', async () => {
  const dead = () => Object.assign(new Error('client closed'), { retryable: false });
  const { ledger, loads } = await ackLostThenFailingReads(Number.POSITIVE_INFINITY, dead);
  const error = await ledger.commit([message]).catch((e: unknown) => e);
  expect(isAgentStoreError(error, 'APPEND_OUTCOME_UNKNOWN')).toBe(true);
  expect(loads()).toBe(1);
});

describe('a lost lease ends the settling of an unknown append outcome at once', () => {
  afterEach(() => vi.useRealTimers());

  it("stops re-reading at the holder's local deadline and sends nothing after it", async () => {
    vi.useFakeTimers();
    const ttlMs = 1_000;
    const inner = durableMemoryStore();
    const sentAt = Date.now();
    const { epoch } = await inner.acquireLease('s', { holder: 'h', ttlMs, init });
    // Renewals never answer (a partition), so the local deadline is sentAt + ttl − margin.
    const partitioned = renewFaults(inner, 'hang');
    const sent: { op: string; at: number }[] = [];
    const store: AgentStore = {
      ...partitioned,
      async append(id, input) {
        sent.push({ op: 'append', at: Date.now() });
        await inner.append(id, input);
        throw new SimulatedAckLostError('after append');
      },
      async load() {
        sent.push({ op: 'load', at: Date.now() });
        throw new Error('CLUSTERDOWN');
      },
    };
    const lost = new AbortController();
    const keeper = keepLeaseAlive({
      store,
      sessionId: 's',
      lease: { holder: 'h', epoch },
      ttlMs,
      sentAt,
      now: () => Date.now(),
      onLost: (error) => lost.abort(error),
    });
    const ledger = durableLedger({
      store,
      sessionId: 's',
      lease: { holder: 'h', epoch },
      headSeq: 0,
      init,
      state: () => null,
      assertHeld: keeper.assertHeld,
      leaseLost: lost.signal,
    });
    const deadline = sentAt + ttlMs - leaseSafetyMarginMs(ttlMs);
    let settledAt = 0;
    const committed = ledger.commit([message]).catch((error: unknown) => {
      settledAt = Date.now();
      return error;
    });
    await vi.runAllTimersAsync();
    const error = await committed;
    keeper.stop();
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(settledAt).toBe(deadline); // not ~21 s of re-reads later
    expect(sent.length).toBeGreaterThan(1); // it did re-read while the lease held
    expect(sent.every((call) => call.at < deadline)).toBe(true);
  });

  it('does not retry an append proven not landed once the lease is lost', async () => {
    const inner = durableMemoryStore();
    const { epoch } = await inner.acquireLease('s', { holder: 'h', ttlMs: 60_000, init });
    const lost = new AbortController();
    let appends = 0;
    const store: AgentStore = {
      ...inner,
      async append() {
        appends += 1;
        throw new SimulatedNetworkError('append'); // never reached the store
      },
      async load(id, options) {
        // The local deadline passes while the outcome is being settled; the store's lease lives on.
        lost.abort(new LeaseLostError({ sessionId: 's', holder: 'h', epoch }));
        return inner.load(id, options);
      },
    };
    const ledger = durableLedger({
      store,
      sessionId: 's',
      lease: { holder: 'h', epoch },
      headSeq: 0,
      init,
      state: () => null,
      assertHeld: () => lost.signal.throwIfAborted(),
      leaseLost: lost.signal,
    });
    const error = await ledger.commit([message]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(appends).toBe(1);
    expect((await inner.load('s'))!.messages).toEqual([]);
  });
});
