// `agentstore studio`: the web app lives in @agentstore/studio, loaded only when asked for, so
// core keeps no dependency on it (nor on anything it uses).
import type { AgentStore } from '../store/contract.ts';
import type { ParsedCommand } from './flags.ts';
import { importFromProject, StoreUrlError } from './store-url.ts';

const PACKAGE = '@agentstore/studio';

/** What the CLI uses of @agentstore/studio (typed here: core cannot import its types). */
export interface StudioPackage {
  startStudio(options: {
    store: AgentStore;
    port?: number;
    tenantId?: string;
    ownerId?: string;
    onRefusal?: (refusal: { method: string; path: string; status: number; reason: string }) => void;
  }): Promise<{ url: string; close(): Promise<void> }>;
  openInBrowser(url: string): Promise<void>;
}

/** The project's @agentstore/studio (or one installed beside this CLI), or a clear error naming what to install. */
export async function loadStudioPackage(cwd = process.cwd()): Promise<StudioPackage> {
  let loaded = await importFromProject(PACKAGE, cwd);
  if (!loaded) {
    try {
      loaded = (await import(PACKAGE)) as Record<string, unknown>;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    }
  }
  if (!loaded) {
    throw new StoreUrlError(
      `agentstore studio needs ${PACKAGE}: install it in this project (npm install --save-dev ${PACKAGE}) and run agentstore from the project's directory`,
    );
  }
  if (typeof loaded.startStudio !== 'function' || typeof loaded.openInBrowser !== 'function') {
    throw new StoreUrlError(
      `${PACKAGE} in this project does not match this agentstore CLI; install the same version as @agentstore/core`,
    );
  }
  return loaded as unknown as StudioPackage;
}

/** Serves the studio until SIGINT/SIGTERM, then closes it (the caller closes the store). */
export async function runStudio(
  studioPackage: StudioPackage,
  command: Extract<ParsedCommand, { command: 'studio' }>,
  store: AgentStore,
): Promise<number> {
  const studio = await studioPackage.startStudio({
    store,
    port: command.port,
    ...(command.tenantId !== undefined ? { tenantId: command.tenantId } : {}),
    ...(command.ownerId !== undefined ? { ownerId: command.ownerId } : {}),
    // A refused request is worth a line: a stale tab, or something probing the port.
    onRefusal: (r) =>
      process.stderr.write(`agentstore studio: refused ${r.method} ${r.path}: ${r.status} ${r.reason}\n`),
  });
  const scope = [
    command.tenantId && `tenant ${command.tenantId}`,
    command.ownerId && `owner ${command.ownerId}`,
  ]
    .filter(Boolean)
    .join(', ');
  process.stdout.write(
    `agentstore studio${scope ? ` (scope: ${scope})` : ''} at\n  ${studio.url}\nThe link holds a one-time token: anyone with it can read this store. Ctrl-C stops the studio.\n`,
  );
  if (command.open) {
    await studioPackage.openInBrowser(studio.url).catch((error: unknown) => {
      process.stderr.write(
        `agentstore: could not open a browser (${(error as Error).message}); open the link above\n`,
      );
    });
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await studio.close();
  return 0;
}
