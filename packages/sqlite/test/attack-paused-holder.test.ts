import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { run } from '@agentstore/core';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { chargingAgent, chargingScript, ledgerLines } from './fixtures/charging-agent.ts';
import { tempDatabaseDir } from './helpers.ts';

/*
 * Attack (issue 14), with real processes and a real SQLite file: worker A is SIGSTOPped inside
 * its handler, before it checks ctx.signal, and stays stopped past its lease. Worker B (this
 * process) takes the lease by the database's clock, reconciles ("not found") and fires. Then A
 * is continued: its handler resumes and checks ctx.signal right before its effect. Exactly one
 * effect per idempotency key, and A must end with LEASE_LOST, whether its stdin wakes it after
 * SIGCONT or a timer of its own that fell due before the lease deadline (that one runs before the
 * keeper's timer: without a deadline check on reading ctx.signal, A fires a second time — caught
 * whenever the SIGSTOP lands within that timer's ttl/8, i.e. practically always).
 */
const dir = tempDatabaseDir();
afterAll(() => dir.cleanup());

describe('attack: SIGSTOP of the holder past its TTL, then SIGCONT', () => {
  it.each(['stdin', 'timer'])(
    'the continued holder (woken by %s) neither fires nor appends; one effect per idempotency key',
    async (wake) => {
      const path = dir.file();
      const ledger = `${path}.${wake}.ledger`;
      const script = fileURLToPath(new URL('./fixtures/paused-holder.ts', import.meta.url));
      const child = spawn(
        process.execPath,
        ['--conditions=@agentstore/source', script, path, `paused-${wake}`, ledger, '2000', wake],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
      const inHandler = new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('in-handler')) resolve();
        });
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await inHandler;
      process.kill(child.pid!, 'SIGSTOP');
      // A's "downstream answer" is now waiting in its stdin; A cannot read it while stopped.
      child.stdin.end('go\n');

      // Worker B waits for A's lease to lapse by the database's clock, reconciles, fires.
      const store = sqliteStore({ path });
      const b = await run(chargingAgent(ledger), {
        store,
        sessionId: `paused-${wake}`,
        llm: chargingScript(),
        leaseWaitMs: 60_000,
      });
      expect(b.status).toBe('complete');
      expect(ledgerLines(ledger)).toHaveLength(1);
      const headAfterB = (await store.load(`paused-${wake}`))?.session.headSeq;

      process.kill(child.pid!, 'SIGCONT');
      await exited;
      expect(stdout, stderr).toContain('outcome LEASE_LOST');
      expect(ledgerLines(ledger)).toHaveLength(1);
      expect((await store.load(`paused-${wake}`))?.session.headSeq).toBe(headAfterB);
      await store.close();
    },
  );
});
