import { type AgentStore, defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { sqliteStore } from '../src/index.ts';

const anyInput = {
  '~standard': { version: 1 as const, vendor: 'x', validate: (value: unknown) => ({ value }) },
};
const steps = [
  ...Array.from({ length: 10 }, (_, n) => ({
    text: `step ${n}`,
    toolCalls: [{ name: 'work', input: { n } }],
  })),
  { text: 'done' },
];
const agent = defineAgent({
  name: 'a',
  instructions: 'i',
  maxIterations: 11,
  tools: {
    work: tool({ description: 'd', input: anyInput, safeToRetry: true, handler: () => ({ ok: true }) }),
  },
});
const stats = new Map<string, { n: number; ms: number }>();
function instrument(store: AgentStore): AgentStore {
  return new Proxy(store, {
    get(t, p, r) {
      const v = Reflect.get(t, p, r);
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        const s = performance.now();
        try {
          return await v.apply(t, args);
        } finally {
          const e = stats.get(String(p)) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += performance.now() - s;
          stats.set(String(p), e);
        }
      };
    },
  });
}
for (const [label, base] of [
  ['sqlite-mem', sqliteStore({ path: ':memory:' })],
  ['memory', (await import('@agentstore/core/testing')).durableMemoryStore()],
] as const) {
  const store = instrument(base);
  for (let i = 0; i < 20; i++)
    await run(agent, { store, sessionId: `w${i}`, message: 'go', llm: scriptedLlm(steps) });
  stats.clear();
  const t0 = performance.now();
  for (let i = 0; i < 50; i++)
    await run(agent, { store, sessionId: `s${i}`, message: 'go', llm: scriptedLlm(steps) });
  console.log(label, 'per run ms', ((performance.now() - t0) / 50).toFixed(2));
  for (const [k, v] of stats)
    console.log('  ', k, (v.n / 50).toFixed(1), 'calls/run', ((v.ms / v.n) * 1000).toFixed(1), 'µs each');
}
