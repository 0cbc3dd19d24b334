// One torture worker process: opens the target from its module (with the parent's `reopen`), runs the torture agent on one
// session to completion (or until it is killed), and reports every acknowledged append.
import { writeSync } from 'node:fs';
import { type AgentStore, isAgentStoreError, type LeaseToken, run } from '@agentstore/core';
import { openToolTarget, renewFaults, scriptedLlm } from '@agentstore/core/testing';
import { TORTURE_MESSAGE_ID, TORTURE_SCRIPT, tortureAgent } from './agent.ts';
import { LINE_PREFIX, type WorkerConfig, type WorkerLine } from './protocol.ts';

/** Synchronous, so a line is in the pipe before the next instruction can be killed. */
const report = (line: WorkerLine) => writeSync(1, `${LINE_PREFIX}${JSON.stringify(line)}\n`);

const codeOf = (error: unknown): string | null =>
  typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : null;
const nameOf = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/** Records the lease and every acknowledged append as the loop sees them. */
function observed(store: AgentStore, lease: { current: LeaseToken | null }): AgentStore {
  return {
    ...store,
    async acquireLease(sessionId, input) {
      const granted = await store.acquireLease(sessionId, input);
      lease.current = { holder: input.holder, epoch: granted.epoch };
      report({ t: 'lease', epoch: granted.epoch, holder: input.holder });
      return granted;
    },
    async append(sessionId, input) {
      try {
        const result = await store.append(sessionId, input);
        report({
          t: 'ack',
          ids: input.messages.map((m) => m.id),
          headSeq: result.headSeq,
          epoch: input.lease?.epoch ?? 0,
        });
        return result;
      } catch (error) {
        report({ t: 'append-error', name: nameOf(error), code: codeOf(error) });
        throw error;
      }
    },
  };
}

async function probe(store: AgentStore, config: WorkerConfig, lease: LeaseToken): Promise<string> {
  const loaded = await store.load(config.sessionId);
  try {
    await store.append(config.sessionId, {
      expectedSeq: loaded?.session.headSeq ?? 0,
      messages: [
        {
          id: `stale-${process.pid}`,
          role: 'user',
          content: 'stale writer',
          createdAt: new Date().toISOString(),
        },
      ],
      lease,
    });
    return 'APPENDED';
  } catch (error) {
    return codeOf(error) ?? nameOf(error);
  }
}

/** Waits for the parent's `go`: every racer starts appending at the same moment. */
async function awaitGo(): Promise<void> {
  for await (const chunk of process.stdin) if (String(chunk).includes('go')) return;
}

/**
 * Append race: lease-less appends of one message at the loaded head, reloading on
 * SeqConflictError, until `appends` are acknowledged. Without leases nothing serialises the
 * racers: only the store's own check inside its write (a row lock, a guarded update) or a unique
 * key on (session, seq) keeps two appends from taking one seq.
 */
async function appendRace(store: AgentStore, config: WorkerConfig, appends: number): Promise<void> {
  await awaitGo();
  let acked = 0;
  for (let attempt = 1; acked < appends; attempt++) {
    if (attempt > appends * 200)
      throw new Error(`no progress after ${attempt - 1} appends at the loaded head`);
    const head = (await store.load(config.sessionId))?.session.headSeq ?? 0;
    const id = `append-race-${process.pid}-${acked + 1}`;
    try {
      const result = await store.append(config.sessionId, {
        expectedSeq: head,
        messages: [
          { id, role: 'user', content: `racer ${process.pid}`, createdAt: new Date().toISOString() },
        ],
        session: { init: { agentName: 'torture-append-race', ownerId: null, tenantId: null, state: null } },
        lease: null,
      });
      acked += 1;
      report({ t: 'ack', ids: [id], headSeq: result.headSeq, epoch: 0 });
    } catch (error) {
      if (codeOf(error) !== 'SEQ_CONFLICT') throw error;
      report({ t: 'append-error', name: nameOf(error), code: codeOf(error) });
    }
  }
  report({ t: 'done', status: 'appended', headSeq: acked });
}

async function main(config: WorkerConfig): Promise<number> {
  const target = await openToolTarget(config.module, config.options);
  const raw = await target.createStore();
  if (config.appendRace) {
    report({ t: 'ready', pid: process.pid });
    let code = 0;
    try {
      await appendRace(raw, config, config.appendRace.appends);
    } catch (error) {
      report({
        t: 'error',
        name: nameOf(error),
        code: codeOf(error),
        message: error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error),
      });
      code = 1;
    }
    await raw.close().catch(() => {});
    await target.close().catch(() => {});
    return code;
  }
  const lease: { current: LeaseToken | null } = { current: null };
  // Partitioned: renewals never answer; everything else (and the outside world) still works.
  const store = config.partition ? renewFaults(observed(raw, lease), 'hang') : observed(raw, lease);
  const delayMs = config.partition?.handlerDelayMs;
  const agent = tortureAgent({
    ledgerUrl: config.ledgerUrl,
    epoch: () => lease.current?.epoch ?? 0,
    ...(delayMs !== undefined
      ? {
          beforeEffect: async ({ toolCallId }: { toolCallId: string }) => {
            report({ t: 'handler', toolCallId });
            await new Promise((resolve) => setTimeout(resolve, delayMs));
          },
        }
      : {}),
  });
  report({ t: 'ready', pid: process.pid });
  let exitCode = 0;
  try {
    const result = await run(agent, {
      store,
      sessionId: config.sessionId,
      message: 'torture me',
      messageId: TORTURE_MESSAGE_ID,
      llm: scriptedLlm(TORTURE_SCRIPT),
      leaseTtlMs: config.leaseTtlMs,
      leaseWaitMs: config.leaseWaitMs,
    });
    report({ t: 'done', status: result.status, headSeq: result.headSeq });
  } catch (error) {
    report({
      t: 'error',
      name: nameOf(error),
      code: codeOf(error),
      message: error instanceof Error ? error.message : String(error),
    });
    const refused = isAgentStoreError(error, 'LEASE_LOST', 'SEQ_CONFLICT');
    if (config.probeAfterLeaseLost && refused && lease.current) {
      report({ t: 'probe', result: await probe(raw, config, lease.current) });
    }
    exitCode = 1;
  }
  await raw.close().catch(() => {});
  await target.close().catch(() => {});
  return exitCode;
}

// End once the work is reported: a handle the target keeps open must not keep the worker alive.
process.exit(await main(JSON.parse(process.argv[2] ?? '{}') as WorkerConfig));
