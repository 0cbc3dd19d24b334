import { run } from '@agentstore/core';
import { durableMemoryStore, type RawReader, scriptedLlm } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TORTURE_MESSAGE_ID, TORTURE_SCRIPT, tortureAgent } from '../src/agent.ts';
import { checkTrial, type TrialEvidence } from '../src/invariants.ts';
import { type Ledger, startLedger } from '../src/ledger.ts';
import { createPrng, deriveSeed } from '../src/prng.ts';
import type { WorkerLine } from '../src/protocol.ts';

// The checks must catch what they claim to: a clean session passes, each planted fault is named.
let ledger: Ledger;
beforeAll(async () => {
  ledger = await startLedger();
});
afterAll(() => ledger.close());

async function cleanEvidence(sessionId: string): Promise<TrialEvidence> {
  const store = durableMemoryStore();
  const lines: WorkerLine[] = [];
  const observed = {
    ...store,
    async append(id: string, input: Parameters<typeof store.append>[1]) {
      const result = await store.append(id, input);
      lines.push({
        t: 'ack',
        ids: input.messages.map((m) => m.id),
        headSeq: result.headSeq,
        epoch: input.lease?.epoch ?? 0,
      });
      return result;
    },
  };
  const result = await run(tortureAgent({ ledgerUrl: ledger.url, epoch: () => 1 }), {
    store: observed,
    sessionId,
    message: 'torture me',
    messageId: TORTURE_MESSAGE_ID,
    llm: scriptedLlm(TORTURE_SCRIPT),
  });
  expect(result.status).toBe('complete');
  const raw: RawReader = {
    async session(id) {
      const loaded = await store.load(id);
      if (!loaded) return null;
      const { session } = loaded;
      return {
        id,
        headSeq: session.headSeq,
        ownerId: null,
        tenantId: null,
        leaseHolder: null,
        leaseEpoch: 1,
      };
    },
    async messages(id) {
      const loaded = await store.load(id);
      return (loaded?.messages ?? []).map(({ seq, id: messageId, role, content }) => ({
        seq,
        id: messageId,
        role,
        content,
      }));
    },
  };
  return { sessionId, raw, store, ledgerCalls: ledger.calls(sessionId), workers: [lines] };
}

describe('torture invariants', () => {
  it('a clean run passes every check', async () => {
    const evidence = await cleanEvidence('clean');
    expect(evidence.ledgerCalls.length).toBe(8);
    expect(await checkTrial(evidence)).toEqual({ violations: [], duplicates: 0, lost: 0 });
  });

  it('names a side effect that ran twice, a lost acknowledged message, and a stale-epoch append', async () => {
    const evidence = await cleanEvidence('planted');
    const notify = evidence.ledgerCalls.find((call) => call.tool === 'notify')!;
    const acks = evidence.workers[0]!;
    const findings = await checkTrial({
      ...evidence,
      ledgerCalls: [...evidence.ledgerCalls, { ...notify, order: 99, pid: 4242 }],
      workers: [
        acks,
        [
          { t: 'ack', ids: ['never-stored'], headSeq: 99, epoch: 1 },
          { t: 'ack', ids: [], headSeq: 100, epoch: 0 },
        ],
      ],
    });
    expect(findings.duplicates).toBe(1);
    expect(findings.lost).toBe(1);
    expect(findings.violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^notify notify-1 \(no retry, not idempotent\) ran 2 times/),
        expect.stringMatching(/acknowledged message never-stored .* is lost/),
        expect.stringMatching(/append at head 100 from epoch 0 after epoch 1/),
      ]),
    );
  });

  it('draws the same kill moments from the same seed', () => {
    const draw = (seed: number) => {
      const prng = createPrng(deriveSeed(seed, 'sqlite', 'crash', 7));
      return [prng.next(), prng.next(), prng.int(1, 6), prng.chance(0.5)];
    };
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(2));
  });
});
