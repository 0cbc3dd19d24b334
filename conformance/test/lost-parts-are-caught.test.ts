import type { AgentStore, MessageRecord } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import { describe, expect, it } from 'vitest';
import { ConformanceViolation, messagePartsSpec } from '../src/index.ts';

/** A store that changes what it loads, the way a store that maps messages to its own columns would. */
function lossyStore(change: (message: MessageRecord) => MessageRecord): AgentStore {
  const inner = durableMemoryStore();
  return {
    ...inner,
    async load(sessionId, options) {
      const loaded = await inner.load(sessionId, options);
      return loaded && { ...loaded, messages: loaded.messages.map(change) };
    },
  };
}

async function violationOf(store: AgentStore): Promise<string> {
  const check = messagePartsSpec.checks.find((c) => c.name.startsWith('keeps every message part'))!;
  const target = { name: 'lossy', createStore: () => store };
  try {
    await check.run({ store, target, capabilities: {} });
  } catch (error) {
    expect(error).toBeInstanceOf(ConformanceViolation);
    return (error as Error).message;
  }
  throw new Error('the check passed a store that loses parts');
}

describe('the kit names what a store did to message parts', () => {
  it('a store that keeps only the fields it knows: "came back without its parts"', async () => {
    const message = await violationOf(lossyStore(({ parts: _dropped, ...rest }) => rest));
    expect(message).toMatch(/came back without its parts: the store keeps only the message fields it knows/);
  });

  it('a store that reorders parts: "reordered"', async () => {
    const message = await violationOf(
      lossyStore((m) => (m.parts ? { ...m, parts: [...m.parts].reverse() } : m)),
    );
    expect(message).toMatch(/parts reordered/);
  });

  it('a store that keeps provider options as a JSON string: "came back as a string of JSON"', async () => {
    const stringify = (m: MessageRecord): MessageRecord =>
      m.parts
        ? {
            ...m,
            parts: m.parts.map((p) =>
              p.providerOptions ? ({ ...p, providerOptions: JSON.stringify(p.providerOptions) } as never) : p,
            ),
          }
        : m;
    expect(await violationOf(lossyStore(stringify))).toMatch(/providerOptions came back as a string of JSON/);
  });

  it('a store that drops the usage of a model call', async () => {
    const message = await violationOf(lossyStore(({ usage: _dropped, ...rest }) => rest));
    expect(message).toMatch(/came back with usage undefined/);
  });

  it('a store that trims a signature', async () => {
    const trim = (m: MessageRecord): MessageRecord =>
      m.parts
        ? {
            ...m,
            parts: m.parts.map((p) =>
              p.type === 'reasoning' && p.providerOptions?.anthropic
                ? { ...p, providerOptions: { anthropic: { signature: 'cut' } } }
                : p,
            ),
          }
        : m;
    expect(await violationOf(lossyStore(trim))).toMatch(/providerOptions changed .*byte-identical/);
  });
});
