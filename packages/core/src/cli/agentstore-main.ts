// `agentstore inspect <store> <sessionId> [--at seq] [--json]`
// `agentstore sessions <store> [--owner id] [--tenant id] [--agent name] [--limit n] [--cursor c] [--json]`
// `agentstore retention <store> (--idle-days n | --idle-before iso) [--batch n] [--max-batches n] [--cursor c] [--json]`
import { parseArgs } from 'node:util';
import { isAgentStoreError } from '../errors.ts';
import { loadSessionAt } from '../inspect/session-at.ts';
import { foldSession } from '../inspect/session-fold.ts';
import { renderTimeline } from '../inspect/timeline.ts';
import { runRetention } from './retention.ts';
import { openStoreArgument, STORE_URL_ADAPTERS, StoreUrlError } from './store-url.ts';

const USAGE = `usage:
  agentstore inspect <store> <sessionId> [--at seq] [--json]
  agentstore sessions <store> [--owner id] [--tenant id] [--agent name] [--limit n] [--cursor c] [--json]
  agentstore retention <store> (--idle-days n | --idle-before iso) [--batch n] [--max-batches n] [--cursor c] [--json]
<store> is one of:
${STORE_URL_ADAPTERS.map((a) => `  ${a.example.padEnd(72)} (${a.package})`).join('\n')}
  a module (.ts/.js) that default-exports an AgentStore, or a function returning one (any store, D1 too)
The adapter package a URL needs is loaded from the project in the current directory.`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      at: { type: 'string' },
      json: { type: 'boolean', default: false },
      owner: { type: 'string' },
      tenant: { type: 'string' },
      agent: { type: 'string' },
      limit: { type: 'string', default: '20' },
      cursor: { type: 'string' },
      'idle-days': { type: 'string' },
      'idle-before': { type: 'string' },
      batch: { type: 'string' },
      'max-batches': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, storeArgument, sessionId] = positionals;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!command || !storeArgument) throw new UsageError(USAGE);
  if (command !== 'inspect' && command !== 'sessions' && command !== 'retention') throw new UsageError(USAGE);
  if (command === 'inspect' && !sessionId) throw new UsageError(USAGE);
  const store = await openStoreArgument(storeArgument);
  try {
    if (command === 'inspect') {
      if (!sessionId) throw new UsageError(USAGE);
      const at = values.at === undefined ? undefined : Number(values.at);
      if (at !== undefined && !Number.isSafeInteger(at)) throw new UsageError('--at takes a seq number');
      const loaded =
        at === undefined ? await store.load(sessionId) : await loadSessionAt(store, sessionId, at);
      if (!loaded) {
        process.stderr.write(`session ${JSON.stringify(sessionId)} not found\n`);
        return 1;
      }
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ ...loaded, fold: foldSession(loaded.messages, loaded.session) }, null, 2)}\n`
          : renderTimeline(loaded),
      );
      return 0;
    }
    if (command === 'sessions') {
      const limit = Number(values.limit);
      const page = await store.listSessions({
        limit,
        ...(values.owner !== undefined ? { ownerId: values.owner } : {}),
        ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
        ...(values.agent !== undefined ? { agentName: values.agent } : {}),
        cursor: values.cursor ?? null,
      });
      if (values.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
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
    if (command === 'retention') {
      const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
      const report = await runRetention(
        store,
        {
          idleDays: number(values['idle-days']),
          idleBefore: values['idle-before'],
          batch: number(values.batch),
          maxBatches: number(values['max-batches']),
          cursor: values.cursor ?? null,
        },
        values.json ? undefined : (line) => process.stdout.write(`${line}\n`),
      ).catch((error: unknown) => {
        // Bad flags are a usage error (exit 2, no stack), like every other flag here.
        if (isAgentStoreError(error, 'INVALID_ARGUMENT')) throw new UsageError(error.message);
        throw error;
      });
      process.stdout.write(
        values.json
          ? `${JSON.stringify(report, null, 2)}\n`
          : `deleted ${report.deleted} sessions idle since before ${report.idleBefore} in ${report.batches} batches${report.nextCursor === null ? '' : `; resume with --cursor ${JSON.stringify(report.nextCursor)}`}\n`,
      );
      return 0;
    }
    throw new UsageError(USAGE);
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof UsageError || error instanceof StoreUrlError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(error instanceof UsageError || error instanceof StoreUrlError ? 2 : 1);
  },
);
