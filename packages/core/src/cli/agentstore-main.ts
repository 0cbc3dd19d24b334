// `agentstore inspect <store> <sessionId> [--at seq] [--json]`
// `agentstore sessions <store> [--owner id] [--tenant id] [--agent name] [--limit n] [--cursor c] [--json]`
// `agentstore retention <store> (--idle-days n | --idle-before iso) [--batch n] [--max-batches n] [--cursor c] [--json]`
// `agentstore studio <store> [--port n] [--tenant t] [--owner o] [--open]`
import { isAgentStoreError } from '../errors.ts';
import { loadSessionAt } from '../inspect/session-at.ts';
import { foldSession } from '../inspect/session-fold.ts';
import { renderTimeline } from '../inspect/timeline.ts';
import type { AgentStore } from '../store/contract.ts';
import { type ParsedCommand, parseCommandLine, UsageError } from './flags.ts';
import { runRetention } from './retention.ts';
import { openStoreArgument, STORE_URL_ADAPTERS, StoreUrlError } from './store-url.ts';
import { loadStudioPackage, runStudio } from './studio.ts';

const USAGE = `usage:
  agentstore inspect <store> <sessionId> [--at seq] [--json]
  agentstore sessions <store> [--owner id] [--tenant id] [--agent name] [--limit n] [--cursor c] [--json]
  agentstore retention <store> (--idle-days n | --idle-before iso) [--batch n] [--max-batches n] [--cursor c] [--json]
  agentstore studio <store> [--port n] [--tenant t] [--owner o] [--open]
<store> is one of:
${STORE_URL_ADAPTERS.map((a) => `  ${a.example.padEnd(72)} (${a.package})`).join('\n')}
  a module (.ts/.js) that default-exports an AgentStore, or a function returning one (any store, D1 too)
The adapter package a URL needs is loaded from the project in the current directory.
studio serves a local web page (needs @agentstore/studio) on 127.0.0.1 until Ctrl-C.
inspect, sessions and studio open a SQLite file read-only; retention deletes, and only from a file that
already holds agentstore's tables.`;

async function main(argv: string[]): Promise<number> {
  // Every flag is checked before the store is opened, let alone written.
  const command = parseCommandLine(argv);
  if (command.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Checked before the store opens: a missing package must not cost a connection.
  const studio = command.command === 'studio' ? await loadStudioPackage() : null;
  const store = await openStoreArgument(command.store, { readOnly: command.command !== 'retention' });
  try {
    if (command.command === 'studio') return await runStudio(studio!, command, store);
    return await execute(command, store);
  } finally {
    await store.close();
  }
}

async function execute(
  command: Exclude<ParsedCommand, { command: 'help' } | { command: 'studio' }>,
  store: AgentStore,
) {
  if (command.command === 'inspect') {
    const { sessionId, at } = command;
    const loaded = at === undefined ? await store.load(sessionId) : await loadSessionAt(store, sessionId, at);
    if (!loaded) {
      process.stderr.write(`session ${JSON.stringify(sessionId)} not found\n`);
      return 1;
    }
    process.stdout.write(
      command.json
        ? `${JSON.stringify({ ...loaded, fold: foldSession(loaded.messages, loaded.session) }, null, 2)}\n`
        : renderTimeline(loaded),
    );
    return 0;
  }
  if (command.command === 'sessions') {
    const page = await store.listSessions({
      limit: command.limit,
      ...(command.ownerId !== undefined ? { ownerId: command.ownerId } : {}),
      ...(command.tenantId !== undefined ? { tenantId: command.tenantId } : {}),
      ...(command.agentName !== undefined ? { agentName: command.agentName } : {}),
      cursor: command.cursor,
    });
    if (command.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    else {
      for (const s of page.sessions) {
        process.stdout.write(
          `${JSON.stringify(s.id)}  agent ${s.agentName}  owner ${s.ownerId ?? '-'}  tenant ${s.tenantId ?? '-'}  head ${s.headSeq}  updated ${s.updatedAt}\n`,
        );
      }
      if (page.nextCursor !== null)
        process.stdout.write(`more: --cursor ${JSON.stringify(page.nextCursor)}\n`);
    }
    return 0;
  }
  const report = await runRetention(
    store,
    {
      ...(command.idleDays !== undefined ? { idleDays: command.idleDays } : {}),
      ...(command.idleBefore !== undefined ? { idleBefore: command.idleBefore } : {}),
      ...(command.batch !== undefined ? { batch: command.batch } : {}),
      ...(command.maxBatches !== undefined ? { maxBatches: command.maxBatches } : {}),
      cursor: command.cursor,
    },
    command.json ? undefined : (line) => process.stdout.write(`${line}\n`),
  ).catch((error: unknown) => {
    // A value the store refuses before deleting (e.g. a cursor it never wrote) is a usage error.
    if (isAgentStoreError(error, 'INVALID_ARGUMENT')) throw new UsageError(error.message);
    throw error;
  });
  process.stdout.write(
    command.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : `deleted ${report.deleted} sessions idle since before ${report.idleBefore} in ${report.batches} batches${report.nextCursor === null ? '' : `; resume with --cursor ${JSON.stringify(report.nextCursor)}`}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof StoreUrlError) {
      // One line: what was wrong; the stack of a usage mistake helps nobody.
      process.stderr.write(
        error instanceof UsageError
          ? `agentstore: ${error.message} (agentstore --help for usage)\n`
          : `${error.message}\n`,
      );
      process.exit(2);
    }
    // A typed store error says what happened in its message; anything else keeps its stack.
    process.stderr.write(
      `${isAgentStoreError(error) ? `agentstore: ${error.message}` : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
