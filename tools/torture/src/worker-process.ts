import { type ChildProcess, spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LINE_PREFIX, type WorkerConfig, type WorkerLine } from './protocol.ts';

/** A running worker process, seen from the parent. */
export interface Worker {
  pid: number;
  lines: WorkerLine[];
  /** When each line arrived (performance.now()), parallel to `lines`. */
  arrivals: number[];
  /** Resolves with the first `ready` line (or when the worker exits before it). */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Sends a signal to the worker's whole process group (its own children, e.g. workerd, too), or
   * with `onlyWorker` to the worker process alone (its database, even an emulated one, is remote).
   */
  signal(signal: NodeJS.Signals, onlyWorker?: boolean): boolean;
  /** A gated worker (`startWorker(…, { gated: true })`) starts its work when this is called. */
  go(): void;
  readonly alive: boolean;
  stderr(): string;
}

const live = new Set<ChildProcess>();
let cleanupInstalled = false;

/** A dying parent must not leave workers behind (they would hold leases and servers' connections). */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', () => {
    for (const child of live) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }
  });
}

function workerEntry(): { script: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  // From the TypeScript sources (this repository) or from the published dist.
  const fromSource = extname(here) === '.ts';
  const script = fileURLToPath(new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url));
  return { script, execArgv: fromSource ? ['--conditions=@agentstore/source'] : [] };
}

/** Starts a worker in its own process group, so a SIGKILL takes the whole "machine" down. */
export function startWorker(config: WorkerConfig, options: { cwd?: string; gated?: boolean } = {}): Worker {
  installCleanup();
  const { script, execArgv } = workerEntry();
  const child = spawn(process.execPath, [...execArgv, script, JSON.stringify(config)], {
    cwd: options.cwd ?? process.cwd(),
    detached: true,
    stdio: [options.gated ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  // A worker that died before reading stdin breaks the pipe; its exit is what the caller reports.
  child.stdin?.on('error', () => {});
  live.add(child);
  const lines: WorkerLine[] = [];
  const arrivals: number[] = [];
  let stderr = '';
  let buffered = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.startsWith(LINE_PREFIX)) {
        const parsed = JSON.parse(line.slice(LINE_PREFIX.length)) as WorkerLine;
        lines.push(parsed);
        arrivals.push(performance.now());
        if (parsed.t === 'ready') markReady();
      }
      newline = buffered.indexOf('\n');
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  let alive = true;
  // 'close' (not 'exit'): every line the worker wrote has been read by then.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      alive = false;
      live.delete(child);
      markReady();
      resolve({ code, signal });
    });
  });
  return {
    pid: child.pid!,
    lines,
    arrivals,
    ready,
    exited,
    signal(signal, onlyWorker = false) {
      if (!alive) return false;
      try {
        process.kill(onlyWorker ? child.pid! : -child.pid!, signal);
        return true;
      } catch {
        return false;
      }
    },
    go() {
      child.stdin?.end('go\n');
    },
    get alive() {
      return alive;
    },
    stderr: () => stderr,
  };
}
