import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CorruptRecordError, isAgentStoreError } from '../src/errors.ts';
import type { NewMessage } from '../src/records.ts';
import { durableLedger, REREAD_RETRY_DELAYS_MS } from '../src/session-writer.ts';
import type { AgentStore } from '../src/store.ts';
import { durableMemoryStore, SimulatedAckLostError } from '../src/testing/index.ts';

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
