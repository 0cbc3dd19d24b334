import { type AgentStore, type AppendInput, run } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import {
  perRoundRatio,
  type RatioSpread,
  ratioSpread,
  type Spread,
  sampleRounds,
  spreadMs,
} from './rounds.ts';
import type { TimedSide } from './sampler.ts';
import {
  benchAgent,
  benchSessionInit,
  benchState,
  fixedLatencyLlm,
  stepMessages,
  withSeqs,
} from './workload.ts';

/** The headline: what durability adds to one tool step of `run()`, against the floor's appends. */
export interface StepResult {
  /** The scripted model's fixed latency per request (a timer), ms. */
  modelLatencyMs: number;
  /** Tool steps per timed run. */
  steps: number;
  /** A whole durable run (lease, load, every step, the answer) on a fresh session. */
  durableRun: Spread;
  /** The same run with no store. */
  statelessRun: Spread;
  /** (durable run − stateless run) ÷ steps, per round: the durable overhead of one tool step. */
  overheadPerStep: Spread;
  /** One `store.append` of write #1 as `run()` sends it (one message, lease token, state). */
  storeAppend: Spread;
  /** The floors; null when the target has none (the overhead is then reported alone). */
  floor: FloorSteps | null;
}

export interface FloorSteps {
  /** ONE floor append of write #1 (one message): the unit the headline is expressed in. */
  append: Spread;
  /** One-commit floor: a step's call and result in one floor append. */
  oneCommit: Spread;
  /** Two-commit floor: the call, then the result, as two floor appends. */
  twoCommit: Spread;
  /** overheadPerStep ÷ append, per round: the headline (target ≤ 1.2 on Postgres). */
  overheadVsAppend: RatioSpread;
  /** storeAppend ÷ append, per round. */
  storeAppendVsAppend: RatioSpread;
}

export interface StepSampling {
  rounds: number;
  samples: number;
  steps: number;
  payloadBytes: number;
  modelLatencyMs: number;
  signal?: AbortSignal;
  onRound?: (done: number) => void;
}

const LEASE_TTL_MS = 3_600_000;

/** A session with one message, for a floor to append to (a floor only appends to sessions that exist). */
export async function floorSession(store: AgentStore, id: string): Promise<{ id: string; head: number }> {
  const [first] = stepMessages(0, 16);
  await store.append(id, {
    expectedSeq: 0,
    messages: [{ ...first, toolCalls: [] }],
    session: { init: benchSessionInit() },
    lease: null,
  });
  return { id, head: 1 };
}

/** Appends with the floor, keeping the head. */
export function floorWriter(floor: RawAppendFloor, session: { id: string; head: number }) {
  return async (messages: Parameters<typeof withSeqs>[0]) => {
    const rows = withSeqs(messages, session.head);
    await floor.append(session.id, session.head, rows);
    session.head += rows.length;
  };
}

/**
 * Store and floor interleaved in every round: a durable `run()` of `steps` tool steps with a model
 * of fixed latency (write #2 overlaps the next request, as run() does), the same run without a
 * store, write #1 through the store, and three floors: one append, a step in one append, a step in
 * two appends. Append sides time `steps` appends in a row and report one.
 */
export async function measureStep(
  store: AgentStore,
  floor: RawAppendFloor | null,
  newId: (label: string) => string,
  sampling: StepSampling,
): Promise<StepResult> {
  const { steps, payloadBytes, modelLatencyMs } = sampling;
  const agent = benchAgent(steps, payloadBytes);
  const durable: TimedSide = () => {
    const sessionId = newId('step');
    const llm = fixedLatencyLlm(steps, modelLatencyMs);
    return async () => {
      const result = await run(agent, { store, sessionId, message: 'go', llm });
      if (result.status !== 'complete') throw new Error(`a benchmark run ended with status ${result.status}`);
    };
  };
  const stateless: TimedSide = () => {
    const llm = fixedLatencyLlm(steps, modelLatencyMs);
    return async () => {
      await run(agent, { message: 'go', llm });
    };
  };

  // write #1 through the store, as run() sends it: one message, under a lease, with the state.
  const leasedId = newId('step-append');
  const holder = crypto.randomUUID();
  const init = benchSessionInit();
  const { epoch } = await store.acquireLease(leasedId, { holder, ttlMs: LEASE_TTL_MS, init });
  let head = 0;
  let appends = 0;
  const storeAppend: TimedSide = () => {
    const inputs: AppendInput[] = [];
    for (let i = 0; i < steps; i++) {
      appends += 1;
      inputs.push({
        expectedSeq: 0,
        messages: [stepMessages(appends, payloadBytes)[0]],
        session: { state: benchState(appends), init },
        lease: { holder, epoch },
      });
    }
    return async () => {
      for (const input of inputs)
        head = (await store.append(leasedId, { ...input, expectedSeq: head })).headSeq;
    };
  };

  let n = 0;
  const floorSide =
    (write: (messages: ReturnType<typeof stepMessages>) => Promise<void>): TimedSide =>
    () => {
      const batches = Array.from({ length: steps }, () => stepMessages(n++, payloadBytes));
      return async () => {
        for (const batch of batches) await write(batch);
      };
    };
  const sides = [durable, stateless, storeAppend];
  if (floor) {
    const [oneAppend, oneCommit, twoCommit] = await Promise.all(
      ['floor-1', 'floor-one-commit', 'floor-two-commit'].map(async (label) =>
        floorWriter(floor, await floorSession(store, newId(label))),
      ),
    );
    sides.push(
      floorSide((step) => oneAppend!([step[0]])),
      floorSide((step) => oneCommit!(step)),
      floorSide(async (step) => {
        await twoCommit!([step[0]]);
        await twoCommit!([step[1]]);
      }),
    );
  }
  const medians = await sampleRounds(sides, {
    rounds: sampling.rounds,
    samples: sampling.samples,
    warmup: 1,
    ...(sampling.signal ? { signal: sampling.signal } : {}),
    ...(sampling.onRound ? { onRound: sampling.onRound } : {}),
  });
  const [durableMs, statelessMs, storeAppendMs, floorMs, oneCommitMs, twoCommitMs] = medians.map((side, i) =>
    // Append sides timed `steps` appends (or steps) in a row: one each.
    i >= 2 ? side.map((ms) => ms / steps) : side,
  ) as [number[], number[], number[], number[]?, number[]?, number[]?];
  const overheadMs = durableMs.map((ms, r) => Math.max(0, ms - statelessMs[r]!) / steps);
  const spread = (values: number[]) => spreadMs(values, sampling.samples);
  return {
    modelLatencyMs,
    steps,
    durableRun: spread(durableMs),
    statelessRun: spread(statelessMs),
    overheadPerStep: spread(overheadMs),
    storeAppend: spread(storeAppendMs),
    floor:
      floorMs && oneCommitMs && twoCommitMs
        ? {
            append: spread(floorMs),
            oneCommit: spread(oneCommitMs),
            twoCommit: spread(twoCommitMs),
            overheadVsAppend: ratioSpread(perRoundRatio(overheadMs, floorMs)),
            storeAppendVsAppend: ratioSpread(perRoundRatio(storeAppendMs, floorMs)),
          }
        : null,
  };
}
