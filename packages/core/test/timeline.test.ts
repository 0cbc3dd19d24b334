import { expect, it } from 'vitest';
import { renderTimeline, run } from '../src/index.ts';
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
    leaseTtlMs: 40,
  }).catch(() => undefined);
  await resumeUntilComplete(agent, { store, sessionId: 'inc-7', llm, ownerId: 'u1', leaseTtlMs: 40 });
  const text = renderTimeline((await store.load('inc-7'))!);
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe('session "inc-7"  agent triage  owner u1  tenant -');
  expect(lines[2]).toBe('lease free');
  expect(lines[3]).toBe('status complete: Escalated to on-call.');
  expect(lines[4]).toBe('#1 user      Checkout is down');
  expect(lines[5]).toBe('#2 assistant Checking and posting.');
  expect(lines[6]).toMatch(
    /^ {4}├─ lookup\(\{"customer":"acme"\}\) \[look\] → #\d ok \{"customer":"acme","plan":"pro"\}$/,
  );
  expect(lines[7]).toMatch(
    /^ {4}└─ postSlack\(\{"text":"checkout down"\}\) \[post\] → #\d DURABILITY ERROR .*TOOL_DURABILITY/,
  );
  expect(lines.at(-1)).toBe('#5 assistant Escalated to on-call.');
});
