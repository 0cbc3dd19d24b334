import { type AgentStore, type AppendInput, type LlmAdapter, type NewMessage, run } from '@agentstore/core';
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
import { mean, round, sum } from './stats.ts';
import {
  benchAgent,
  benchSessionInit,
  benchState,
  fixedLatencyLlm,
  stepMessages,
  waitUntil,
  withSeqs,
} from './workload.ts';

/**
 * The headline: what durability adds to ONE MORE tool step of `run()` (the marginal cost), apart
 * from what it adds once per run (lease, load, the final answer, release), against the floor.
 */
export interface StepResult {
  /** The scripted model's fixed latency per request (never shorter), ms. */
  modelLatencyMs: number;
  /**
   * The headline, per round: what durability adds to each tool step on the loop's path, from the
   * model's side. For every tool step the model records the time from the moment its reply was
   * due to the next request (write #1, the tool, any lateness of the reply; write #2 starts after
   * the request, as run() sends it);
   * per round, the mean over every tool step but each run's first of the durable runs less the
   * same of the runs without a store. A run's first step is left out on both sides: its write #1
   * also stores the user's message and is the session's first append (per-run work, in
   * `fixedPerRun`); `overheadAllStepsPerStep` keeps it.
   */
  overheadPerStep: Spread;
  /** The same with each run's first tool step counted too. */
  overheadAllStepsPerStep: Spread;
  /** Tool steps of the short timed run (S); the long run has twice as many. */
  steps: number;
  /** A whole durable run of S steps (lease, load, every step, the answer, release) on a fresh session. */
  durableRun: Spread;
  /** The same of 2S steps. */
  durableLongRun: Spread;
  /** The run of S steps with no store. */
  statelessRun: Spread;
  /** The run of 2S steps with no store. */
  statelessLongRun: Spread;
  /**
   * The same from whole-run wall times, per round: ((durable 2S − durable S) − (stateless 2S −
   * stateless S)) ÷ S; the per-run costs cancel out. A cross-check of the headline, noisier.
   */
  marginalPerStep: Spread;
  /** Per round: durable S − stateless S − S × marginal: what durability adds once per run. */
  fixedPerRun: Spread;
  /** One `store.append` of write #1 as `run()` sends it (one message, lease token, state). */
  storeAppend: Spread;
  /** The floors; null when the target has none (the overhead is then reported alone). */
  floor: FloorSteps | null;
}

export interface FloorSteps {
  /**
   * ONE floor append of write #1 paced as in a step, the unit the headline is expressed in: a
   * hand-written loop drives the floor with the same model (write #1 awaited, the next request,
   * then write #2, awaited before the next write #1), measured as the headline is, less the same
   * loop writing nothing (`handLoop`); 3S steps a sample, as many gaps as the headline's runs.
   * A loop that does nothing else: the cheapest context a floor append can have.
   */
  pacedAppend: Spread;
  /**
   * The headline: the mean overhead over every round ÷ the mean paced floor append over every
   * round (rounds have equal samples, so this pools them), the figure the target (≤ 1.2 on
   * Postgres) is judged on. A median of per-round ratios would let one odd round of the floor
   * carry a pass.
   */
  overheadVsPacedAppendPooled: number;
  /**
   * The same pooled ratio with each run's first tool step counted on the durable side (where it
   * also stores the user's message and creates the session) against the same paced floor.
   */
  overheadAllStepsVsPacedAppendPooled: number;
  /** overheadPerStep ÷ pacedAppend, per round: the spread behind the headline. */
  overheadVsPacedAppend: RatioSpread;
  /**
   * Context, not the headline: ONE floor append of write #1 made from inside the same agent loop
   * (`floorInLoop`: `run()` with no store, whose tool awaits the floor's write #1 and whose model
   * starts the floor's write #2 after each next request), runs of S and 2S steps, less the same
   * runs writing nothing (so the harness's own cost cancels), each run's first step left out.
   */
  inLoopAppend: Spread;
  /** overheadPerStep ÷ inLoopAppend: pooled, as the headline is. */
  overheadVsInLoopAppendPooled: number;
  /** overheadPerStep ÷ inLoopAppend, per round. */
  overheadVsInLoopAppend: RatioSpread;
  /**
   * Per round, inLoopAppend − pacedAppend: what the agent loop's own work around it adds to the
   * same floor append (its code and data no longer hot). The store's append runs inside run(),
   * in that context; the headline does not credit it.
   */
  inLoopContext: Spread;
  /** ONE floor append of write #1 (one message), S in a row (a connection never idle). */
  append: Spread;
  /** One-commit floor: a step's call and result in one floor append. */
  oneCommit: Spread;
  /** Two-commit floor: the call, then the result, as two floor appends. */
  twoCommit: Spread;
  /** overheadPerStep ÷ append (back-to-back), per round: the same overhead in unpaced floor appends. */
  overheadVsAppend: RatioSpread;
  /** marginalPerStep ÷ append, per round. */
  marginalVsAppend: RatioSpread;
  /** storeAppend ÷ append, per round. */
  storeAppendVsAppend: RatioSpread;
  /** marginalPerStep ÷ twoCommit, per round: a durable step against the same step written by hand. */
  marginalVsTwoCommit: RatioSpread;
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

/** Per round: the marginal cost of a step and the fixed cost of a run, from runs of S and 2S steps. */
export function marginalCosts(
  steps: number,
  runs: { durable: number[]; durableLong: number[]; stateless: number[]; statelessLong: number[] },
): { marginal: number[]; fixed: number[] } {
  const marginal = runs.durable.map(
    (short, r) => (runs.durableLong[r]! - short - (runs.statelessLong[r]! - runs.stateless[r]!)) / steps,
  );
  const fixed = runs.durable.map((short, r) => short - runs.stateless[r]! - steps * marginal[r]!);
  return { marginal, fixed };
}

/**
 * Per round, the mean of the step gaps recorded by the runs of that round (several sides pooled).
 * Each side's first run is the warm-up `sampleRounds` throws away; then each round has `samples`.
 * `skipFirstStep` leaves out each run's first gap (its first tool step).
 */
export function roundMeanGaps(
  sides: number[][][],
  rounds: number,
  samples: number,
  options: { skipFirstStep?: boolean } = {},
): number[] {
  const from = options.skipFirstStep ? 1 : 0;
  return Array.from({ length: rounds }, (_, r) => {
    const gaps = sides.flatMap((runs) =>
      runs.slice(1 + r * samples, 1 + (r + 1) * samples).flatMap((run) => run.slice(from)),
    );
    if (gaps.length === 0) throw new Error('no step gaps were recorded');
    return mean(gaps);
  });
}

/**
 * A hand-written loop as `run()` drives a store, with `write` in its place: per step the model
 * (the same latency, never shorter), write #1 awaited, a no-op tool, the next request, then
 * write #2 started from a microtask and awaited only before the next write #1. Records each
 * step's gap as the scripted model does.
 */
export function handLoop(
  steps: number,
  latencyMs: number,
  write: (messages: NewMessage[]) => Promise<void>,
  nextStep: () => ReturnType<typeof stepMessages>,
  runs: number[][],
): TimedSide {
  return () => {
    const batches = Array.from({ length: steps }, nextStep);
    const signal = new AbortController().signal;
    return async () => {
      const gaps: number[] = [];
      let due = performance.now() + latencyMs;
      await waitUntil(due, signal);
      let pending: Promise<void> = Promise.resolve();
      for (const [call, result] of batches) {
        await pending;
        await write([call]);
        // The next request first, then write #2 from a microtask, as run() does: its send is in
        // neither loop's step.
        const requested = performance.now();
        gaps.push(requested - due);
        due = requested + latencyMs;
        pending = Promise.resolve().then(() => write([result]));
        pending.catch(() => {}); // awaited (and thrown) before the next write
        await waitUntil(due, signal);
      }
      await pending;
      runs.push(gaps);
    };
  };
}

/**
 * The floor written from inside the same agent loop: `run()` with no store, whose tool awaits
 * `write` of the step's call (write #1) before its work, and whose model starts `write` of the
 * step's result (write #2, from a microtask) right after it records each next request, and
 * hands its reply over only once that write has landed, as a durable run does. The messages are
 * made before the run; a failed write fails the sample (run() would turn it into a tool error).
 * Records each step's gap as the durable runs do. With a `write` that does nothing, it is its own
 * control: the harness's cost, to subtract.
 */
export function floorInLoop(
  toolSteps: number,
  latencyMs: number,
  payloadBytes: number,
  write: (messages: NewMessage[]) => Promise<void>,
  nextStep: () => ReturnType<typeof stepMessages>,
  runs: number[][],
): TimedSide {
  return () => {
    const batches = Array.from({ length: toolSteps }, nextStep);
    const gaps: number[] = [];
    let step = 0;
    let pending: Promise<void> = Promise.resolve();
    let result: NewMessage | null = null;
    let failure: { error: unknown } | null = null;
    const written = (messages: NewMessage[]) =>
      write(messages).catch((error: unknown) => {
        failure ??= { error };
        throw error;
      });
    const agent = benchAgent(toolSteps, payloadBytes, async () => {
      const [call, stepResult] = batches[step++]!;
      await written([call]);
      result = stepResult;
    });
    const model = fixedLatencyLlm(toolSteps, latencyMs, undefined, gaps);
    const llm: LlmAdapter = {
      generate(request) {
        // The request is recorded first (synchronously, on entry), then write #2 starts; the
        // reply is taken once it has landed, before the next write #1 can start.
        const answer = model.generate(request);
        const finished = result;
        result = null;
        if (!finished) return answer;
        pending = Promise.resolve().then(() => written([finished]));
        return Promise.all([answer, pending]).then(([reply]) => reply);
      },
    };
    return async () => {
      const outcome = await run(agent, { message: 'go', llm });
      await pending;
      if (failure) throw failure.error;
      if (outcome.status !== 'complete') throw new Error(`a floor run ended with status ${outcome.status}`);
      runs.push(gaps);
    };
  };
}

/**
 * Store and floor interleaved in every round: durable `run()`s of S = `steps` and 2S tool steps
 * with a model of fixed latency (write #2 overlaps the next request, as run() does), the same runs
 * without a store, write #1 through the store, and the floor: one append, a step in one append,
 * a step in two appends, paced by a bare hand loop (the headline's unit), and written from inside
 * the same runs (`floorInLoop`, with its no-op control). Append sides time S appends in a row and
 * report one. The marginal cost of a step is the difference of the two run lengths, less the
 * same difference without a store, so the per-run work (lease, load, answer, release) cancels out.
 */
export async function measureStep(
  store: AgentStore,
  floor: RawAppendFloor | null,
  newId: (label: string) => string,
  sampling: StepSampling,
): Promise<StepResult> {
  const { steps, payloadBytes, modelLatencyMs } = sampling;
  const agents = new Map([steps, 2 * steps].map((n) => [n, benchAgent(n, payloadBytes)]));
  // Per side, the step gaps of each run in order (see roundMeanGaps).
  const durableS: number[][] = [];
  const durable2S: number[][] = [];
  const statelessS: number[][] = [];
  const stateless2S: number[][] = [];
  const durable =
    (toolSteps: number, runs: number[][]): TimedSide =>
    () => {
      const agent = agents.get(toolSteps)!;
      const sessionId = newId('step');
      const gaps: number[] = [];
      const llm = fixedLatencyLlm(toolSteps, modelLatencyMs, undefined, gaps);
      return async () => {
        const result = await run(agent, { store, sessionId, message: 'go', llm });
        if (result.status !== 'complete')
          throw new Error(`a benchmark run ended with status ${result.status}`);
        runs.push(gaps);
      };
    };
  const stateless =
    (toolSteps: number, runs: number[][]): TimedSide =>
    () => {
      const agent = agents.get(toolSteps)!;
      const gaps: number[] = [];
      const llm = fixedLatencyLlm(toolSteps, modelLatencyMs, undefined, gaps);
      return async () => {
        await run(agent, { message: 'go', llm });
        runs.push(gaps);
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
        session: { state: benchState(appends) }, // as run() sends it: init only with a first append
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
  const runSides = [
    durable(steps, durableS),
    durable(2 * steps, durable2S),
    stateless(steps, statelessS),
    stateless(2 * steps, stateless2S),
  ];
  const sides = [...runSides, storeAppend];
  const floorLoopRuns: number[][] = [];
  const bareLoopRuns: number[][] = [];
  const inLoopS: number[][] = [];
  const inLoop2S: number[][] = [];
  const noopLoopS: number[][] = [];
  const noopLoop2S: number[][] = [];
  if (floor) {
    const [oneAppend, oneCommit, twoCommit, paced, inLoop] = await Promise.all(
      ['floor-1', 'floor-one-commit', 'floor-two-commit', 'floor-paced', 'floor-in-loop'].map(async (label) =>
        floorWriter(floor, await floorSession(store, newId(label))),
      ),
    );
    const nextStep = () => stepMessages(n++, payloadBytes);
    sides.push(
      floorSide((step) => oneAppend!([step[0]])),
      floorSide((step) => oneCommit!(step)),
      floorSide(async (step) => {
        await twoCommit!([step[0]]);
        await twoCommit!([step[1]]);
      }),
      // 3S steps a sample: as many step gaps per round as the durable runs of S and 2S give the
      // overhead, so the headline's denominator is no noisier than its numerator.
      handLoop(3 * steps, modelLatencyMs, (messages) => paced!(messages), nextStep, floorLoopRuns),
      handLoop(3 * steps, modelLatencyMs, async () => {}, nextStep, bareLoopRuns),
      floorInLoop(steps, modelLatencyMs, payloadBytes, (messages) => inLoop!(messages), nextStep, inLoopS),
      floorInLoop(
        2 * steps,
        modelLatencyMs,
        payloadBytes,
        (messages) => inLoop!(messages),
        nextStep,
        inLoop2S,
      ),
      floorInLoop(steps, modelLatencyMs, payloadBytes, async () => {}, nextStep, noopLoopS),
      floorInLoop(2 * steps, modelLatencyMs, payloadBytes, async () => {}, nextStep, noopLoop2S),
    );
  }
  const medians = await sampleRounds(sides, {
    rounds: sampling.rounds,
    samples: sampling.samples,
    warmup: 1,
    ...(sampling.signal ? { signal: sampling.signal } : {}),
    ...(sampling.onRound ? { onRound: sampling.onRound } : {}),
  });
  const [durableMs, durableLongMs, statelessMs, statelessLongMs] = medians as [
    number[],
    number[],
    number[],
    number[],
  ];
  // Append sides timed S appends (or steps) in a row: one each.
  // The hand loops' times are not used: their step gaps are.
  const [storeAppendMs, floorMs, oneCommitMs, twoCommitMs] = medians
    .slice(runSides.length, runSides.length + 4)
    .map((side) => side.map((ms) => ms / steps)) as [number[], number[]?, number[]?, number[]?];
  const { marginal, fixed } = marginalCosts(steps, {
    durable: durableMs,
    durableLong: durableLongMs,
    stateless: statelessMs,
    statelessLong: statelessLongMs,
  });
  const spread = (values: number[]) => spreadMs(values, sampling.samples);
  const meanGaps = (runs: number[][][], skipFirstStep = false) =>
    roundMeanGaps(runs, sampling.rounds, sampling.samples, { skipFirstStep });
  // What `sides` add per step to `base` (both runs of S and 2S steps).
  const addedTo = (base: number[][][], sides: number[][][], skipFirstStep: boolean) => {
    const withWrites = meanGaps(sides, skipFirstStep);
    const without = meanGaps(base, skipFirstStep);
    return withWrites.map((gap, r) => gap - without[r]!);
  };
  const noStore = [statelessS, stateless2S];
  const overhead = addedTo(noStore, [durableS, durable2S], true);
  const overheadAllSteps = addedTo(noStore, [durableS, durable2S], false);
  // The hand loops and the in-loop floor run only against a floor.
  let pacedFloor: number[] | null = null;
  let inLoopFloor: number[] | null = null;
  if (floor) {
    const bare = meanGaps([bareLoopRuns]);
    pacedFloor = meanGaps([floorLoopRuns]).map((gap, r) => gap - bare[r]!);
    inLoopFloor = addedTo([noopLoopS, noopLoop2S], [inLoopS, inLoop2S], true);
  }
  return {
    modelLatencyMs,
    steps,
    overheadPerStep: spread(overhead),
    overheadAllStepsPerStep: spread(overheadAllSteps),
    durableRun: spread(durableMs),
    durableLongRun: spread(durableLongMs),
    statelessRun: spread(statelessMs),
    statelessLongRun: spread(statelessLongMs),
    marginalPerStep: spread(marginal),
    fixedPerRun: spread(fixed),
    storeAppend: spread(storeAppendMs),
    floor:
      floorMs && oneCommitMs && twoCommitMs && pacedFloor && inLoopFloor
        ? {
            pacedAppend: spread(pacedFloor),
            overheadVsPacedAppendPooled: round(sum(overhead) / sum(pacedFloor), 3),
            overheadAllStepsVsPacedAppendPooled: round(sum(overheadAllSteps) / sum(pacedFloor), 3),
            overheadVsPacedAppend: ratioSpread(perRoundRatio(overhead, pacedFloor)),
            inLoopAppend: spread(inLoopFloor),
            overheadVsInLoopAppendPooled: round(sum(overhead) / sum(inLoopFloor), 3),
            overheadVsInLoopAppend: ratioSpread(perRoundRatio(overhead, inLoopFloor)),
            inLoopContext: spread(inLoopFloor.map((gap, r) => gap - pacedFloor![r]!)),
            overheadVsAppend: ratioSpread(perRoundRatio(overhead, floorMs)),
            append: spread(floorMs),
            oneCommit: spread(oneCommitMs),
            twoCommit: spread(twoCommitMs),
            marginalVsAppend: ratioSpread(perRoundRatio(marginal, floorMs)),
            storeAppendVsAppend: ratioSpread(perRoundRatio(storeAppendMs, floorMs)),
            marginalVsTwoCommit: ratioSpread(perRoundRatio(marginal, twoCommitMs)),
          }
        : null,
  };
}
