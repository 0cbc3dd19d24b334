import type { AgentStore } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import { describe, expect, it } from 'vitest';
import {
  type CheckContext,
  ConformanceViolation,
  describeSpec,
  hostileIdSpec,
  inputValidationSpec,
  limitSpec,
  runLimitSpec,
} from '../src/index.ts';

// The reference store with the tightest limits the contract allows: run() must split every
// write. (Other specs append more than two messages at once by design, so only these run.)
const tight = {
  name: 'durableMemoryStore() with tight limits',
  createStore: () =>
    durableMemoryStore({
      limits: { maxMessageBytes: 262_144, maxMessagesPerAppend: 2, maxAppendBytes: 400_000 },
    }),
};
describeSpec(tight, runLimitSpec);
describeSpec(tight, limitSpec);
describeSpec(tight, inputValidationSpec);

/** A store that skips the boundary for `field`, as an adapter that forgot to call it would. */
function lenient(field: 'state' | 'ids'): AgentStore {
  const store = durableMemoryStore();
  const seen = new Map<string, string>();
  // What a UTF-8 driver does to a lone surrogate: it becomes U+FFFD.
  const utf8 = (id: string) => id.replace(/[\uD800-\uDFFF]/g, '\uFFFD');
  return {
    ...store,
    async append(sessionId, input) {
      if (field === 'state' && input.session?.state !== undefined) {
        const { state, ...session } = input.session;
        const result = await store.append(sessionId, { ...input, session });
        seen.set(sessionId, JSON.stringify(state) ?? '');
        return result;
      }
      return store.append(field === 'ids' ? utf8(sessionId) : sessionId, input);
    },
    load: (sessionId, options) => store.load(field === 'ids' ? utf8(sessionId) : sessionId, options),
  };
}

const contextFor = (store: AgentStore): CheckContext => ({
  store,
  capabilities: {},
  target: { name: 'broken', createStore: () => store },
});

describe('the kit catches stores that skip the boundary', () => {
  it('a store that stores any state is reported', async () => {
    const check = inputValidationSpec.checks.find((c) => c.name.startsWith('hostile values in every field'))!;
    await expect(check.run(contextFor(lenient('state')))).rejects.toBeInstanceOf(ConformanceViolation);
  });

  it('a store whose driver folds lone surrogates into U+FFFD is reported', async () => {
    const check = hostileIdSpec.checks.find((c) => c.name.startsWith('lone surrogates'))!;
    await expect(check.run(contextFor(lenient('ids')))).rejects.toBeInstanceOf(ConformanceViolation);
  });
});
