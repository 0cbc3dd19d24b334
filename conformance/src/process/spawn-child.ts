// Node's modules are fetched when a child is started (`process.getBuiltinModule`), never
// imported: the kit's entry also runs inside a Worker (the D1 package runs the specs in workerd),
// whose bundler and runtime reject any import of `node:child_process`, even a lazy one.
const builtin = <Name extends 'node:child_process' | 'node:url'>(name: Name) =>
  process.getBuiltinModule(name) as Name extends 'node:url'
    ? typeof import('node:url')
    : typeof import('node:child_process');

import { CHILD_LINE_PREFIX, type ChildConfig, type ChildLine } from './protocol.ts';

export interface ChildRun {
  lines: ChildLine[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** The child entry, from the TypeScript sources (this repository) or from the published dist. */
async function childEntry(): Promise<{ script: string; execArgv: string[] }> {
  const { fileURLToPath } = builtin('node:url');
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const script = fileURLToPath(new URL(fromSource ? './child.ts' : './child.js', import.meta.url));
  return { script, execArgv: fromSource ? ['--conditions=@agentstore/source'] : [] };
}

/**
 * Runs one child to its end. `killAfterMs` (measured from its `ready` line) SIGKILLs it from here,
 * for kills inside code that never yields a turn; `timeoutMs` is the backstop for a hung child.
 */
export async function runChild(
  config: ChildConfig,
  options: {
    killAfterMs?: number;
    timeoutMs?: number;
    /** Race mode: called on the child's `ready` line; `go` is written to its stdin once `gate` resolves. */
    onReady?: () => void;
    gate?: Promise<void>;
  } = {},
): Promise<ChildRun> {
  const { spawn } = builtin('node:child_process');
  const { script, execArgv } = await childEntry();
  const child = spawn(process.execPath, [...execArgv, script, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // A child that died before reading stdin breaks the pipe; its exit is what the caller reports.
  child.stdin.on('error', () => {});
  if (!options.gate) child.stdin.end();
  const lines: ChildLine[] = [];
  let stderr = '';
  let buffered = '';
  let killTimer: NodeJS.Timeout | undefined;
  const backstop = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.startsWith(CHILD_LINE_PREFIX)) continue;
      const parsed = JSON.parse(line.slice(CHILD_LINE_PREFIX.length)) as ChildLine;
      lines.push(parsed);
      if (parsed.t === 'ready' && options.killAfterMs !== undefined)
        killTimer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
      if (parsed.t === 'ready' && options.gate) {
        options.onReady?.();
        void options.gate.then(() => child.stdin.end('go\n'));
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    // 'close', not 'exit': every line the child wrote has been read by then.
    child.once('close', (code, signal) => {
      clearTimeout(backstop);
      clearTimeout(killTimer);
      resolve({ lines, code, signal, stderr });
    });
  });
}
