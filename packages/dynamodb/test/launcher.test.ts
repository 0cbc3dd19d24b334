import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchDynamoDb, MissingServerBinaryError } from '@agentstore/servers';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, expect, it } from 'vitest';
import { createTable } from '../src/index.ts';

const saved = { path: process.env.PATH, endpoint: process.env.AGENTSTORE_DYNAMODB_ENDPOINT };
afterEach(() => {
  process.env.PATH = saved.path;
  if (saved.endpoint === undefined) delete process.env.AGENTSTORE_DYNAMODB_ENDPOINT;
  else process.env.AGENTSTORE_DYNAMODB_ENDPOINT = saved.endpoint;
});

it('uses AGENTSTORE_DYNAMODB_ENDPOINT as given and never stops it', async () => {
  process.env.AGENTSTORE_DYNAMODB_ENDPOINT = 'http://127.0.0.1:1';
  const server = await launchDynamoDb();
  expect(server).toMatchObject({ info: { endpoint: 'http://127.0.0.1:1' }, owned: false });
  await server.stop();
});

it('names the package to install when java is missing', async () => {
  delete process.env.AGENTSTORE_DYNAMODB_ENDPOINT;
  const bin = mkdtempSync(join(tmpdir(), 'agentstore-nojava-'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  process.env.PATH = bin;
  try {
    const error = await launchDynamoDb().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingServerBinaryError);
    expect((error as Error).message).toMatch(/apt-get install -y openjdk-17-jre-headless/);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

// With an external endpoint configured the launcher starts nothing, so there is nothing to check.
it.skipIf(saved.endpoint)(
  'starts a file-backed DynamoDB Local in a temp dir and removes the dir on stop',
  async () => {
    const server = await launchDynamoDb({ persist: true });
    expect(server.owned).toBe(true);
    const dir = server.info.dataDir!;
    expect(dir.startsWith(tmpdir())).toBe(true);
    const client = new DynamoDBClient({
      endpoint: server.info.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'a' },
    });
    try {
      await createTable(client, 'persisted');
      // -sharedDb: other credentials and regions see the same tables.
      const other = new DynamoDBClient({
        endpoint: server.info.endpoint,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'b', secretAccessKey: 'b' },
      });
      expect((await other.send(new ListTablesCommand({}))).TableNames).toEqual(['persisted']);
      expect(existsSync(join(dir, 'shared-local-instance.db'))).toBe(true);
      other.destroy();
    } finally {
      client.destroy();
      await server.stop();
    }
    expect(existsSync(dir)).toBe(false);
  },
);
