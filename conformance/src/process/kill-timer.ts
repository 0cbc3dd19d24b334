// A thread beside the child's event loop that SIGKILLs the process at a precise moment, measured
// on the monotonic clock: a timer on the event loop could not land inside a request that takes
// a fraction of a millisecond, nor inside code that never yields.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const at = new BigInt64Array(workerData);
parentPort.postMessage('ready');
Atomics.wait(new Int32Array(workerData, 8, 1), 0, 0);
const deadline = Atomics.load(at, 0);
while (process.hrtime.bigint() < deadline) {}
process.kill(process.pid, 'SIGKILL');
`;

/** Starts a kill thread and waits until it waits; `fireIn(ns)` sets the moment, measured from the call. */
export async function killTimer(): Promise<{ fireIn(nanoseconds: bigint): void }> {
  const shared = new SharedArrayBuffer(16);
  const worker = new Worker(THREAD, { eval: true, workerData: shared });
  await once(worker, 'message');
  worker.unref();
  return {
    fireIn(nanoseconds) {
      Atomics.store(new BigInt64Array(shared), 0, process.hrtime.bigint() + nanoseconds);
      Atomics.store(new Int32Array(shared, 8, 1), 0, 1);
      Atomics.notify(new Int32Array(shared, 8, 1), 0);
    },
  };
}
