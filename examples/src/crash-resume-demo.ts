// The main job: a durable triage agent on an embedded SQLite file is SIGKILLed after its Slack
// post went out but before the result was committed; a new process resumes it, and the post
// is not sent twice. Run: pnpm demo
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { foldSession, renderTimeline } from '@agentstore/core';
import { sqliteStore } from '@agentstore/sqlite';
import { fakeSlack } from './triage-agent.ts';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agentstore-demo-'));
const dbPath = join(dir, 'agent.db');
const ledgerPath = join(dir, 'slack.jsonl');
const sessionId = 'incident-42';

function worker(mode: 'crash' | 'resume') {
  const child = spawnSync(
    process.execPath,
    ['--conditions=@agentstore/source', join(here, 'triage-worker.ts'), dbPath, ledgerPath, sessionId, mode],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return child.signal ?? `exit ${child.status}`;
}

async function snapshot(title: string) {
  const store = sqliteStore({ path: dbPath });
  const loaded = await store.load(sessionId);
  await store.close();
  console.log(`\n── ${title} ──`);
  console.log(loaded ? renderTimeline(loaded).replace(/^/gm, '  ').trimEnd() : '  (nothing stored)');
  return loaded;
}

console.log(`agentstore demo — SQLite file ${dbPath}\n`);
console.log('▶ process 1: run the agent; it is killed right after posting to Slack');
const ended = worker('crash');
console.log(`  ✖ process 1 ended by ${ended}`);
const afterCrash = await snapshot('what the store holds after the crash');
const interrupted = afterCrash ? foldSession(afterCrash.messages).interruptedCalls.map((c) => c.name) : [];
console.log(`  interrupted calls: ${interrupted.join(', ') || 'none'}`);

console.log('\n▶ process 2: resume the same session');
const resumed = worker('resume');
console.log(`  process 2 ended with ${resumed}`);
const final = await snapshot('the session after resume');

const posts = fakeSlack(ledgerPath).posts();
console.log('\n── proof ──');
console.log(`  Slack posts sent: ${posts.length} (${posts.map((p) => p.channel).join(', ')})`);
const status = final ? foldSession(final.messages).status : 'missing';
console.log(`  session status: ${status}`);
console.log(
  `  inspect it yourself: AGENTSTORE_SQLITE_PATH=${dbPath} pnpm --filter @agentstore/examples inspect ${sessionId}`,
);
if (ended !== 'SIGKILL' || posts.length !== 1 || status !== 'complete') {
  console.error('\nDEMO FAILED: expected one SIGKILL, exactly one Slack post and a complete session');
  process.exit(1);
}
console.log('\n✔ crashed mid-step, resumed in a new process, side effect fired exactly once');
