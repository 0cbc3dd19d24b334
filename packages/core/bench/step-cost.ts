// Loop CPU per tool step against the length of the session's history: does a step cost the same
// at 10 stored messages as at 10,000? Each run resumes a session of H messages (seeded through
// the contract on the durable memory store, so no I/O is timed), adds a message and runs STEPS
// tool steps with a model that answers in O(1) and a no-op tool. A step's time is the interval
// between two consecutive model calls (write #1, the handler, write #2 and the loop's
// bookkeeping); the run's setup (lease, load, fold) falls outside it. History sizes are
// interleaved within every round, in rotating order, so machine load hits them all alike.
// Run: pnpm --filter @agentstore/core bench:steps [-- --rounds 15 --steps 60]
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type AgentStore, defineAgent, type LlmAdapter, type NewMessage, run, tool } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

const { values } = parseArgs({
  // pnpm passes a literal `--` through.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    rounds: { type: 'string', default: '15' },
    steps: { type: 'string', default: '60' },
    sizes: { type: 'string', default: '10,100,1000,10000' },
  },
});
const ROUNDS = Number(values.rounds);
const STEPS = Number(values.steps);
const SIZES = values.sizes.split(',').map(Number);

const agent = defineAgent({
  name: 'bench',
  instructions: 'bench',
  maxIterations: STEPS + 1,
  tools: {
    step: tool({ description: 'one step', input: z.object({ i: z.number() }), handler: ({ i }) => ({ i }) }),
  },
});

const at = new Date().toISOString();
async function seed(store: AgentStore, sessionId: string, size: number) {
  const messages: NewMessage[] = [];
  for (let i = 0; messages.length < size; i++) {
    const call = { id: `old-${i}`, name: 'step', input: { i } };
    messages.push(
      { id: `u${i}`, role: 'user', content: `turn ${i}`, createdAt: at },
      { id: `a${i}`, role: 'assistant', content: '', toolCalls: [call], createdAt: at },
      {
        id: `t${i}`,
        role: 'tool',
        content: `{"i":${i}}`,
        toolCallId: call.id,
        toolName: 'step',
        createdAt: at,
      },
      { id: `f${i}`, role: 'assistant', content: `answer ${i}`, createdAt: at },
    );
  }
  let head = 0;
  for (let i = 0; i < size; i += 500) {
    const batch = messages.slice(i, Math.min(i + 500, size));
    ({ headSeq: head } = await store.append(sessionId, {
      expectedSeq: head,
      messages: batch,
      session: { init: { agentName: 'bench', ownerId: null, tenantId: null, state: null } },
      lease: null,
    }));
  }
}

/** O(1) per call: answers by call count, records when each call arrived. */
function timedModel(stamps: number[]): LlmAdapter {
  let calls = 0;
  return {
    async generate() {
      stamps.push(performance.now());
      calls += 1;
      return calls <= STEPS
        ? { text: '', toolCalls: [{ name: 'step', input: { i: calls } }] }
        : { text: 'done', toolCalls: [] };
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Median µs per step of one run on a fresh session of `size` stored messages. */
async function oneRun(size: number): Promise<number> {
  const store = durableMemoryStore();
  await seed(store, 's', size);
  const stamps: number[] = [];
  const result = await run(agent, { store, sessionId: 's', message: 'go', llm: timedModel(stamps) });
  if (result.status !== 'complete') throw new Error(`run ended ${result.status}`);
  const intervals = stamps.slice(1).map((t, i) => (t - stamps[i]!) * 1000);
  return median(intervals.slice(5)); // the first steps warm the JIT
}

for (const size of SIZES) await oneRun(size); // warm-up
const perSize = new Map<number, number[]>(SIZES.map((s) => [s, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < SIZES.length; k++) {
    const size = SIZES[(round + k) % SIZES.length]!;
    perSize.get(size)!.push(await oneRun(size));
  }
}

const fmt = (us: number) => us.toFixed(1).padStart(8);
console.log(
  `loop time per tool step (µs), ${ROUNDS} interleaved rounds × ${STEPS} steps, durable memory store`,
);
console.log('history msgs   median      min      max');
const base = median(perSize.get(SIZES[0]!)!);
for (const size of SIZES) {
  const xs = perSize.get(size)!;
  console.log(
    `${String(size).padStart(12)} ${fmt(median(xs))} ${fmt(Math.min(...xs))} ${fmt(Math.max(...xs))}   ${(median(xs) / base).toFixed(2)}×`,
  );
}
const cpus = (await import('node:os')).cpus();
console.log(
  `machine: ${process.platform} ${process.arch}, ${cpus.length} × ${cpus[0]?.model}, Node ${process.version}`,
);
