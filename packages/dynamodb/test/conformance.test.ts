import { describeAgentStoreConformance } from '@agentstore/conformance';
import { afterAll, inject } from 'vitest';
import { dynamodbTestTarget } from '../src/testing/index.ts';

// One client and one fresh table for the whole kit; every store shares the client and must not
// destroy it. The raw reader, corrupter and floor use the same client with their own commands.
const target = await dynamodbTestTarget({ endpoint: inject('dynamodbEndpoint') });
describeAgentStoreConformance(target);

afterAll(() => target.close());
