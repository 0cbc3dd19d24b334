import { describe, expect, it } from 'vitest';
import { isAgentStoreError, LeaseLostError } from '../src/errors.ts';
import {
  durableLedger,
  MAX_UNKNOWN_OUTCOME_RETRIES,
  REREAD_RETRY_DELAYS_MS,
} from '../src/loop/durable-ledger.ts';
import type { NewMessage } from '../src/records.ts';
import type { AgentStore, AppendInput } from '../src/store/contract.ts';
import { durableMemoryStore, SimulatedNetworkError } from '../src/testing/index.ts';

// What the durable ledger promises on its own: an append whose outcome is unknown is settled by
// re-reading its own message ids (never someone else's), a commit that may still land keeps the
// lease from being freed, the session state rides on every append, and retries are bounded.

const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };
const msg = (id: string): NewMessage => ({
  id,
  role: 'user',
  content: id,
  createdAt: new Date(0).toISOString(),
});

async function ledgerOver(
  wrap: (inner: AgentStore, lease: { holder: string; epoch: number }) => Partial<AgentStore>,
) {
  const inner = durableMemoryStore();
  const { epoch } = await inner.acquireLease('s', { holder: 'h', ttlMs: 60_000, init });
  const lease = { holder: 'h', epoch };
  const store: AgentStore = { ...inner, ...wrap(inner, lease) };
  let states = 0;
  const ledger = durableLedger({
    store,
    sessionId: 's',
    lease,
    headSeq: 0,
    init,
    state: () => ({ n: ++states }),
    assertHeld: () => {},
    leaseLost: new AbortController().signal,
  });
  return { inner, ledger, lease };
}

describe('the durable ledger', () => {
  it("an unknown outcome whose re-read finds another writer's messages is a conflict, not our append", async () => {
    const { ledger, inner } = await ledgerOver((store) => ({
      async append(id, input) {
        // Someone else's messages land at our seq; our own answer is lost.
        await store.append(id, { ...input, messages: [msg('theirs')] });
        throw new SimulatedNetworkError('append');
      },
    }));
    const error = await ledger.commit([msg('ours')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentStoreError(error, 'SEQ_CONFLICT'), String(error)).toBe(true);
    expect(ledger.headSeq).toBe(0);
    expect((await inner.load('s'))!.messages.map((m) => m.id)).toEqual(['theirs']);
  });

  it('a commit whose first attempt had no answer and whose retry was refused may still land: outcome unconfirmed', async () => {
    let appends = 0;
    const { ledger } = await ledgerOver((_store, lease) => ({
      append() {
        appends += 1;
        // 1: the connection drops (the store may still be executing it); 2: fenced off.
        if (appends === 1) return Promise.reject(new SimulatedNetworkError('append'));
        return Promise.reject(new LeaseLostError({ sessionId: 's', ...lease }));
      },
    }));
    await expect(ledger.commit([msg('m')])).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(appends).toBe(2);
    // One attempt was refused, but the other may still land: the lease must not be freed under it.
    expect(ledger.outcomeUnconfirmed).toBe(true);
  });

  it('a commit refused outright (a definite answer) leaves nothing unconfirmed', async () => {
    const { ledger } = await ledgerOver((_store, lease) => ({
      append: () => Promise.reject(new LeaseLostError({ sessionId: 's', ...lease })),
    }));
    await expect(ledger.commit([msg('m')])).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(ledger.outcomeUnconfirmed).toBe(false);
  });

  it('writes the session state with every append, not only the first', async () => {
    const inputs: AppendInput[] = [];
    const { ledger, inner } = await ledgerOver((store) => ({
      append(id, input) {
        inputs.push(input);
        return store.append(id, input);
      },
    }));
    await ledger.commit([msg('a')]);
    await ledger.commit([msg('b')]);
    await ledger.commit([msg('c')]);
    expect(inputs.map((input) => input.session?.state)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    // `init` only on the append that may create the session.
    expect(inputs.map((input) => input.session !== undefined && 'init' in input.session)).toEqual([
      true,
      false,
      false,
    ]);
    expect((await inner.load('s'))!.session.state).toEqual({ n: 3 });
  });

  it(`tries an append proven not to have landed ${MAX_UNKNOWN_OUTCOME_RETRIES} more times, then fails with its error`, async () => {
    let appends = 0;
    const { ledger } = await ledgerOver(() => ({
      append() {
        appends += 1;
        return Promise.reject(new SimulatedNetworkError(`append #${appends}`));
      },
    }));
    await expect(ledger.commit([msg('m')])).rejects.toBeInstanceOf(SimulatedNetworkError);
    expect(MAX_UNKNOWN_OUTCOME_RETRIES).toBe(3);
    expect(appends).toBe(1 + MAX_UNKNOWN_OUTCOME_RETRIES);
  });

  it('waits out a failing re-read for longer than a Redis Cluster election (15 s), in growing steps', () => {
    const total = REREAD_RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
    expect(total).toBeGreaterThan(15_000);
    expect(total).toBeLessThan(30_000);
    for (let i = 1; i < REREAD_RETRY_DELAYS_MS.length; i++) {
      expect(REREAD_RETRY_DELAYS_MS[i]!).toBeGreaterThanOrEqual(REREAD_RETRY_DELAYS_MS[i - 1]!);
    }
  });
});
