import {
  type AgentStore,
  type AppendInput,
  type MessageRecord,
  type NewMessage,
  run,
} from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import type { OpenTestTarget, RawAppendFloor, RawReader } from '@agentstore/core/testing';
import type { BenchOptions } from './options.ts';
import type { BytesResult, ConcurrencyResult, LoopResult, MeasuredStore, RoundTrips } from './report.ts';
import { sampleInterleaved, type TimedSide } from './sampler.ts';
import { latencyStats, median, round } from './stats.ts';
import { countStoreCalls } from './store-calls.ts';
import { type BenchLoop, benchLoop, benchSessionInit, benchState, payloadBatch } from './workload.ts';

/** Reports the phase a store is in and how far along it is. */
export type PhaseReporter = (phase: string, done: number, total: number) => void;

/** The phases of one store, in order, for progress bars. */
export const measurePhases = (options: BenchOptions): string[] => [
  'append',
  'round trips',
  'loop',
  'bytes',
  ...options.concurrency.map((level) => `concurrency ${level}`),
  'cleanup',
];

const sessionId = (label: string) => `bench-${label}-${crypto.randomUUID()}`;
const LEASE_TTL_MS = 3_600_000;

const withSeqs = (batch: NewMessage[], expectedSeq: number): MessageRecord[] =>
  batch.map((message, i) => ({ ...message, seq: expectedSeq + i + 1 }));

/** A session with one message, for a floor to append to (a floor only appends to sessions that exist). */
async function floorSession(store: AgentStore, created: string[]): Promise<{ id: string; head: number }> {
  const id = sessionId('floor');
  created.push(id);
  await store.append(id, {
    expectedSeq: 0,
    messages: payloadBatch(256).slice(0, 1),
    session: { init: benchSessionInit() },
    lease: null,
  });
  return { id, head: 1 };
}

/** A leased session and an `append` that writes to it as `run()` does: lease token, state, 3 messages. */
async function leasedAppender(store: AgentStore, created: string[], payloadBytes: number) {
  const id = sessionId('append');
  created.push(id);
  const init = benchSessionInit();
  const holder = crypto.randomUUID();
  const { epoch } = await store.acquireLease(id, { holder, ttlMs: LEASE_TTL_MS, init });
  let head = 0;
  let appends = 0;
  return {
    /** Builds the input now (untimed); the returned call appends it. */
    prepare(): () => Promise<void> {
      appends += 1;
      const input: AppendInput = {
        expectedSeq: head,
        messages: payloadBatch(payloadBytes),
        session: { state: benchState(appends), init },
        lease: { holder, epoch },
      };
      return async () => {
        head = (await store.append(id, input)).headSeq;
      };
    },
  };
}

async function floorAppender(
  store: AgentStore,
  floor: RawAppendFloor,
  created: string[],
  payloadBytes: number,
) {
  const session = await floorSession(store, created);
  return {
    prepare(): () => Promise<void> {
      const rows = withSeqs(payloadBatch(payloadBytes), session.head);
      return async () => {
        await floor.append(session.id, session.head, rows);
        session.head += rows.length;
      };
    },
  };
}

/** One durable run of the scripted loop on a fresh session; throws unless it completes. */
async function durableRun(store: AgentStore, loop: BenchLoop, id: string): Promise<void> {
  const result = await run(loop.agent, { store, sessionId: id, message: 'go', llm: loop.llm() });
  if (result.status !== 'complete') throw new Error(`a benchmark run ended with status ${result.status}`);
}

/** What round trips are counted on: the timed store itself, by the target's own counter, or its `store.*` calls. */
interface RoundTripCounter {
  method: 'driver' | 'store-calls';
  unit: string;
  store: AgentStore;
  floor: RawAppendFloor | null;
  count(subject: AgentStore | RawAppendFloor): number;
}

function roundTripCounter(target: OpenTestTarget, store: AgentStore): RoundTripCounter {
  const floor = target.capabilities?.floor ?? null;
  if (target.roundTrips) {
    const count = target.roundTrips.bind(target);
    return {
      method: 'driver',
      unit: target.roundTripUnit ?? 'round trips (as the target counts them)',
      store,
      floor,
      count,
    };
  }
  // No counter at the driver: count `store.*` calls on a wrapper of the same store, and say so.
  const calls = countStoreCalls(store);
  return {
    method: 'store-calls',
    unit: 'store.* calls (the target counts no round trips)',
    store: calls.store,
    floor: null,
    count: () => calls.count(),
  };
}

async function measureRoundTrips(
  counter: RoundTripCounter,
  loop: BenchLoop,
  options: BenchOptions,
  created: string[],
): Promise<RoundTrips> {
  const counts = async (subject: AgentStore | RawAppendFloor, call: () => Promise<void>) => {
    const before = counter.count(subject);
    await call();
    return counter.count(subject) - before;
  };
  const appender = await leasedAppender(counter.store, created, options.payloadBytes);
  // The first calls on a connection may prepare statements or load scripts: not counted.
  for (let i = 0; i < 2; i++) await appender.prepare()();
  const perAppend: number[] = [];
  for (let i = 0; i < 5; i++) perAppend.push(await counts(counter.store, appender.prepare()));

  let floorPerAppend: number | null = null;
  if (counter.floor) {
    const floor = await floorAppender(counter.store, counter.floor, created, options.payloadBytes);
    for (let i = 0; i < 2; i++) await floor.prepare()();
    const perFloor: number[] = [];
    for (let i = 0; i < 5; i++) perFloor.push(await counts(counter.floor, floor.prepare()));
    floorPerAppend = median(perFloor);
  }

  const warmId = sessionId('count-warm');
  const countedId = sessionId('count');
  created.push(warmId, countedId);
  await durableRun(counter.store, loop, warmId);
  const calls = countStoreCalls(counter.store);
  const perRun = await counts(counter.store, () => durableRun(calls.store, loop, countedId));
  return {
    method: counter.method,
    unit: counter.unit,
    perAppend: median(perAppend),
    floorPerAppend,
    perRun,
    perStep: round(perRun / options.steps, 2),
    storeCallsPerRun: calls.count(),
  };
}

async function measureLoop(
  store: AgentStore,
  loop: BenchLoop,
  options: BenchOptions,
  created: string[],
  progress: (done: number) => void,
  signal?: AbortSignal,
): Promise<LoopResult> {
  const durable: TimedSide = () => {
    const id = sessionId('loop');
    created.push(id);
    return () => durableRun(store, loop, id);
  };
  const stateless: TimedSide = () => {
    const llm = loop.llm();
    return async () => {
      await run(loop.agent, { message: 'go', llm });
    };
  };
  const [durableTimes, statelessTimes] = await sampleInterleaved([durable, stateless], {
    warmup: 2,
    samples: options.loopIterations,
    onSample: progress,
    ...(signal ? { signal } : {}),
  });
  const durableStats = latencyStats(durableTimes!);
  const statelessStats = latencyStats(statelessTimes!);
  return {
    steps: options.steps,
    durable: durableStats,
    stateless: statelessStats,
    overheadPerStepUs: round((durableStats.p50Us - statelessStats.p50Us) / options.steps),
    ratio: round(durableStats.p50Us / statelessStats.p50Us, 3),
  };
}

/** One run's stored bytes: the rows the raw reader finds (checked against `load`), per step. */
async function measureBytes(
  store: AgentStore,
  raw: RawReader | null,
  loop: BenchLoop,
  options: BenchOptions,
  created: string[],
): Promise<BytesResult> {
  const id = sessionId('bytes');
  created.push(id);
  await durableRun(store, loop, id);
  const loaded = await store.load(id);
  if (!loaded) throw new Error(`the session of a completed run (${id}) cannot be loaded`);
  if (raw) {
    const rows = await raw.messages(id);
    const same =
      rows.length === loaded.messages.length &&
      rows.every((row, i) => row.seq === loaded.messages[i]!.seq && row.id === loaded.messages[i]!.id);
    if (!same || !(await raw.session(id))) {
      throw new Error(
        `the raw reader does not find the ${loaded.messages.length} messages load returns for ${id}`,
      );
    }
  }
  const messageBytes = loaded.messages.reduce(
    (sum, { seq: _seq, ...message }) => sum + messageByteLength(message),
    0,
  );
  const sessionRecordBytes = Buffer.byteLength(JSON.stringify(loaded.session), 'utf8');
  const messageBytesPerStep = round(messageBytes / options.steps);
  return {
    source: raw ? 'raw-reader' : 'load',
    steps: options.steps,
    messages: loaded.messages.length,
    messageBytes,
    messageBytesPerStep,
    sessionRecordBytes,
    perStep: round(messageBytesPerStep + sessionRecordBytes),
  };
}

/** `sessions` whole runs on fresh sessions, `concurrency` workers pulling the next one. */
async function measureThroughput(
  store: AgentStore,
  loop: BenchLoop,
  options: BenchOptions,
  concurrency: number,
  created: string[],
  progress: (done: number) => void,
  signal?: AbortSignal,
): Promise<ConcurrencyResult> {
  const ids = Array.from({ length: options.sessions }, () => sessionId(`c${concurrency}`));
  created.push(...ids);
  const workers = Math.min(concurrency, ids.length);
  let next = 0;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < ids.length) {
        signal?.throwIfAborted();
        const id = ids[next++]!;
        await durableRun(store, loop, id);
        progress(++done);
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  return {
    concurrency,
    workers,
    sessions: ids.length,
    steps: options.steps,
    elapsedMs: round(elapsedMs),
    stepsPerSecond: round((ids.length * options.steps) / (elapsedMs / 1000)),
  };
}

/** Every figure for one opened target. */
export async function measureTarget(
  target: OpenTestTarget,
  options: BenchOptions,
  report: PhaseReporter,
  signal?: AbortSignal,
): Promise<MeasuredStore> {
  const started = performance.now();
  const server = await target
    .describe()
    .catch((error: unknown) => `${target.name} (describe() failed: ${(error as Error).message})`);
  const store = await target.createStore();
  const floor = target.capabilities?.floor ?? null;
  const raw = target.capabilities?.raw ?? null;
  const loop = benchLoop(options.steps, options.payloadBytes);
  const created: string[] = [];
  try {
    report('append', 0, options.iterations);
    const appender = await leasedAppender(store, created, options.payloadBytes);
    const sides: TimedSide[] = [() => appender.prepare()];
    if (floor) {
      const floorSide = await floorAppender(store, floor, created, options.payloadBytes);
      sides.push(() => floorSide.prepare());
    }
    const [appendTimes, floorTimes] = await sampleInterleaved(sides, {
      warmup: Math.max(3, Math.round(options.iterations / 10)),
      samples: options.iterations,
      onSample: (done) => report('append', done, options.iterations),
      ...(signal ? { signal } : {}),
    });
    const append = latencyStats(appendTimes!);
    const floorStats = floorTimes ? latencyStats(floorTimes) : null;

    report('round trips', 0, 1);
    // Counted on the very store just timed, by the target's own counter.
    const roundTrips = await measureRoundTrips(roundTripCounter(target, store), loop, options, created);
    report('round trips', 1, 1);

    report('loop', 0, options.loopIterations);
    const loopResult = await measureLoop(
      store,
      loop,
      options,
      created,
      (done) => report('loop', done, options.loopIterations),
      signal,
    );

    report('bytes', 0, 1);
    const bytes = await measureBytes(store, raw, loop, options, created);
    report('bytes', 1, 1);

    const concurrency: ConcurrencyResult[] = [];
    for (const level of options.concurrency) {
      const phase = `concurrency ${level}`;
      report(phase, 0, options.sessions);
      concurrency.push(
        await measureThroughput(
          store,
          loop,
          options,
          level,
          created,
          (done) => report(phase, done, options.sessions),
          signal,
        ),
      );
    }

    // Leave nothing behind on a server the user runs (AGENTSTORE_* URLs): delete every session made here.
    report('cleanup', 0, created.length);
    let cleaned = 0;
    const queue = [...created];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
          await store.deleteSession(id);
          report('cleanup', ++cleaned, created.length);
        }
      }),
    );

    const notes = [...(target.notes ?? [])];
    return {
      store: target.name,
      status: 'ok',
      name: target.name,
      server,
      notes,
      append,
      floor: floorStats,
      floorRatio: floorStats ? round(append.p50Us / floorStats.p50Us, 3) : null,
      roundTrips,
      loop: loopResult,
      concurrency,
      bytes,
      durationMs: round(performance.now() - started),
    };
  } finally {
    await (target.destroyStore ? target.destroyStore(store) : store.close());
  }
}
