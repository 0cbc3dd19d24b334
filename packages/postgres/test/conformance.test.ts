import { describeAgentStoreConformance } from '@agentstore/conformance';
import { launchPostgres } from '@agentstore/servers';
import { afterAll } from 'vitest';
import { postgresTestTarget } from '../src/testing/index.ts';

// One server (AGENTSTORE_PG_URL, or a throwaway one from the launcher) and one fresh schema per
// target; every spec gets its own store on a shared pool the stores never end.
const server = await launchPostgres();
const prepared = await postgresTestTarget({ connectionString: server.info.url });
const unprepared = await postgresTestTarget({ connectionString: server.info.url, preparedStatements: false });
describeAgentStoreConformance(prepared);
describeAgentStoreConformance(unprepared);

afterAll(async () => {
  await prepared.close();
  await unprepared.close();
  await server.stop();
});
