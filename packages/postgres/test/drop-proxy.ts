import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Postgres that can lose the server's answer to the next request: the
 * statement reaches the server and runs to completion, but the client only sees its connection
 * drop — the "ack lost after commit" case an append must survive by re-reading.
 */
export interface DropProxy {
  url: string;
  /** The next request sent after this call gets no answer: both sockets are destroyed when it comes. */
  loseNextAnswer(): Promise<void>;
  close(): Promise<void>;
}

export async function startDropProxy(target: string): Promise<DropProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let armed: { resolve: () => void; victim: Socket | null } | null = null;

  const server = createServer((client) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    sockets.add(client).add(server);
    const destroy = () => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on('error', destroy).on('close', destroy);
    server.on('error', destroy).on('close', destroy);
    client.on('data', (chunk) => {
      if (armed && armed.victim === null) armed.victim = client;
      server.write(chunk);
    });
    server.on('data', (chunk) => {
      if (armed && armed.victim === client) {
        const { resolve } = armed;
        armed = null;
        destroy();
        resolve();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy did not bind');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);

  return {
    url: url.toString(),
    loseNextAnswer() {
      return new Promise<void>((resolve) => {
        armed = { resolve, victim: null };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
