/**
 * The sessions of the corpus, written through real `run()`s with the scripted model. Generator
 * only: CI never runs this (it would write with the code under test, proving nothing).
 */
import { type AgentStore, type LoadResult, type RunOptions, run } from '@agentstore/core';
import { faultyStore, isSimulatedCrash, type ScriptStep, scriptedLlm } from '@agentstore/core/testing';
import { goldenAgent, type HandlerLog } from './agent.ts';
import type { EndState, GoldenSession } from './corpus-files.ts';

/** Hostile but valid: non-ASCII of every width, combining marks, a BOM, quotes, and U+0000 (not in ids). */
export const HOSTILE_TEXT =
  'NUL \u0000 here, emoji 😀, RTL مرحبا, CJK 中文, e\u0301, BOM \uFEFF, quotes "\'\\ and \n\t';
export const HOSTILE_ID = 'golden-hostile-ünïcödé-中文-😀';

interface Scenario {
  scenario: string;
  sessionId: string;
  ownerId: string | null;
  tenantId: string | null;
  end: EndState;
  /** The whole script of the session, indexed by assistant messages already stored. */
  script: ScriptStep[];
  /** The runs, in order; `crash` crashes that run after write #1 (before its first result lands). */
  runs: (Pick<RunOptions, 'message' | 'messageId' | 'approvals'> & { crash?: true })[];
}

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

const SCENARIOS: Scenario[] = [
  {
    scenario: 'plain text turns, owner and tenant set, a messageId',
    sessionId: 'golden-text',
    ownerId: 'user-1',
    tenantId: 'tenant-a',
    end: 'complete',
    script: [
      { text: 'I look up weather, add numbers, send emails and charge cards.', usage: usage(120, 14) },
      { text: 'You are welcome.', usage: usage(150, 4) },
    ],
    runs: [{ message: 'Hello! What can you do?', messageId: 'request-1' }, { message: 'Thanks.' }],
  },
  {
    scenario: 'a tool call with its result',
    sessionId: 'golden-tools',
    ownerId: 'user-1',
    tenantId: null,
    end: 'complete',
    script: [
      {
        toolCalls: [{ id: 'call-lookup-paris', name: 'lookup', input: { city: 'Paris' } }],
        usage: usage(90, 11),
      },
      { text: 'It is sunny in Paris, 21 °C.', usage: usage(130, 9) },
    ],
    runs: [{ message: 'What is the weather in Paris?' }],
  },
  {
    scenario: 'parallel calls in one step (one call id assigned by the loop)',
    sessionId: 'golden-parallel',
    ownerId: null,
    tenantId: 'tenant-a',
    end: 'complete',
    script: [
      {
        text: 'Let me check both.',
        toolCalls: [
          { id: 'call-lookup-oslo', name: 'lookup', input: { city: 'Oslo' } },
          { name: 'add', input: { a: 2, b: 3 } },
        ],
        usage: usage(95, 20),
      },
      { text: 'Oslo is sunny, and 2 + 3 = 5.', usage: usage(160, 12) },
    ],
    runs: [{ message: 'Weather in Oslo, and what is 2 + 3?' }],
  },
  {
    scenario: 'approvals requested, then one approved and one rejected with a reason',
    sessionId: 'golden-approvals-decided',
    ownerId: 'user-2',
    tenantId: 'tenant-b',
    end: 'complete',
    script: [
      {
        toolCalls: [
          { id: 'call-email-ann', name: 'send_email', input: { to: 'ann@example.com', body: 'Hi Ann' } },
          { id: 'call-email-bob', name: 'send_email', input: { to: 'bob@example.com', body: 'Hi Bob' } },
        ],
        usage: usage(100, 30),
      },
      { text: 'Sent to Ann; the email to Bob was rejected.', usage: usage(170, 10) },
    ],
    runs: [
      { message: 'Email Ann and Bob.' },
      {
        approvals: {
          'call-email-ann': { approve: true },
          'call-email-bob': { approve: false, reason: 'Bob is on leave' },
        },
      },
    ],
  },
  {
    scenario: 'a session awaiting approval',
    sessionId: 'golden-awaiting-approval',
    ownerId: 'user-2',
    tenantId: 'tenant-b',
    end: 'awaiting-approval',
    script: [
      {
        text: 'I will email Carol once you approve.',
        toolCalls: [{ id: 'call-email-carol', name: 'send_email', input: { to: 'carol@example.com' } }],
        usage: usage(80, 15),
      },
    ],
    runs: [{ message: 'Email Carol.' }],
  },
  {
    scenario: 'a crash after write #1, resumed: a tool-durability-error result, then the answer',
    sessionId: 'golden-durability-error',
    ownerId: null,
    tenantId: null,
    end: 'complete',
    script: [
      { toolCalls: [{ id: 'call-charge-500', name: 'charge', input: { cents: 500 } }], usage: usage(70, 9) },
      { text: 'I could not confirm the charge; please check your statement.', usage: usage(140, 13) },
    ],
    runs: [{ message: 'Charge 5 euros.', crash: true }, {}],
  },
  {
    scenario: 'an interrupted call: crashed after write #1, never resumed (lease left behind)',
    sessionId: 'golden-interrupted',
    ownerId: 'user-3',
    tenantId: null,
    end: 'interrupted',
    script: [
      {
        toolCalls: [
          { id: 'call-charge-700', name: 'charge', input: { cents: 700 } },
          { id: 'call-lookup-rome', name: 'lookup', input: { city: 'Rome' } },
        ],
        usage: usage(75, 18),
      },
    ],
    runs: [{ message: 'Charge 7 euros and check the weather in Rome.', crash: true }],
  },
  {
    scenario: 'hostile but valid strings: non-ASCII ids, owner and tenant, U+0000 in content and tool JSON',
    sessionId: HOSTILE_ID,
    ownerId: 'ówner-😀',
    tenantId: 'テナント',
    end: 'complete',
    script: [
      {
        text: HOSTILE_TEXT,
        toolCalls: [
          {
            id: 'call-ünï-😀',
            name: 'lookup',
            input: { city: `Zürich ${HOSTILE_TEXT}`, 'kéy\u0000': [HOSTILE_TEXT] },
          },
        ],
        usage: usage(99, 33),
      },
      { text: `Done: ${HOSTILE_TEXT}`, usage: usage(180, 21) },
    ],
    runs: [{ message: HOSTILE_TEXT }],
  },
];

/** A crashed run's lease is short, so the generator's own resume takes it over after a moment. */
const CRASH_LEASE_TTL_MS = 1_000;

/** Writes every scenario through `store` and returns each session as the store loads it. */
export async function writeSessions(store: AgentStore): Promise<GoldenSession[]> {
  const sessions: GoldenSession[] = [];
  for (const s of SCENARIOS) {
    const log: HandlerLog = { calls: [] };
    const agent = goldenAgent(log);
    let answer = '';
    for (const step of s.runs) {
      const { crash, ...input } = step;
      const options: RunOptions = {
        ...input,
        store: crash ? faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' }) : store,
        sessionId: s.sessionId,
        ownerId: s.ownerId,
        tenantId: s.tenantId,
        llm: scriptedLlm(s.script),
        leaseTtlMs: crash ? CRASH_LEASE_TTL_MS : 10_000,
        leaseWaitMs: 15_000,
        onBackgroundError: () => {}, // a crashed run cannot release its lease: that is the point
      };
      if (crash) {
        const error = await run(agent, options).then(
          () => new Error(`${s.sessionId}: the crashing run completed`),
          (e: unknown) => e,
        );
        if (!isSimulatedCrash(error)) throw error;
        continue;
      }
      const result = await run(agent, options);
      answer = result.response;
    }
    const load = (await store.load(s.sessionId)) as LoadResult | null;
    if (!load) throw new Error(`${s.sessionId}: not found after writing it`);
    sessions.push({
      scenario: s.scenario,
      sessionId: s.sessionId,
      end: s.end,
      answer,
      handlerCalls: log.calls.map((c) => c.tool),
      load,
    });
  }
  return sessions;
}
