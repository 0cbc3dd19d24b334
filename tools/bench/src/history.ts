import { type AgentStore, type NewMessage, run } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { type Spread, sampleRounds, spreadMs } from './rounds.ts';
import type { TimedSide } from './sampler.ts';
import { mean, round } from './stats.ts';
import {
  benchAgent,
  benchSessionInit,
  collectGarbage,
  fixedLatencyLlm,
  loopCpuBetweenModelCalls,
  messageOfPayload,
  newModelMeter,
} from './workload.ts';

/** One row of the history-growth table: a session already holding `messages` messages. */
export interface HistoryRow {
  /** Messages stored before the measurement. */
  messages: number;
  /** Sessions of that size the samples rotate over (each gains a few messages per sample). */
  sessions: number;
  /** One `store.append` of one message (lease-less) at the head. */
  append: Spread;
  /** `store.load` of the whole session. */
  load: Spread;
  /** `run()` resuming the session: lease, load, `resumeSteps` tool steps, the answer. */
  resume: Spread;
  /**
   * The loop's CPU for one more tool step: each resumed run's main-thread CPU between its first
   * and its last model request, less the model's own; per round, (mean of the 2S-step runs − mean
   * of the S-step runs) ÷ S, so the window's ends (the step after the load, the last write #2
   * released after the last request) cancel out. The load's garbage is collected at the first
   * request, before the count starts.
   */
  loopCpuPerStep: Spread;
  /** Bytes a resumed run stored per tool step (message JSON + the session record). */
  bytesPerStep: number;
}

export interface HistorySampling {
  sizes: number[];
  rounds: number;
  samples: number;
  payloadBytes: number;
  /** Tool steps of the short resumed run (S); the long one has 2S. */
  resumeSteps: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Messages seeded per size are capped by this (then fewer sessions, each reused). */
const SEED_BUDGET = 10_000;

/** Seeds `count` messages in the largest appends the store's limits allow. */
async function seed(store: AgentStore, id: string, count: number, payloadBytes: number): Promise<void> {
  const sample = messageOfPayload(payloadBytes, 'user');
  const limits = store.limits;
  const byBytes = limits.maxAppendBytes
    ? Math.floor(limits.maxAppendBytes / (messageByteLength(sample) + 64))
    : Number.POSITIVE_INFINITY;
  const chunk = Math.max(1, Math.min(limits.maxMessagesPerAppend, byBytes, 1000));
  let head = 0;
  const init = benchSessionInit();
  while (head < count) {
    const messages: NewMessage[] = Array.from({ length: Math.min(chunk, count - head) }, (_, i) =>
      messageOfPayload(payloadBytes, (head + i) % 2 ? 'assistant' : 'user'),
    );
    head = (await store.append(id, { expectedSeq: head, messages, session: { init }, lease: null })).headSeq;
  }
}

/** The store's JSON bytes for what `load` returns after `afterSeq`, plus the session record. */
async function bytesAfter(store: AgentStore, id: string, afterSeq: number, steps: number): Promise<number> {
  const loaded = await store.load(id, { afterSeq });
  if (!loaded) throw new Error(`session ${id} vanished`);
  const messageBytes = loaded.messages.reduce((sum, { seq: _seq, ...m }) => sum + messageByteLength(m), 0);
  const sessionRecordBytes = Buffer.byteLength(JSON.stringify(loaded.session), 'utf8');
  return round(messageBytes / steps + sessionRecordBytes);
}

/** Append, load, resume and loop CPU on sessions of each size, interleaved in rounds. */
export async function measureHistory(
  store: AgentStore,
  newId: (label: string) => string,
  sampling: HistorySampling,
): Promise<HistoryRow[]> {
  const { sizes, rounds, samples, payloadBytes, resumeSteps } = sampling;
  const agents = new Map([resumeSteps, 2 * resumeSteps].map((n) => [n, benchAgent(n, payloadBytes)]));
  const agent = agents.get(resumeSteps)!;
  const rows: HistoryRow[] = [];
  const total = sizes.length * (rounds + 1);
  let done = 0;
  for (const size of sizes) {
    sampling.signal?.throwIfAborted();
    const wanted = rounds * samples + 1;
    const count = Math.max(1, Math.min(wanted, Math.floor(SEED_BUDGET / size)));
    const sessions: { id: string; head: number }[] = [];
    for (let i = 0; i < count; i++) {
      const id = newId(`history-${size}`);
      await seed(store, id, size, payloadBytes);
      sessions.push({ id, head: size });
    }
    sampling.onProgress?.(++done, total);
    let next = 0;
    // Each sample takes the next session: load it, append to it, resume it (in rotating order).
    let current = sessions[0]!;
    const pick = () => {
      current = sessions[next++ % sessions.length]!;
      return current;
    };
    // Every sample starts on a collected heap (untimed): otherwise the megabytes a long load left
    // are collected inside whichever sample runs next (an append at the head measured 1.2 ms after
    // a 10,000-message load against 0.47 ms alone).
    const load: TimedSide = () => {
      const session = pick();
      collectGarbage();
      return () => store.load(session.id);
    };
    const append: TimedSide = () => {
      const session = current;
      const message = messageOfPayload(payloadBytes, 'user');
      collectGarbage();
      return async () => {
        session.head = (
          await store.append(session.id, { expectedSeq: session.head, messages: [message], lease: null })
        ).headSeq;
      };
    };
    // CPU of each resumed run, by run length; both lengths resume the same session in a sample.
    const cpuUs = new Map<number, number[]>([
      [resumeSteps, []],
      [2 * resumeSteps, []],
    ]);
    const resume =
      (toolSteps: number): TimedSide =>
      () => {
        const session = current;
        const meter = newModelMeter({ collectFirst: true });
        const llm = fixedLatencyLlm(toolSteps, 0, meter);
        const resumeAgent = agents.get(toolSteps)!;
        collectGarbage();
        return async () => {
          const result = await run(resumeAgent, { store, sessionId: session.id, message: 'go', llm });
          if (result.status !== 'complete')
            throw new Error(`a resumed run ended with status ${result.status}`);
          session.head = result.headSeq;
          cpuUs.get(toolSteps)!.push(loopCpuBetweenModelCalls(meter));
        };
      };
    // The CPU figure is kept per round, like the times: (mean window CPU of the 2S runs − that of
    // the S runs) ÷ S. A window (first to last model request) holds S write #1s but only S − 1
    // write #2s (the last is released after the last request), and its first step follows the
    // load: the difference cancels both ends and keeps exactly S whole steps.
    const cpuRounds: number[] = [];
    const medians = await sampleRounds([load, append, resume(resumeSteps), resume(2 * resumeSteps)], {
      rounds,
      samples,
      warmup: 0,
      ...(sampling.signal ? { signal: sampling.signal } : {}),
      onRound: () => {
        const short = mean(cpuUs.get(resumeSteps)!.splice(0));
        const long = mean(cpuUs.get(2 * resumeSteps)!.splice(0));
        cpuRounds.push((long - short) / resumeSteps / 1000);
        sampling.onProgress?.(++done, total);
      },
    });
    // Bytes per step of one more resumed run (deterministic, untimed).
    const last = sessions[0]!;
    const before = last.head;
    const result = await run(agent, {
      store,
      sessionId: last.id,
      message: 'go',
      llm: fixedLatencyLlm(resumeSteps, 0),
    });
    if (result.status !== 'complete') throw new Error(`a resumed run ended with status ${result.status}`);
    last.head = result.headSeq;
    rows.push({
      messages: size,
      sessions: sessions.length,
      load: spreadMs(medians[0]!, samples),
      append: spreadMs(medians[1]!, samples),
      resume: spreadMs(medians[2]!, samples),
      loopCpuPerStep: spreadMs(cpuRounds, samples),
      bytesPerStep: await bytesAfter(store, last.id, before, resumeSteps),
    });
  }
  return rows;
}
