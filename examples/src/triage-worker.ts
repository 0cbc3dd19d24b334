// One process of the demo: runs (or resumes) the triage session on the SQLite file.
// argv: <db path> <slack ledger path> <session id> <crash|resume>
import { fromAiSdk } from '@agentstore/ai-sdk';
import { type LlmAdapter, run } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { sqliteStore } from '@agentstore/sqlite';
import { createOpenAI } from '@ai-sdk/openai';
import { fakeSlack, triageAgent, triageScript } from './triage-agent.ts';

const [dbPath, ledgerPath, sessionId, mode] = process.argv.slice(2);
if (!dbPath || !ledgerPath || !sessionId || (mode !== 'crash' && mode !== 'resume')) {
  throw new Error('usage: triage-worker <db> <ledger> <sessionId> <crash|resume>');
}
const log = (line: string) => process.stdout.write(`    ${line}\n`);
const store = sqliteStore({ path: dbPath });
const agent = triageAgent(fakeSlack(ledgerPath), {
  log,
  // The real thing: the OS kills this process between write #1 and write #2.
  afterPost: mode === 'crash' ? () => process.kill(process.pid, 'SIGKILL') : undefined,
});
// A real model when a key is configured (any AI SDK provider works the same way); else the script.
const llm: LlmAdapter = process.env.OPENAI_API_KEY
  ? fromAiSdk(createOpenAI()(process.env.AGENTSTORE_DEMO_MODEL ?? 'gpt-4o-mini'))
  : scriptedLlm(triageScript);
const result = await run(agent, {
  store,
  sessionId,
  message: mode === 'crash' ? 'Checkout is down for Acme' : undefined,
  llm,
  leaseTtlMs: 1_000,
  leaseWaitMs: 5_000,
});
log(`run finished: status ${result.status}, head seq ${result.headSeq}`);
log(`answer: ${result.response}`);
await store.close();
