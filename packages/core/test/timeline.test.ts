import { expect, it } from 'vitest';
import { loadSessionAt, type ResultOrigin, renderTimeline, run } from '../src/index.ts';
import { crashAfterToolResults, durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';
import { resumeUntilComplete, sideEffectLedger, triageAgent } from './fixtures.ts';

it('renders a session with a durability error as a readable timeline', async () => {
  const store = durableMemoryStore();
  const agent = triageAgent(sideEffectLedger());
  const llm = scriptedLlm([
    {
      text: 'Checking and posting.',
      toolCalls: [
        { id: 'look', name: 'lookup', input: { customer: 'acme' } },
        { id: 'post', name: 'postSlack', input: { text: 'checkout down' } },
      ],
    },
    { text: 'Escalated to on-call.' },
  ]);
  await run(agent, {
    store: crashAfterToolResults(store),
    sessionId: 'inc-7',
    message: 'Checkout is down',
    llm,
    ownerId: 'u1',
    leaseTtlMs: 300,
  }).catch(() => undefined);
  await resumeUntilComplete(agent, { store, sessionId: 'inc-7', llm, ownerId: 'u1', leaseTtlMs: 300 });
  const text = renderTimeline((await store.load('inc-7'))!);
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe('session "inc-7"  agent triage  owner u1  tenant -');
  expect(lines[2]).toBe('lease free');
  expect(lines[3]).toBe('status complete: Escalated to on-call.');
  expect(lines[4]).toBe('#1 user      Checkout is down');
  expect(lines[5]).toBe('#2 assistant Checking and posting.  [10 in / 5 out tokens]');
  expect(lines[6]).toMatch(
    /^ {4}├─ lookup\(\{"customer":"acme"\}\) \[look\] → #\d ok \(re-invoked after a crash, attempt 2\) \{"customer":"acme","plan":"pro"\}$/,
  );
  expect(lines[7]).toMatch(
    /^ {4}└─ postSlack\(\{"text":"checkout down"\}\) \[post\] → #\d DURABILITY ERROR \(durability error\) .*TOOL_DURABILITY/,
  );
  expect(lines.at(-1)).toBe('#5 assistant Escalated to on-call.  [10 in / 5 out tokens]');
});

/** A finished session with one postSlack call and its result. */
async function oneCallSession(sessionId: string) {
  const store = durableMemoryStore();
  const llm = scriptedLlm([
    { text: 'Posting.', toolCalls: [{ id: 'post', name: 'postSlack', input: { text: 'hi' } }] },
    { text: 'Done.' },
  ]);
  await run(triageAgent(sideEffectLedger()), { store, sessionId, message: 'go', llm });
  return store;
}

it('shows how each result was obtained when the result records its origin', async () => {
  const store = await oneCallSession('o-1');
  const loaded = (await store.load('o-1'))!;
  const withOrigin = (via: ResultOrigin['via'], attempt: number) => ({
    ...loaded,
    messages: loaded.messages.map((m) => (m.role === 'tool' ? { ...m, origin: { via, attempt } } : m)),
  });
  const callLine = (text: string) => text.split('\n').find((l) => l.includes('postSlack('))!;
  // What run() stored: the handler's first run.
  expect(callLine(renderTimeline(loaded))).toMatch(/→ #\d ok \(first run\) \{/);
  const stripped = { ...loaded, messages: loaded.messages.map(({ origin: _, ...m }) => m) };
  expect(callLine(renderTimeline(stripped))).toMatch(/→ #\d ok \{/); // written before origins
  expect(callLine(renderTimeline(withOrigin('handler', 2)))).toMatch(
    /→ #\d ok \(re-invoked after a crash, attempt 2\) \{/,
  );
  expect(callLine(renderTimeline(withOrigin('reconciled', 1)))).toMatch(/→ #\d ok \(reconciled\) \{/);
  expect(callLine(renderTimeline(withOrigin('durability-error', 1)))).toMatch(
    /→ #\d ok \(durability error\) \{/,
  );
});

it('--at shows the session as of that seq: its time, and says the lease is not known', async () => {
  const store = await oneCallSession('at-1');
  const today = (await store.load('at-1'))!;
  const at2 = (await loadSessionAt(store, 'at-1', 2))!;
  expect(at2.asOf).toEqual({
    seq: 2,
    headSeqNow: today.session.headSeq,
    leaseKnown: false,
    stateKnown: false,
  });
  expect(at2.session.updatedAt).toBe(today.messages[1]!.createdAt);
  expect(at2.session.lease).toBeNull();
  const lines = renderTimeline(at2).split('\n');
  expect(lines[1]).toBe(
    `head seq 2  created ${today.session.createdAt}  updated ${today.messages[1]!.createdAt} (time of seq 2; head today ${today.session.headSeq})`,
  );
  expect(lines[2]).toBe('lease not known at seq 2 (the log does not record leases)');
  expect(lines[3]).toBe('status interrupted');
  expect((await loadSessionAt(store, 'at-1', 0))!.session.updatedAt).toBe(today.session.createdAt);
});
