// One durable tool step (the call committed, a no-op tool, the result committed; the same
// payload) through agentstore, LangGraph's checkpointers and Mastra's stores, next to the
// hand-written floors, interleaved in ONE run on the same Postgres and the same file system.
// Runs are timed at S and 2S steps, so what a run pays once (agentstore's lease, load and answer;
// LangGraph's first and last super-steps) cancels out of the marginal step, as in agentstore-bench.
// Not run by CI; see README.md for the exact commands.
//   node peers.ts [--rounds 5] [--samples 6] [--steps 10] [--model-latency 2] [--pg postgres://…]
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  describeMachine,
  fixedLatencyLlm,
  floorSession,
  floorWriter,
  formatSpread,
  machineInfo,
  machineSnapshot,
  marginalCosts,
  type Spread,
  sampleRounds,
  spreadMs,
  stepMessages,
  storageOf,
} from '@agentstore/bench';
import { type AgentStore, run } from '@agentstore/core';
import type { OpenTestTarget, RawAppendFloor } from '@agentstore/core/testing';
import { postgresTestTarget } from '@agentstore/postgres/testing';
import { sqliteTestTarget } from '@agentstore/sqlite/testing';
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { type BaseCheckpointSaver, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { LibSQLStore } from '@mastra/libsql';
import { PostgresStore } from '@mastra/pg';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    samples: { type: 'string', default: '6' },
    steps: { type: 'string', default: '10' },
    'model-latency': { type: 'string', default: '2' },
    payload: { type: 'string', default: '300' },
    pg: {
      type: 'string',
      default: process.env.AGENTSTORE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    },
  },
});
const rounds = Number(values.rounds);
const samples = Number(values.samples);
const steps = Number(values.steps);
const modelLatencyMs = Number(values['model-latency']);
const payloadBytes = Number(values.payload);
const pgUrl = values.pg!;
const dataDir = mkdtempSync(join(tmpdir(), 'agentstore-peers-'));

// Round trips counted at the driver: every pg copy in the tree (Mastra may bring its own) counts
// its client queries. Sides run one at a time, so a delta around a side is that side's alone.
let pgQueries = 0;
const requireFrom = (pkg: string) => createRequire(createRequire(import.meta.url).resolve(pkg));
for (const from of [
  import.meta.url,
  '@mastra/pg',
  '@langchain/langgraph-checkpoint-postgres',
  '@agentstore/postgres',
]) {
  const load = from === import.meta.url ? createRequire(import.meta.url) : requireFrom(from);
  const client = (load('pg') as typeof pg).Client.prototype as unknown as {
    query: (...a: unknown[]) => unknown;
    __counted?: true;
  };
  if (client.__counted) continue;
  const query = client.query;
  client.query = function (this: unknown, ...args: unknown[]) {
    pgQueries += 1;
    return query.apply(this, args);
  };
  client.__counted = true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const toolOutput = JSON.stringify({ data: 'x'.repeat(payloadBytes) });

/** A side: prepares untimed, returns the timed work of `steps` tool steps, and whether it counts pg round trips. */
interface Side {
  name: string;
  /** What one sample does: a whole run of `steps` tool steps, or `steps` steps of writes. */
  kind: 'run' | 'steps';
  steps: number;
  pg: boolean;
  prepare: () => Promise<() => Promise<unknown>>;
}

// ---------- agentstore and the floors ----------
/** The bench agent for runs of `n` tool steps. */
async function benchAgent(n: number) {
  const { defineAgent, tool } = await import('@agentstore/core');
  return defineAgent({
    name: 'agentstore-bench',
    instructions: 'Work through the steps.',
    maxIterations: n + 1,
    tools: {
      work: tool({
        description: 'One step of work.',
        input: { '~standard': { version: 1, vendor: 'peers', validate: (value: unknown) => ({ value }) } },
        safeToRetry: true,
        handler: () => ({ data: 'x'.repeat(payloadBytes) }),
      }),
    },
  });
}

/** A whole run is timed at S and at 2S steps: the marginal step is their difference ÷ S. */
const runLengths = () => [steps, 2 * steps];
const lengthName = (name: string, n: number) => `${name} ×${n}`;

async function agentstoreSides(label: string, target: OpenTestTarget, counts: boolean): Promise<Side[]> {
  const store: AgentStore = await target.createStore();
  const floor = target.capabilities!.floor as RawAppendFloor;
  const id = (what: string) => `peers-${what}-${crypto.randomUUID()}`;
  const floorTwo = floorWriter(floor, await floorSession(store, id('floor2')));
  const floorOne = floorWriter(floor, await floorSession(store, id('floor1')));
  let n = 0;
  const runs: Side[] = [];
  for (const length of runLengths()) {
    const agent = await benchAgent(length);
    runs.push({
      name: lengthName(`agentstore ${label}: run()`, length),
      kind: 'run',
      steps: length,
      pg: counts,
      prepare: async () => {
        const sessionId = id('run');
        return () =>
          run(agent, { store, sessionId, message: 'go', llm: fixedLatencyLlm(length, modelLatencyMs) });
      },
    });
  }
  return [
    ...runs,
    {
      name: `${label} floor: two commits`,
      kind: 'steps',
      steps,
      pg: counts,
      prepare: async () => {
        const batch = Array.from({ length: steps }, () => stepMessages(n++, payloadBytes));
        return async () => {
          for (const [call, result] of batch) {
            await floorTwo([call]);
            await floorTwo([result]);
          }
        };
      },
    },
    {
      name: `${label} floor: one commit`,
      kind: 'steps',
      steps,
      pg: counts,
      prepare: async () => {
        const batch = Array.from({ length: steps }, () => stepMessages(n++, payloadBytes));
        return async () => {
          for (const step of batch) await floorOne(step);
        };
      },
    },
  ];
}

// ---------- LangGraph: a ReAct tool step is two super-steps (agent, tools), each checkpointed ----------
function reactGraph(checkpointer: BaseCheckpointSaver | undefined, length: number) {
  let call = 0;
  const agent = async (state: typeof MessagesAnnotation.State) => {
    await sleep(modelLatencyMs);
    const n = call++;
    const calls = state.messages.filter((m: BaseMessage) => m.getType() === 'ai').length;
    if (calls >= length) return { messages: [new AIMessage('done')] };
    return {
      messages: [
        new AIMessage({ content: `step ${n}`, tool_calls: [{ id: `call_${n}`, name: 'work', args: { n } }] }),
      ],
    };
  };
  const tools = async (state: typeof MessagesAnnotation.State) => {
    const last = state.messages.at(-1) as AIMessage;
    return {
      messages: (last.tool_calls ?? []).map(
        (c) => new ToolMessage({ content: toolOutput, tool_call_id: c.id!, name: c.name }),
      ),
    };
  };
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', tools)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) =>
      ((state.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END,
    )
    .addEdge('tools', 'agent');
  return graph.compile(checkpointer ? { checkpointer } : {});
}

function langGraphSides(
  name: string,
  checkpointer: BaseCheckpointSaver | undefined,
  counts: boolean,
): Side[] {
  return runLengths().map((length) => ({
    name: lengthName(name, length),
    kind: 'run',
    steps: length,
    pg: counts,
    prepare: async () => {
      const app = reactGraph(checkpointer, length);
      const config = { configurable: { thread_id: crypto.randomUUID() }, recursionLimit: 4 * length + 10 };
      return () => app.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    },
  }));
}

// ---------- Mastra: per step, save the intent (tool call), then the result ----------
type MastraMemory = {
  saveThread(args: {
    thread: { id: string; resourceId: string; title?: string; createdAt: Date; updatedAt: Date };
  }): Promise<unknown>;
  saveMessages(args: { messages: unknown[] }): Promise<unknown>;
};

async function mastraSide(
  name: string,
  storage: { init(): Promise<void>; getStore(domain: 'memory'): Promise<unknown> },
  counts: boolean,
): Promise<Side> {
  await storage.init();
  const memory = (await storage.getStore('memory')) as MastraMemory;
  let n = 0;
  return {
    name,
    kind: 'steps',
    steps,
    pg: counts,
    prepare: async () => {
      const threadId = crypto.randomUUID();
      const resourceId = 'peers';
      const now = new Date();
      await memory.saveThread({
        thread: { id: threadId, resourceId, title: 'peers', createdAt: now, updatedAt: now },
      });
      return async () => {
        for (let s = 0; s < steps; s++) {
          const id = crypto.randomUUID();
          const toolCallId = `call_${n++}`;
          const message = (state: 'call' | 'result') => ({
            id,
            threadId,
            resourceId,
            role: 'assistant',
            createdAt: now,
            content: {
              format: 2,
              parts: [
                {
                  type: 'tool-invocation',
                  toolInvocation: {
                    state,
                    toolCallId,
                    toolName: 'work',
                    args: { n },
                    ...(state === 'result' ? { result: toolOutput } : {}),
                  },
                },
              ],
            },
          });
          await memory.saveMessages({ messages: [message('call')] });
          await memory.saveMessages({ messages: [message('result')] });
        }
      };
    },
  };
}

async function main() {
  const atStart = machineInfo();
  const pgTarget = await postgresTestTarget({ connectionString: pgUrl, name: 'postgres' });
  const sqliteTarget = await sqliteTestTarget({ path: join(dataDir, 'agentstore.db'), name: 'sqlite' });
  const langGraphSchema = `langgraph_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const pgSaver = PostgresSaver.fromConnString(pgUrl, { schema: langGraphSchema });
  await pgSaver.setup();
  const sqliteSaver = SqliteSaver.fromConnString(join(dataDir, 'langgraph.db'));
  const mastraSchema = `mastra_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const mastraPg = new PostgresStore({ id: 'peers-pg', connectionString: pgUrl, schemaName: mastraSchema });
  const mastraLibsql = new LibSQLStore({ id: 'peers-libsql', url: `file:${join(dataDir, 'mastra.db')}` });

  const sides: Side[] = [
    ...(await agentstoreSides('postgres', pgTarget, true)),
    ...(await agentstoreSides('sqlite', sqliteTarget, false)),
    ...langGraphSides('LangGraph without a checkpointer', undefined, false),
    ...langGraphSides('LangGraph PostgresSaver', pgSaver, true),
    ...langGraphSides('LangGraph SqliteSaver', sqliteSaver, false),
    await mastraSide('Mastra PostgresStore', mastraPg as never, true),
    await mastraSide('Mastra LibSQLStore', mastraLibsql as never, false),
  ];
  // Our own no-store baseline: the same runs without a store.
  for (const length of runLengths()) {
    const bareAgent = await benchAgent(length);
    sides.push({
      name: lengthName('agentstore run() without a store', length),
      kind: 'run',
      steps: length,
      pg: false,
      prepare: async () => () =>
        run(bareAgent, { message: 'go', llm: fixedLatencyLlm(length, modelLatencyMs) }),
    });
  }

  // Round trips per side, one sample each, before timing (counted at the pg driver).
  const roundTrips = new Map<string, number>();
  for (const side of sides) {
    const work = await side.prepare();
    await work(); // warm: prepared statements, schema caches
    const again = await side.prepare();
    const before = pgQueries;
    await again();
    if (side.pg) roundTrips.set(side.name, pgQueries - before);
  }

  // Each sample's preparation (a fresh session or thread: Mastra's saveThread is a write) runs
  // before the previous sample of that side is timed, so it is never inside a timed call.
  const eager = sides.map((side) => {
    let next = side.prepare();
    return () => {
      const current = next;
      next = side.prepare();
      let work: () => Promise<unknown>;
      return async () => {
        work ??= await current;
        await work();
      };
    };
  });
  const medians = await sampleRounds(
    eager.map((side) => () => side()),
    { rounds, samples, warmup: 1, onRound: (r) => console.error(`round ${r}/${rounds}`) },
  );
  const roundMedians = (name: string) => medians[sides.findIndex((x) => x.name === name)]!;
  /** `steps` steps of writes, per step. */
  const perStep = (name: string): Spread =>
    spreadMs(
      roundMedians(name).map((ms) => ms / steps),
      samples,
    );
  /** A run's marginal step: ((run 2S − run S) − (baseline 2S − baseline S)) ÷ S, per round. */
  const marginal = (name: string, baseline: string): Spread => {
    const [short, long] = runLengths().map((n) => roundMedians(lengthName(name, n)));
    const [baseShort, baseLong] = runLengths().map((n) => roundMedians(lengthName(baseline, n)));
    const { marginal: perRound } = marginalCosts(steps, {
      durable: short!,
      durableLong: long!,
      stateless: baseShort!,
      statelessLong: baseLong!,
    });
    return spreadMs(perRound, samples);
  };
  /** Round trips of one more step: the run's (2S − S) ÷ S; writes' count ÷ S. */
  const tripsPerStep = (name: string, isRun: boolean): number | undefined => {
    if (!isRun) {
      const total = roundTrips.get(name);
      return total === undefined ? undefined : total / steps;
    }
    const [short, long] = runLengths().map((n) => roundTrips.get(lengthName(name, n)));
    return short === undefined || long === undefined ? undefined : (long - short) / steps;
  };
  const agentstoreBare = 'agentstore run() without a store';
  const langGraphBare = 'LangGraph without a checkpointer';
  const rows: [string, number | undefined, Spread][] = [
    [
      'agentstore (Postgres): run(), marginal step',
      tripsPerStep('agentstore postgres: run()', true),
      marginal('agentstore postgres: run()', agentstoreBare),
    ],
    [
      'Postgres floor: two commits',
      tripsPerStep('postgres floor: two commits', false),
      perStep('postgres floor: two commits'),
    ],
    [
      'Postgres floor: one commit',
      tripsPerStep('postgres floor: one commit', false),
      perStep('postgres floor: one commit'),
    ],
    [
      'LangGraph PostgresSaver: graph, marginal step',
      tripsPerStep('LangGraph PostgresSaver', true),
      marginal('LangGraph PostgresSaver', langGraphBare),
    ],
    [
      'Mastra PostgresStore: intent, then result',
      tripsPerStep('Mastra PostgresStore', false),
      perStep('Mastra PostgresStore'),
    ],
    [
      'agentstore (SQLite): run(), marginal step',
      undefined,
      marginal('agentstore sqlite: run()', agentstoreBare),
    ],
    ['SQLite floor: two commits', undefined, perStep('sqlite floor: two commits')],
    ['SQLite floor: one commit', undefined, perStep('sqlite floor: one commit')],
    [
      'LangGraph SqliteSaver: graph, marginal step',
      undefined,
      marginal('LangGraph SqliteSaver', langGraphBare),
    ],
    ['Mastra LibSQLStore: intent, then result', undefined, perStep('Mastra LibSQLStore')],
  ];
  const pgFloor = rows[1]![2].p50Us;
  const sqliteFloor = rows[6]![2].p50Us;
  const fs = storageOf(dataDir);
  console.log(
    `| per tool step (runs of ${steps} and ${2 * steps} steps, model ${modelLatencyMs} ms, ${payloadBytes} B tool output) | time / step: median of ${rounds} round medians (lowest–highest) | ÷ two-commit floor | pg round trips / step |`,
  );
  console.log('|---|---:|---:|---:|');
  rows.forEach(([label, rt, spread], i) => {
    const floor = i < 5 ? pgFloor : sqliteFloor;
    console.log(
      `| ${label} | ${formatSpread(spread)} | ${(spread.p50Us / floor).toFixed(2)}× | ${rt === undefined ? '–' : rt.toFixed(1)} |`,
    );
  });
  const admin = new pg.Pool({ connectionString: pgUrl });
  const { rows: settings } = await admin.query(
    "SELECT name, setting FROM pg_settings WHERE name IN ('server_version','fsync','synchronous_commit','wal_sync_method','full_page_writes')",
  );
  console.log(
    `\nMachine: ${describeMachine(atStart, machineSnapshot())}. Postgres: ${settings.map((r: { name: string; setting: string }) => `${r.name}=${r.setting}`).join(', ')}. ` +
      `SQLite/libSQL files on ${fs ? `${fs.fsType} (${fs.mountPoint})` : 'unknown'}; agentstore SQLite ${JSON.stringify((await sqliteTarget.durabilitySettings!()).settings)}.`,
  );

  await pgSaver.end();
  await (mastraPg as unknown as { close(): Promise<void> }).close();
  // Leave nothing behind on the server: the peers' schemas go as agentstore's does.
  for (const schema of [langGraphSchema, mastraSchema])
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
  await pgTarget.close();
  await sqliteTarget.close();
  rmSync(dataDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
