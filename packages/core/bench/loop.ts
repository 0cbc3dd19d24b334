// Times a 10-step scripted tool loop (10 tool steps + the final answer: 21 appends, one lease,
// one load) on the test-only durable memory store, against the same loop run statelessly.
// Run: pnpm --filter @agentstore/core bench
import { z } from 'zod';
import { defineAgent, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

const agent = defineAgent({
  name: 'bench',
  instructions: 'bench',
  maxIterations: 20,
  tools: {
    step: tool({ description: 'one step', input: z.object({ i: z.number() }), handler: ({ i }) => ({ i }) }),
  },
});
const script = [
  ...Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: 'step', input: { i } }] })),
  { text: 'done' },
];

async function timeRuns(label: string, once: (i: number) => Promise<unknown>, iterations = 300) {
  for (let i = 0; i < 30; i++) await once(-i - 1); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await once(i);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  const p = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  console.log(`${label.padEnd(34)} p50 ${p(0.5).toFixed(3)} ms   p99 ${p(0.99).toFixed(3)} ms`);
  return p(0.5);
}

const store = durableMemoryStore();
const durable = await timeRuns('10-step loop, durable (memory)', (i) =>
  run(agent, { store, sessionId: `s${i}`, message: 'go', llm: scriptedLlm(script) }),
);
const stateless = await timeRuns('10-step loop, stateless', () =>
  run(agent, { message: 'go', llm: scriptedLlm(script) }),
);
console.log(`durable overhead per step: ${(((durable - stateless) / 10) * 1000).toFixed(1)} µs`);
console.log(`machine: ${process.platform} ${process.arch}, Node ${process.version}`);
