import { type AgentStore, foldSession, type MessageRecord, run } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { assertContiguous, NOT_ATOMIC_CAUSE, preview, violation } from '../assertions.ts';
import { batchFault } from '../batches.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, message, sessionInit } from '../fixtures.ts';
import {
  PROCESS_FINAL_TEXT,
  PROCESS_SCRIPT,
  PROCESS_USER_MESSAGE_ID,
  processAgent,
} from '../process/agent.ts';
import type { ChildConfig, ChildLine } from '../process/protocol.ts';
import { type ChildRun, runChild } from '../process/spawn-child.ts';
import { isUniqueKeyError, UNIQUE_RACE_CAUSE } from '../race-causes.ts';
import { assertRaceOutcome } from './process-race-outcome.ts';

/**
 * How each append trial's child dies: on event-loop turn 1 of an append (after 0–2 acknowledged
 * ones: a store that yields between two writes dies between them), at 12 fractions spread over its median
 * append duration by a kill thread (walking the kill through every request of one append, for
 * stores on a network), and once at a random moment from outside.
 */
const FRACTIONS = Array.from({ length: 12 }, (_, i) => (i + 0.5) / 12);
const APPEND_KILLS: ReadonlyArray<{ armAfter: number; killAtTurn: number; killAtFraction?: number }> = [
  { armAfter: 0, killAtTurn: 1 },
  { armAfter: 1, killAtTurn: 1 },
  { armAfter: 2, killAtTurn: 1 },
  ...FRACTIONS.map((killAtFraction) => ({ armAfter: 3, killAtTurn: 0, killAtFraction })),
  { armAfter: 0, killAtTurn: 0 },
];
const APPEND_TRIALS = APPEND_KILLS.length;
const RUN_KILL_TURNS = [1, 3, 6, 10, 16, 0];
/**
 * Every lease of the tier outlasts any stall a loaded machine can impose: a child's run() that
 * lost a short lease to scheduling once failed a correct store. After a kill, the parent frees
 * the dead child's lease (as a supervisor that saw its worker die would) instead of waiting for
 * it to expire; expiry itself is the lease spec's to prove.
 */
const LEASE_TTL_MS = 10_000;
const RESUME_TTL_MS = 10_000;
/** Processes racing appends on one session, and how many each must have acknowledged. */
const RACE_WRITERS = 3;
const RACE_APPENDS = 40;

const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

async function childFor(
  ctx: CheckContext,
  config: Omit<ChildConfig, 'module' | 'options'>,
  killAfterMs?: number,
): Promise<ChildRun> {
  const { module, reopen } = ctx.target;
  if (!module) throw new Error(`${ctx.target.name}: the process tier needs target.module`);
  const child = await runChild(
    { module, ...(reopen ? { options: reopen } : {}), ...config },
    killAfterMs === undefined ? {} : { killAfterMs },
  );
  if (!child.lines.some((line) => line.t === 'ready')) {
    throw new Error(
      `${ctx.target.name}: the child process could not open the target from ${module} (exit ${child.code ?? child.signal}):\n${child.stderr}`,
    );
  }
  const failed = child.lines.find((line) => line.t === 'error');
  if (failed?.t === 'error') {
    const reported = { code: failed.code, message: failed.message.split('\n')[0] ?? '' };
    violation(
      `in a child process, ${config.mode === 'run' ? 'run()' : 'an append'} failed before any kill: ${failed.code ?? 'error'}: ${reported.message}${isUniqueKeyError(reported) ? ` — ${UNIQUE_RACE_CAUSE}` : ''}`,
    );
  }
  return child;
}

/** How the child died, for messages. */
const killedHow = (child: ChildRun, config: Pick<ChildConfig, 'killAtTurn' | 'killAtFraction'>) => {
  const started = child.lines.filter((line) => line.t === 'start').at(-1);
  const acked = child.lines.filter((line) => line.t === 'ack').length;
  const at =
    started?.t === 'start' ? `inside append #${started.batch} (expectedSeq ${started.expectedSeq})` : '';
  const moment =
    config.killAtTurn > 0
      ? `on event-loop turn ${config.killAtTurn}`
      : config.killAtFraction !== undefined
        ? `${Math.round(config.killAtFraction * 100)}% into an append (by its median duration)`
        : 'at a random moment';
  return child.signal === 'SIGKILL'
    ? `a SIGKILL ${moment} ${at} after ${acked} acknowledged appends`
    : `a child that finished without being killed (${acked} appends)`;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A killed client's last request may still be running on the server (Postgres finishes a
 * statement whose client died): wait until two reads, through the store and the raw reader, agree
 * before judging what the crash left. Bounded; a store that never settles is judged as it stands.
 */
async function settle(ctx: CheckContext, sessionId: string): Promise<void> {
  const look = async () => {
    const loaded = await ctx.store.load(sessionId).catch((error: unknown) => String(error));
    const raw = ctx.capabilities.raw;
    return JSON.stringify([
      typeof loaded === 'string' ? loaded : [loaded?.session.headSeq, loaded?.messages.map((m) => m.id)],
      raw
        ? [(await raw.session(sessionId))?.headSeq, (await raw.messages(sessionId)).map((r) => r.id)]
        : null,
    ]);
  };
  let last = await look();
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const next = await look();
    if (next === last) return;
    last = next;
  }
}

/** Frees the lease a killed child held, by its holder and epoch: the child will never release it. */
async function releaseDeadLease(ctx: CheckContext, sessionId: string): Promise<void> {
  const lease = (await ctx.store.load(sessionId))?.session.lease;
  if (lease) await ctx.store.releaseLease(sessionId, { holder: lease.holder, epoch: lease.epoch });
}

/**
 * After a crash the session must load (through the store and the raw reader alike), hold every
 * acknowledged message exactly once in whole appends, and take an append at its head.
 */
async function assertRecoverable(
  ctx: CheckContext,
  sessionId: string,
  lines: ChildLine[],
  how: string,
  rechecks = 3,
): Promise<number> {
  let loaded: Awaited<ReturnType<AgentStore['load']>>;
  try {
    loaded = await ctx.store.load(sessionId);
  } catch (error) {
    return violation(
      `after ${how}, the session no longer loads: ${String(codeOf(error) ?? '')} ${(error as Error).message}`,
    );
  }
  const acked = lines.flatMap((line) => (line.t === 'ack' ? line.ids : []));
  const head = loaded?.session.headSeq ?? 0;

  // Through the raw reader first: rows beyond the head are the mark of a non-atomic append, even
  // when the session row itself was never written.
  const raw = ctx.capabilities.raw;
  let beyondNote = '';
  if (raw) {
    const rawSession = await raw.session(sessionId);
    const rows = await raw.messages(sessionId);
    const rawHead = rawSession?.headSeq ?? 0;
    const beyond = rows.filter((row) => row.seq > rawHead);
    if (beyond.length > 0) {
      beyondNote = ` The raw reader finds ${beyond.length} message rows beyond the head ${rawHead} (seqs ${beyond[0]!.seq}–${beyond.at(-1)!.seq}).`;
      violation(
        `after ${how}, the crash left ${beyond.length} message rows beyond the head ${rawHead}${rawSession ? '' : ' (no session row at all)'} (seqs ${beyond[0]!.seq}–${beyond.at(-1)!.seq}, seen through the raw reader) — ${NOT_ATOMIC_CAUSE}. Every later append of this session fails with SeqConflictError`,
      );
    }
    const rawIds = rows.map((row) => `${row.seq}:${row.id}`).join();
    if (rawIds !== (loaded?.messages ?? []).map((m) => `${m.seq}:${m.id}`).join())
      violation(`after ${how}, the raw reader and load disagree on the stored messages`);
  }

  if (!loaded) {
    if (acked.length > 0)
      violation(`after ${how}, the session with ${acked.length} acknowledged messages is gone`);
  } else {
    const { session, messages } = loaded;
    if (messages.length !== session.headSeq)
      violation(
        `after ${how}, load returns headSeq ${session.headSeq} with ${messages.length} messages — ${NOT_ATOMIC_CAUSE}`,
      );
    const fault = batchFault(messages);
    if (fault) violation(`after ${how}, load shows part of an append: ${fault} — ${NOT_ATOMIC_CAUSE}`);
    const stored = new Set(messages.map((m) => m.id));
    const lost = acked.filter((id) => !stored.has(id));
    if (lost.length > 0)
      violation(`after ${how}, ${lost.length} acknowledged messages are lost: ${preview(lost)}`);
  }

  const probe = message({ content: 'appended at the head after the crash' });
  try {
    await ctx.store.append(sessionId, {
      expectedSeq: head,
      messages: [probe],
      session: { init: sessionInit() },
      lease: null,
    });
  } catch (error) {
    if (codeOf(error) === 'SEQ_CONFLICT') {
      const actual = (error as { actualSeq?: unknown }).actualSeq;
      // The killed child's last append can still land after the load above: a database server
      // finishes a statement whose client died (Postgres commits it). That is not a stuck session:
      // check the session again as it is now, with all the checks above.
      if (rechecks > 0 && typeof actual === 'number' && actual > head) {
        return assertRecoverable(
          ctx,
          sessionId,
          lines,
          `${how} (its last append landed late, head ${actual})`,
          rechecks - 1,
        );
      }
      violation(
        `after ${how}, an append at the loaded head ${head} fails with SeqConflictError (actualSeq ${String(actual)}): the crash left the session unwritable for good — ${NOT_ATOMIC_CAUSE}.${beyondNote}`,
      );
    }
    // A live lease of the dead child is the one legitimate refusal: it expires.
    if (codeOf(error) !== 'LEASE_LOST') throw error;
  }
  return head;
}

function assertRunOutcome(
  messages: MessageRecord[],
  effects: { tool: string; toolCallId: string }[],
  how: string,
) {
  const folded = foldSession(messages);
  if (folded.status !== 'complete' || folded.response !== PROCESS_FINAL_TEXT)
    violation(`after ${how}, run() did not resume to completion (status ${folded.status})`);
  const users = messages.filter((m) => m.id === PROCESS_USER_MESSAGE_ID).length;
  if (users !== 1) violation(`after ${how}, the user message is stored ${users} times`);
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  const callIds = new Set(calls.map((call) => call.id));
  if (callIds.size !== calls.length)
    violation(`after ${how}, a tool call is stored twice: ${preview(calls.map((c) => c.id))}`);
  for (const call of calls) {
    const results = messages.filter((m) => m.role === 'tool' && m.toolCallId === call.id).length;
    if (results !== 1)
      violation(`after ${how}, tool call ${call.id} has ${results} results; exactly one is required`);
    const ran = effects.filter((e) => e.toolCallId === call.id).length;
    if (call.name === 'notify' && ran > 1)
      violation(`after ${how}, notify (no retry, no reconcile) ran ${ran} times for call ${call.id}`);
  }
}

const processTierChecks: ConformanceCheck[] = [
  {
    name: `process tier: ${RACE_WRITERS} processes appending to one session at once (reloading on SeqConflictError) leave every acknowledged message once, one row per seq and the head at the count acknowledged`,
    requires: ['process', 'durable'],
    timeoutMs: 240_000,
    async run(ctx) {
      const { module, reopen } = ctx.target;
      if (!module) throw new Error(`${ctx.target.name}: the process tier needs target.module`);
      const sessionId = freshId('process-race');
      let ready = 0;
      let go = () => {};
      const gate = new Promise<void>((resolve) => {
        go = resolve;
      });
      const config: ChildConfig = {
        module,
        ...(reopen ? { options: reopen } : {}),
        sessionId,
        mode: 'race',
        batches: RACE_APPENDS,
        armAfter: 0,
        killAtTurn: 0,
        leaseTtlMs: LEASE_TTL_MS,
      };
      try {
        const children = await Promise.all(
          Array.from({ length: RACE_WRITERS }, () =>
            runChild(config, {
              gate,
              timeoutMs: 200_000,
              onReady: () => {
                ready += 1;
                if (ready === RACE_WRITERS) go();
              },
            }).finally(go),
          ),
        );
        for (const child of children) {
          if (!child.lines.some((line) => line.t === 'ready')) {
            throw new Error(
              `${ctx.target.name}: a child process could not open the target from ${module} (exit ${child.code ?? child.signal}):\n${child.stderr}`,
            );
          }
          const failed = child.lines.find((line) => line.t === 'error');
          if (failed?.t === 'error' && failed.code === 'NO_PROGRESS') {
            violation(
              `a child process racing appends made ${failed.message}: its store instance serves a stale session (a per-instance cache), so it can never append at the real head`,
            );
          }
          if (failed?.t === 'error') {
            violation(
              `in a child process racing appends, an append failed with something other than SeqConflictError: ${failed.code ?? 'error'}: ${failed.message}`,
            );
          }
          // No kill was planned here: a child that never reported done hung in an append and was
          // killed by the backstop.
          if (!child.lines.some((line) => line.t === 'done')) {
            violation(
              `a child process racing appends never finished (exit ${child.code ?? child.signal}, ${child.lines.filter((line) => line.t === 'ack').length} of ${RACE_APPENDS} appends acknowledged): an append never settled`,
            );
          }
        }
        await assertRaceOutcome(ctx, sessionId, children);
      } finally {
        await ctx.store.deleteSession(sessionId);
      }
    },
  },
  {
    name: `process tier: ${APPEND_TRIALS} child processes SIGKILLed inside appends leave a session that loads whole, agrees with the raw reader and takes an append at its head`,
    requires: ['process', 'durable'],
    timeoutMs: 240_000,
    async run(ctx) {
      for (const [i, kill] of APPEND_KILLS.entries()) {
        const sessionId = freshId(`process-append-${i + 1}`);
        const fromOutside = kill.killAtTurn === 0 && kill.killAtFraction === undefined;
        const config = {
          sessionId,
          mode: 'appends' as const,
          batches: 200,
          ...kill,
          leaseTtlMs: LEASE_TTL_MS,
        };
        try {
          const child = await childFor(ctx, config, fromOutside ? 5 + Math.random() * 60 : undefined);
          await settle(ctx, sessionId);
          await assertRecoverable(ctx, sessionId, child.lines, killedHow(child, config));
        } finally {
          await ctx.store.deleteSession(sessionId);
        }
      }
    },
  },
  {
    name: `process tier: after a child process is SIGKILLed inside run() (${RUN_KILL_TURNS.length} kill points), run() resumes it to completion, no tool without retry runs twice, every call has one result`,
    requires: ['process', 'durable'],
    timeoutMs: 240_000,
    async run(ctx) {
      for (const [i, killAtTurn] of RUN_KILL_TURNS.entries()) {
        const sessionId = freshId(`process-run-${i + 1}`);
        const config = {
          sessionId,
          mode: 'run' as const,
          batches: 0,
          armAfter: 0,
          killAtTurn,
          leaseTtlMs: LEASE_TTL_MS,
        };
        try {
          const child = await childFor(ctx, config, killAtTurn === 0 ? 5 + Math.random() * 80 : undefined);
          const how = `a SIGKILL inside run() ${killAtTurn > 0 ? `on event-loop turn ${killAtTurn}` : 'at a random moment'}`;
          await settle(ctx, sessionId);
          await releaseDeadLease(ctx, sessionId);
          const effects = child.lines.flatMap((line) => (line.t === 'effect' ? [line] : []));
          const result = await run(
            processAgent((tool, toolCallId) => effects.push({ t: 'effect', tool, toolCallId })),
            {
              store: ctx.store,
              sessionId,
              message: 'run the process tier',
              messageId: PROCESS_USER_MESSAGE_ID,
              llm: scriptedLlm(PROCESS_SCRIPT),
              // The killed child's lease is short; the resuming run's must outlast a loaded machine
              // (the run stops at its local lease deadline, four fifths of the TTL).
              leaseTtlMs: RESUME_TTL_MS,
              leaseWaitMs: 10_000,
            },
          ).catch((error: unknown) =>
            violation(
              `after ${how}, run() could not resume: ${String(codeOf(error) ?? '')} ${(error as Error).message}`,
            ),
          );
          if (result.status !== 'complete') violation(`after ${how}, the resumed run ended ${result.status}`);
          const loaded = await assertContiguous(ctx, sessionId, `after ${how} and a resumed run`);
          assertRunOutcome(loaded.messages, effects, how);
          await assertRecoverable(ctx, sessionId, [], how);
        } finally {
          await ctx.store.deleteSession(sessionId);
        }
      }
    },
  },
];

export const processTierSpec: ConformanceSpec = {
  title: 'process tier (SIGKILL)',
  checks: processTierChecks,
};
