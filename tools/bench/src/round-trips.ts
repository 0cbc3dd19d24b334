import { type AgentStore, run } from '@agentstore/core';
import type { OpenTestTarget, RawAppendFloor } from '@agentstore/core/testing';
import type { RoundTrips } from './report.ts';
import { median, round } from './stats.ts';
import { floorSession, floorWriter } from './step.ts';
import { countStoreCalls } from './store-calls.ts';
import { benchAgent, benchSessionInit, benchState, fixedLatencyLlm, stepMessages } from './workload.ts';

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
    return {
      method: 'driver',
      unit: target.roundTripUnit ?? 'round trips (as the target counts them)',
      store,
      floor,
      count: target.roundTrips.bind(target),
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

/**
 * Round trips on the very store the bench times (the target's `roundTrips(store)`), and on its
 * floor: per write #1 as run() sends it, per floor append of one message, per whole run.
 */
export async function measureRoundTrips(
  target: OpenTestTarget,
  timed: AgentStore,
  newId: (label: string) => string,
  steps: number,
  payloadBytes: number,
): Promise<RoundTrips> {
  const counter = roundTripCounter(target, timed);
  const counts = async (subject: AgentStore | RawAppendFloor, call: () => Promise<unknown>) => {
    const before = counter.count(subject);
    await call();
    return counter.count(subject) - before;
  };
  const store = counter.store;
  const id = newId('count-append');
  const holder = crypto.randomUUID();
  const init = benchSessionInit();
  const { epoch } = await store.acquireLease(id, { holder, ttlMs: 3_600_000, init });
  let head = 0;
  const append = async (n: number) => {
    head = (
      await store.append(id, {
        expectedSeq: head,
        messages: [stepMessages(n, payloadBytes)[0]],
        session: { state: benchState(n) }, // as run() sends write #1 once the session exists
        lease: { holder, epoch },
      })
    ).headSeq;
  };
  // The first calls on a connection may prepare statements or load scripts: not counted.
  for (let n = 1; n <= 2; n++) await append(n);
  const perAppend: number[] = [];
  for (let n = 3; n <= 7; n++) perAppend.push(await counts(counter.store, () => append(n)));

  let floorPerAppend: number | null = null;
  if (counter.floor) {
    const write = floorWriter(counter.floor, await floorSession(store, newId('count-floor')));
    for (let n = 0; n < 2; n++) await write([stepMessages(n, payloadBytes)[0]]);
    const perFloor: number[] = [];
    for (let n = 2; n < 7; n++)
      perFloor.push(await counts(counter.floor, () => write([stepMessages(n, payloadBytes)[0]])));
    floorPerAppend = median(perFloor);
  }

  const agent = benchAgent(steps, payloadBytes);
  const once = (on: AgentStore, sessionId: string) =>
    run(agent, { store: on, sessionId, message: 'go', llm: fixedLatencyLlm(steps, 0) });
  await once(store, newId('count-warm'));
  const calls = countStoreCalls(store);
  const perRun = await counts(counter.store, () => once(calls.store, newId('count-run')));
  return {
    method: counter.method,
    unit: counter.unit,
    perAppend: median(perAppend),
    floorPerAppend,
    perRun,
    perStep: round(perRun / steps, 2),
    storeCallsPerRun: calls.count(),
  };
}
