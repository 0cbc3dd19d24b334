import { describe, expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, type RunOptions, run } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack on "run() checks all of its own inputs before the lease and the model call" (issue 15,
 * deliverable 2): `checkRunOptions` reads each option once, and `run()` reads it again later.
 * An option behind a getter that answers differently after the check reaches the model or the
 * store unchecked — e.g. a 5 MiB message is sent to the (paid) model, exactly what the check was
 * added to prevent. The invariant holds for every flip point, whatever the read count.
 */

const agent = defineAgent({ name: 'attack', instructions: 'x', tools: {} });

function countingLlm() {
  const seen: string[] = [];
  const script = scriptedLlm([{ text: 'done' }]);
  const llm: LlmAdapter = {
    generate: (request) => {
      for (const m of request.messages) if (m.role === 'user') seen.push(m.content);
      return script.generate(request);
    },
  };
  return { llm, seen };
}

describe('run() options that change after they are checked', () => {
  for (let flipAfter = 1; flipAfter <= 4; flipAfter++) {
    it(`message getter flips to 5 MiB after ${flipAfter} reads: the model never sees an unchecked message`, async () => {
      const store = durableMemoryStore({ limits: { maxMessageBytes: 262_144 } });
      const { llm, seen } = countingLlm();
      let reads = 0;
      const options = Object.defineProperty({ store, sessionId: 's', llm } as RunOptions, 'message', {
        enumerable: true,
        get: () => (++reads <= flipAfter ? 'hello' : 'x'.repeat(5 * 1024 * 1024)),
      });
      try {
        await run(agent, options);
      } catch {
        // A typed refusal is fine; what must not happen is the model receiving the big message.
      }
      expect(
        seen.map((m) => m.length),
        'lengths of the user messages the model received',
      ).not.toContain(5 * 1024 * 1024);
    });
  }

  it('leaseWaitMs getter that turns NaN after the check: run() acts on the checked value', async () => {
    const store = durableMemoryStore();
    const { llm } = countingLlm();
    // Another worker holds the lease, so run() has to wait (or not) according to leaseWaitMs.
    await store.acquireLease('busy', {
      holder: 'other',
      ttlMs: 60_000,
      init: { agentName: 'attack', ownerId: null, tenantId: null, state: null },
    });
    let acquires = 0;
    const counted = {
      ...store,
      acquireLease: (...args: Parameters<typeof store.acquireLease>) => {
        acquires++;
        return store.acquireLease(...args);
      },
    };
    let reads = 0;
    const options = Object.defineProperty(
      { store: counted, sessionId: 'busy', llm, message: 'hi' } as RunOptions,
      'leaseWaitMs',
      {
        enumerable: true,
        get: () => (++reads <= 1 ? 0 : Number.NaN),
      },
    );
    await expect(run(agent, options)).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    // leaseWaitMs 0 as checked: one attempt, no retry loop.
    expect(acquires, 'acquireLease attempts with leaseWaitMs 0').toBe(1);
    // Unfixed, NaN makes run() retry against the store until the test's own timeout.
  }, 5_000);
});
