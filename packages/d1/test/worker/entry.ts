import { type D1DatabaseLike, d1Store } from '../../src/index.ts';
import { benchAppends } from './bench.ts';
import { runScenario } from './run-scenario.ts';

/**
 * A test worker: everything below runs inside workerd, next to the D1 binding, the way a
 * production Worker would use the store. The vitest side only calls `dispatchFetch` and reads
 * the JSON report.
 */
interface Env {
  DB: D1DatabaseLike;
}

const int = (url: URL, name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);

async function handle(url: URL, env: Env): Promise<unknown> {
  const store = d1Store({ binding: env.DB }, { tablePrefix: url.searchParams.get('prefix') ?? 'worker_' });
  await store.migrate();
  switch (url.pathname) {
    case '/run':
      return runScenario(store, url.searchParams.get('session') ?? crypto.randomUUID());
    case '/bench':
      return benchAppends(store, env.DB, {
        rounds: int(url, 'rounds', 9),
        appendsPerRound: int(url, 'n', 100),
        messagesPerAppend: int(url, 'k', 3),
        messageBytes: int(url, 'bytes', 300),
      });
    default:
      throw new Error(`no route ${url.pathname}`);
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    try {
      return Response.json(await handle(new URL(request.url), env));
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      return Response.json({ error: `${e.name}: ${e.message}`, stack: e.stack }, { status: 500 });
    }
  },
};
