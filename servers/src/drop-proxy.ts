import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a database server that can lose the server's answer to the next
 * request: the request reaches the server and runs to completion, but the client only sees its
 * connection drop — the "ack lost after commit" case an append must survive by re-reading.
 */
export interface DropProxy {
  port: number;
  /** The next command sent after this call gets no answer; resolves when the drop happened. */
  loseNextAnswer(): Promise<void>;
  /**
   * The answer to the next command is passed on with `lastWords` behind it in the same write (a
   * server's goodbye, e.g. a FATAL error, read by the client in the same chunk as the answer),
   * then the connection is closed. Resolves when that happened.
   */
  endAfterNextAnswer(lastWords: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export async function startDropProxy(host: string, port: number): Promise<DropProxy> {
  const sockets = new Set<Socket>();
  let armed: { resolve: () => void; victim: Socket | null; lastWords: Uint8Array | null } | null = null;

  const proxy = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    const destroy = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', destroy).on('close', destroy);
    upstream.on('error', destroy).on('close', destroy);
    client.on('data', (chunk) => {
      if (armed && armed.victim === null) armed.victim = client;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (armed && armed.victim === client) {
        const { resolve, lastWords } = armed;
        armed = null;
        if (lastWords) {
          // Ended, not destroyed: the client must still read the answer and the last words.
          client.end(Buffer.concat([chunk, lastWords]));
          upstream.destroy();
        } else destroy();
        resolve();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy did not bind');

  return {
    port: address.port,
    loseNextAnswer() {
      return new Promise<void>((resolve) => {
        armed = { resolve, victim: null, lastWords: null };
      });
    },
    endAfterNextAnswer(lastWords) {
      return new Promise<void>((resolve) => {
        armed = { resolve, victim: null, lastWords };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
