import { describeAgentStoreConformance } from '@agentstore/conformance';
import { afterAll } from 'vitest';
import { d1TestTarget } from '../src/testing/index.ts';
import { launchTestD1 } from './launch.ts';

/**
 * The whole conformance kit against a real D1 database (workerd's, in Miniflare), reached from
 * Node through miniflare's proxy. Raw reader, corrupt and floor use plain SQL on the same binding.
 */
const server = await launchTestD1();
const target = await d1TestTarget({ binding: server.db });
describeAgentStoreConformance(target);

afterAll(async () => {
  await target.close();
  await server.stop();
});
