// A process-tier child: opens the target from its module (as another process of the user's
// application would), then appends batches or runs the agent until it is SIGKILLed — by the
// parent at a random moment, by itself on a chosen event-loop turn, or by its kill thread at a
// chosen fraction of an append's measured duration.
import { writeSync } from 'node:fs';
import { type AgentStore, run } from '@agentstore/core';
import { openTargetModule, scriptedLlm } from '@agentstore/core/testing';
import { batchMessages } from '../batches.ts';
import { sessionInit } from '../fixtures.ts';
import { PROCESS_SCRIPT, PROCESS_USER_MESSAGE_ID, processAgent } from './agent.ts';
import { killTimer } from './kill-timer.ts';
import { CHILD_LINE_PREFIX, type ChildConfig, type ChildLine } from './protocol.ts';

/** Synchronous, so a line is in the pipe before the next instruction can be killed. */
const report = (line: ChildLine) => writeSync(1, `${CHILD_LINE_PREFIX}${JSON.stringify(line)}\n`);

/**
 * Counts event-loop turns from now and SIGKILLs this process on turn `turn`: every await that
 * waits on I/O (a round trip to the database) spans turns, so sweeping `turn` lands kills between
 * the statements of a store that writes in several requests.
 */
function armKill(turn: number): void {
  if (turn <= 0) return;
  let count = 0;
  const tick = () => {
    count += 1;
    if (count >= turn) process.kill(process.pid, 'SIGKILL');
    else setImmediate(tick);
  };
  setImmediate(tick);
}

async function appendBatches(store: AgentStore, config: ChildConfig): Promise<void> {
  const loaded = await store.load(config.sessionId);
  let head = loaded?.session.headSeq ?? 0;
  const limit = store.limits.maxMessagesPerAppend;
  // The kill thread starts before the appends, so starting it costs no append its timing.
  const timer = config.killAtFraction === undefined ? null : await killTimer();
  const durations: bigint[] = [];
  let killIn: bigint | null = null;
  for (let k = 1; k <= config.batches; k++) {
    if (k === config.armAfter + 1) {
      armKill(config.killAtTurn);
      if (timer && durations.length > 0) {
        // A fraction of the median append so far: the sweep over fractions walks the kill through
        // every request of one append, wherever the store's own statements fall.
        const median = [...durations].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[durations.length >> 1]!;
        killIn = BigInt(Math.round(Number(median) * config.killAtFraction!));
      }
    }
    const batch = batchMessages(`p${process.pid}`, k, Math.min(limit, 2 + ((k * 3) % 7)));
    const ids = batch.map((m) => m.id);
    report({ t: 'start', batch: k, expectedSeq: head, ids });
    if (timer && killIn !== null) {
      timer.fireIn(killIn);
      killIn = null;
    }
    const started = process.hrtime.bigint();
    ({ headSeq: head } = await store.append(config.sessionId, {
      expectedSeq: head,
      messages: batch,
      session: { init: sessionInit() },
      lease: null,
    }));
    report({ t: 'ack', batch: k, ids, headSeq: head });
    durations.push(process.hrtime.bigint() - started);
    // A turn between appends, so the kill can land even against a store whose calls never yield.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Waits for the parent's `go` on stdin: every racing child starts appending at the same moment. */
async function awaitGo(): Promise<void> {
  for await (const chunk of process.stdin) if (String(chunk).includes('go')) return;
}

/** Appends one message at a time at the loaded head; on SeqConflictError it reloads and retries. */
async function raceAppends(store: AgentStore, config: ChildConfig): Promise<void> {
  await awaitGo();
  let acked = 0;
  for (let attempt = 1; acked < config.batches; attempt++) {
    if (attempt > config.batches * 200) {
      throw Object.assign(
        new Error(
          `no progress: ${attempt - 1} appends at the loaded head, ${acked} acknowledged, the rest SeqConflictError — load keeps returning a head the store's own append refuses`,
        ),
        { code: 'NO_PROGRESS' },
      );
    }
    const head = (await store.load(config.sessionId))?.session.headSeq ?? 0;
    const batch = batchMessages(`race-${process.pid}`, acked + 1, 1);
    const ids = batch.map((m) => m.id);
    report({ t: 'start', batch: acked + 1, expectedSeq: head, ids });
    try {
      const { headSeq } = await store.append(config.sessionId, {
        expectedSeq: head,
        messages: batch,
        session: { init: sessionInit() },
        lease: null,
      });
      acked += 1;
      report({ t: 'ack', batch: acked, ids, headSeq });
    } catch (error) {
      if ((error as { code?: unknown })?.code !== 'SEQ_CONFLICT') throw error;
    }
  }
}

async function runAgent(store: AgentStore, config: ChildConfig): Promise<string> {
  armKill(config.killAtTurn);
  const result = await run(
    processAgent((tool, toolCallId) => report({ t: 'effect', tool, toolCallId })),
    {
      store,
      sessionId: config.sessionId,
      message: 'run the process tier',
      messageId: PROCESS_USER_MESSAGE_ID,
      llm: scriptedLlm(PROCESS_SCRIPT),
      leaseTtlMs: config.leaseTtlMs,
    },
  );
  return result.status;
}

async function main(config: ChildConfig): Promise<number> {
  const target = await openTargetModule(config.module, config.options);
  // Whatever the target opened besides its stores (a pool for its raw reader, a server) is closed
  // by its `close`, when it declares one — an OpenTestTarget or a plain target alike.
  const close = (target as { close?: unknown }).close;
  const store = await target.createStore();
  report({ t: 'ready', pid: process.pid });
  try {
    let status = 'appended';
    if (config.mode === 'run') status = await runAgent(store, config);
    else if (config.mode === 'race') await raceAppends(store, config);
    else await appendBatches(store, config);
    report({ t: 'done', status });
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    report({
      t: 'error',
      code: typeof code === 'string' ? code : null,
      message: error instanceof Error ? error.message : String(error),
    });
    return 1;
  } finally {
    try {
      await (target.destroyStore ? target.destroyStore(store) : store.close());
    } finally {
      if (typeof close === 'function') await close.call(target);
    }
  }
}

// The child ends itself once its work is reported: a handle the target keeps open and does not
// close (a pool, a timer) must not keep it alive until the parent's backstop kills it.
process.exit(await main(JSON.parse(process.argv[2] ?? '{}') as ChildConfig));
