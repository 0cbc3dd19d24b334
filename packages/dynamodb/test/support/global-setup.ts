import { launchDynamoDb } from '@agentstore/servers';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** Starts DynamoDB Local once (or uses AGENTSTORE_DYNAMODB_ENDPOINT) and hands its endpoint to every test file. */
export default async function setup(project: TestProject) {
  const server = await launchDynamoDb();
  project.provide('dynamodbEndpoint', server.info.endpoint);
  return () => server.stop();
}
