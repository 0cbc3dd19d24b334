import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../src/cli/flags.ts';
import { runRetention } from '../src/cli/retention.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

const cli = join(import.meta.dirname, '../src/cli/agentstore.ts');
const fixture = join(import.meta.dirname, 'fixtures/logged-retention-store.ts');
const work = mkdtempSync(join(tmpdir(), 'agentstore-cli-flags-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the bin against the logged store; returns its exit, stderr and the deletions it made. */
function agentstore(args: string[], name: string) {
  const log = join(work, `${name}.log`);
  const result = spawnSync(process.execPath, ['--conditions=@agentstore/source', cli, ...args], {
    env: { ...process.env, AGENTSTORE_TEST_DELETE_LOG: log },
    encoding: 'utf8',
  });
  const deletions = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { status: result.status, stderr: result.stderr, stdout: result.stdout, deletions };
}

describe('the agentstore CLI checks every flag before it deletes anything', () => {
  const retention = (...flags: string[]) => ['retention', fixture, ...flags];
  const cases: [string, string[], RegExp][] = [
    [
      'max-batches 0',
      retention('--idle-days', '0', '--max-batches', '0'),
      /--max-batches takes a whole number from 1/,
    ],
    ['max-batches abc', retention('--idle-days', '0', '--max-batches', 'abc'), /not "abc"/],
    ['max-batches 1.5', retention('--idle-days', '0', '--max-batches', '1.5'), /--max-batches/],
    ['idle-days 1e10', retention('--idle-days', '1e10'), /--idle-days takes a number of days from 0 to \d+/],
    ['idle-days huge', retention('--idle-days', '99999999'), /--idle-days takes a number of days/],
    ['idle-days empty', retention('--idle-days', ''), /--idle-days .* not ""/],
    ['idle-days negative', retention('--idle-days=-1'), /--idle-days/],
    [
      'batch hex',
      retention('--idle-days', '0', '--batch', '0x10'),
      /--batch takes a whole number from 1 to 1000/,
    ],
    ['batch too big', retention('--idle-days', '0', '--batch', '1001'), /--batch/],
    ['idle-before not ISO', retention('--idle-before', 'March 7'), /--idle-before takes an ISO-8601 time/],
    ['idle-before year 10000', retention('--idle-before', '+010000-01-01T00:00:00Z'), /--idle-before/],
    ['both cutoffs', retention('--idle-days', '1', '--idle-before', '2020-01-01'), /exactly one of/],
    ['unknown flag', retention('--idle-dayz', '1'), /Unknown option '--idle-dayz'/],
    [
      "another command's flag",
      retention('--idle-days', '1', '--limit', '5'),
      /retention does not take --limit/,
    ],
    ['empty cursor', retention('--idle-days', '0', '--cursor', ''), /--cursor/],
    [
      'a cursor the store never wrote',
      retention('--idle-days', '0', '--cursor', 'nonsense'),
      /Invalid cursor/,
    ],
    ['inspect --at abc', ['inspect', fixture, 's1', '--at', 'abc'], /--at takes a whole number/],
    ['sessions --limit 0', ['sessions', fixture, '--limit', '0'], /--limit takes a whole number from 1/],
    ['sessions --limit ""', ['sessions', fixture, '--limit', ''], /--limit/],
    ['unknown command', ['purge', fixture], /unknown command "purge"/],
  ];
  it.each(cases)('%s: exit 2, one line, no stack, nothing deleted', (name, args, message) => {
    const result = agentstore(args, name.replace(/\W+/g, '-'));
    expect(result.stderr).toMatch(message);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^agentstore: /);
    expect(result.deletions).toEqual([]);
  });

  it('a valid sweep still deletes, batch by batch, and --max-batches 1 stops after one', () => {
    // A cutoff after the fixture's sessions were written (it writes them when the CLI opens it).
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const full = agentstore(retention('--idle-before', later, '--batch', '2', '--json'), 'valid');
    expect(full.status).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ deleted: 4, batches: 3, nextCursor: null });
    const one = agentstore(retention('--idle-before', later, '--batch', '2', '--max-batches', '1'), 'one');
    expect(one.status).toBe(0);
    expect(one.deletions).toHaveLength(1);
    expect(one.stdout).toMatch(/resume with --cursor/);
  });
});

describe('runRetention, called directly', () => {
  it('refuses maxBatches 0, NaN or a fraction and idleDays past the year 0000 with INVALID_ARGUMENT, deleting nothing', async () => {
    const store = durableMemoryStore();
    const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };
    const message = { id: 'm', role: 'user' as const, content: 'x', createdAt: new Date().toISOString() };
    await store.append('s', { expectedSeq: 0, messages: [message], session: { init }, lease: null });
    for (const options of [
      { idleDays: 0, maxBatches: 0 },
      { idleDays: 0, maxBatches: Number.NaN },
      { idleDays: 0, maxBatches: 1.5 },
      { idleDays: 1e10 },
      { idleDays: 0, cursor: 'not a cursor' },
    ]) {
      await expect(runRetention(store, options)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect((await store.listSessions({ limit: 10 })).sessions).toHaveLength(1);
  });
});

describe('parseCommandLine', () => {
  it('reads plain numbers and fractional days, and keeps the defaults', () => {
    expect(parseCommandLine(['retention', 'x.db', '--idle-days', '0.5', '--max-batches', '3'])).toMatchObject(
      {
        idleDays: 0.5,
        maxBatches: 3,
        batch: undefined,
        cursor: null,
      },
    );
    expect(parseCommandLine(['sessions', 'x.db'])).toMatchObject({ limit: 20, json: false });
    expect(parseCommandLine(['inspect', 'x.db', 's', '--at', '7'])).toMatchObject({ at: 7 });
    expect(parseCommandLine(['--help'])).toEqual({ command: 'help' });
  });
});
