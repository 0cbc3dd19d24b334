import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { startDropProxy } from '../src/index.ts';

let upstream: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

/** An upstream that counts the requests it ran and answers each with `ok <n>`. */
async function countingServer(): Promise<{ port: number; ran: () => number }> {
  let ran = 0;
  upstream = createServer((socket) => {
    socket.on('data', () => {
      ran += 1;
      socket.write(`ok ${ran}`);
    });
  });
  await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
  const address = upstream.address();
  if (typeof address !== 'object' || address === null) throw new Error('upstream did not bind');
  return { port: address.port, ran: () => ran };
}

function request(socket: Socket, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk) => resolve(chunk.toString()));
    socket.once('close', () => reject(new Error('connection closed')));
    socket.write(body);
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

it('passes answers through, then loses exactly the next one after the server ran the request', async () => {
  const server = await countingServer();
  const proxy = await startDropProxy('127.0.0.1', server.port);
  try {
    const first = await open(proxy.port);
    expect(await request(first, 'a')).toBe('ok 1');

    const dropped = proxy.loseNextAnswer();
    await expect(request(first, 'b')).rejects.toThrow('connection closed');
    await dropped;
    // The request reached the server and ran: only its answer was lost.
    expect(server.ran()).toBe(2);

    const second = await open(proxy.port);
    expect(await request(second, 'c')).toBe('ok 3');
    second.destroy();
  } finally {
    await proxy.close();
  }
});

it('passes the next answer on with the last words behind it in one chunk, then closes', async () => {
  const server = await countingServer();
  const proxy = await startDropProxy('127.0.0.1', server.port);
  try {
    const socket = await open(proxy.port);
    const chunks: string[] = [];
    socket.on('data', (chunk) => chunks.push(chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const ended = proxy.endAfterNextAnswer(Buffer.from(' bye'));
    socket.write('a');
    await ended;
    await closed;
    expect(chunks).toEqual(['ok 1 bye']);
    expect(server.ran()).toBe(1);
  } finally {
    await proxy.close();
  }
});
