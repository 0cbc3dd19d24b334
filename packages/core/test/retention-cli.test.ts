import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runRetention } from '../src/cli/retention.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../src/cli/agentstore.ts', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/retention-store.ts', import.meta.url));
const future = () => new Date(Date.now() + 3_600_000).toISOString();

async function seeded(count: number) {
  const store = durableMemoryStore();
  const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };
  for (let i = 0; i < count; i++) {
    const message = { id: `m${i}`, role: 'user' as const, content: 'x', createdAt: new Date().toISOString() };
    await store.append(`s${i}`, { expectedSeq: 0, messages: [message], session: { init }, lease: null });
  }
  return store;
}

describe('agentstore retention', () => {
  it('sweeps in bounded batches to the end and reports every line of progress', async () => {
    const store = await seeded(7);
    const lines: string[] = [];
    const report = await runRetention(store, { idleBefore: future(), batch: 3 }, (line) => lines.push(line));
    expect(report).toMatchObject({ deleted: 7, batches: 3, nextCursor: null });
    expect(lines).toEqual([
      'batch 1: deleted 3 (total 3)',
      'batch 2: deleted 3 (total 6)',
      'batch 3: deleted 1 (total 7)',
    ]);
    expect((await store.listSessions({ limit: 10 })).sessions).toEqual([]);
  });

  it('--max-batches stops early with a cursor that resumes the same sweep', async () => {
    const store = await seeded(5);
    const idleBefore = future();
    const first = await runRetention(store, { idleBefore, batch: 2, maxBatches: 1 });
    expect(first).toMatchObject({ deleted: 2, batches: 1 });
    expect(first.nextCursor).not.toBeNull();
    const rest = await runRetention(store, { idleBefore, batch: 2, cursor: first.nextCursor });
    expect(rest).toMatchObject({ deleted: 3, nextCursor: null });
  });

  it('--idle-days counts back from now: nothing appended in the last day is touched', async () => {
    const store = await seeded(2);
    expect(await runRetention(store, { idleDays: 1 })).toMatchObject({ deleted: 0 });
    expect((await store.listSessions({ limit: 10 })).sessions).toHaveLength(2);
  });

  it('refuses ambiguous or bad flags before touching the store', async () => {
    const store = await seeded(1);
    for (const options of [
      {},
      { idleDays: 1, idleBefore: future() },
      { idleDays: -1 },
      { idleDays: 1, batch: 0 },
    ]) {
      await expect(runRetention(store, options)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect((await store.listSessions({ limit: 10 })).sessions).toHaveLength(1);
  });

  it('the bin deletes idle sessions of a store module and leaves a leased one', async () => {
    const args = [
      '--conditions=@agentstore/source',
      cli,
      'retention',
      fixture,
      '--idle-before',
      future(),
      '--batch',
      '2',
      '--json',
    ];
    const { stdout } = await run(process.execPath, args);
    expect(JSON.parse(stdout)).toMatchObject({ deleted: 4, batches: 3, nextCursor: null });
    const refused = await run(process.execPath, args.slice(0, 4)).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toMatch(/idle-before/);
  });
});
