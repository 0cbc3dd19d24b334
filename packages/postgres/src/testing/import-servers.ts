import { StoreConfigurationError } from '@agentstore/core';

/**
 * `@agentstore/servers` (an optional peer), which starts a throwaway server when no URL is set.
 * When it is not installed, a typed error says both ways out instead of a bare module-not-found.
 */
export async function importServers(
  store: string,
  envVar: string,
  server: string,
): Promise<typeof import('@agentstore/servers')> {
  try {
    return await import('@agentstore/servers');
  } catch (error) {
    if (
      (error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND' ||
      !String(error).includes('@agentstore/servers')
    ) {
      throw error;
    }
    throw new StoreConfigurationError(
      {
        store: `${store}/testing`,
        problem: 'no-server',
        detail: `${envVar} is not set, and @agentstore/servers, which would start ${server} to test against, is not installed.`,
        fix: `set ${envVar} to a server of your own, or install @agentstore/servers (npm i -D @agentstore/servers).`,
      },
      { cause: error },
    );
  }
}
