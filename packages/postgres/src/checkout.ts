import type { Pool, PoolClient } from 'pg';

/** A client checked out of the pool, and how to give it back. */
export interface CheckedOut {
  client: PoolClient;
  /** Returns the client to the pool, or destroys it when given an error or when its connection reported one. */
  release(failure?: unknown): void;
}

/**
 * A client of our own, heard from the moment the pool hands it over. pg-pool drops its idle
 * 'error' listener at the hand-off, and a FATAL read in the same socket chunk as the reply that
 * freed the client (a terminated backend) is emitted right then, before an `await pool.connect()`
 * would resume; unheard, it is an uncaught exception that kills the process. So the listener is
 * attached inside the connect callback, as `pool.query()` does, and kept until the release.
 */
export function checkout(pool: Pool): Promise<CheckedOut> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client, done) => {
      if (error || !client) {
        reject(error ?? new Error('the pool handed over no client'));
        return;
      }
      let broken: Error | undefined;
      const onError = (dropped: Error) => {
        broken ??= dropped;
      };
      client.on('error', onError);
      resolve({
        client,
        release(failure) {
          client.removeListener('error', onError);
          done((failure as Error | undefined) ?? broken);
        },
      });
    });
  });
}
