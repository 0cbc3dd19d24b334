import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runChild } from '../src/process/spawn-child.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'pool-holding-store.ts');
const dir = mkdtempSync(join(tmpdir(), 'agentstore-child-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child that appends three batches and is never killed: it must end on its own once done. */
const appendThree = (options: Record<string, string | boolean>) =>
  runChild(
    {
      module: fixture,
      options: { path: join(dir, `${crypto.randomUUID()}.db`), ...options },
      sessionId: `child-exit-${crypto.randomUUID()}`,
      mode: 'appends',
      batches: 3,
      armAfter: 1_000,
      killAtTurn: 0,
      leaseTtlMs: 10_000,
    },
    // The backstop: a child still alive by then is SIGKILLed, which the assertions below report.
    { timeoutMs: 20_000 },
  );

describe('process-tier children end when their work is done', () => {
  it('a child whose target keeps a handle open and declares no close exits by itself', {
    timeout: 30_000,
  }, async () => {
    const child = await appendThree({});
    expect(child.lines.map((line) => line.t)).toContain('done');
    expect([child.signal, child.code]).toEqual([null, 0]);
  });

  it('a plain target that declares close (no describe) is closed by the child', {
    timeout: 30_000,
  }, async () => {
    const closedMarker = join(dir, 'closed');
    const child = await appendThree({ declareClose: true, closedMarker });
    expect([child.signal, child.code]).toEqual([null, 0]);
    expect(existsSync(closedMarker)).toBe(true);
  });
});
