import { readFileSync, realpathSync } from 'node:fs';
import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';

/** The machine the figures came from: absolute times mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cpuCount: number;
  totalMemoryBytes: number;
  /** OS name and kernel release. */
  os: string;
  arch: string;
  node: string;
  /** 1, 5 and 15-minute load averages when the run started (other work on the machine skews times). */
  loadAverage: number[];
}

/** What changes during a run. */
export interface MachineSnapshot {
  at: string;
  loadAverage: number[];
}

/**
 * The file system a directory lives on, as /proc/mounts says. The directory itself is left out:
 * a throwaway server's data dir is a temp path that means nothing outside the run.
 */
export interface StorageInfo {
  mountPoint: string;
  fsType: string;
  device: string;
  options: string;
}

const loads = () => loadavg().map((load) => Math.round(load * 100) / 100);

export function machineInfo(): MachineInfo {
  const processors = cpus();
  return {
    cpuModel: processors[0]?.model.trim() || 'unknown',
    cpuCount: processors.length,
    totalMemoryBytes: totalmem(),
    os: `${type()} ${release()}`,
    arch: arch(),
    node: process.version,
    loadAverage: loads(),
  };
}

export const machineSnapshot = (): MachineSnapshot => ({
  at: new Date().toISOString(),
  loadAverage: loads(),
});

/** `\040` and friends in /proc/mounts fields. */
const unescapeMount = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/**
 * The mount holding `path` (the longest mount point that prefixes its real path), from
 * /proc/mounts; null where there is no /proc (not Linux) or the path does not exist here.
 */
export function storageOf(path: string): StorageInfo | null {
  let real: string;
  let mounts: string;
  try {
    real = realpathSync(path);
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return null;
  }
  let best: StorageInfo | null = null;
  for (const line of mounts.split('\n')) {
    const [device, mountPoint, fsType, options] = line.split(' ').map(unescapeMount);
    if (!device || !mountPoint || !fsType) continue;
    const inside =
      real === mountPoint || real.startsWith(mountPoint.endsWith('/') ? mountPoint : `${mountPoint}/`);
    if (inside && (!best || mountPoint.length >= best.mountPoint.length)) {
      best = { mountPoint, fsType, device, options: options ?? '' };
    }
  }
  return best;
}

/** One line: "Intel Xeon … × 2, 23.6 GiB RAM, Linux 6.1 x64, Node v22.23.3, load 0.42 at start". */
export function describeMachine(machine: MachineInfo, atEnd?: MachineSnapshot): string {
  const gib = (machine.totalMemoryBytes / 1024 ** 3).toFixed(1);
  const load =
    machine.loadAverage[0] !== undefined ? `, load ${machine.loadAverage[0].toFixed(2)} at start` : '';
  const end = atEnd?.loadAverage[0] !== undefined ? `, ${atEnd.loadAverage[0].toFixed(2)} at end` : '';
  return `${machine.cpuModel} × ${machine.cpuCount}, ${gib} GiB RAM, ${machine.os} ${machine.arch}, Node ${machine.node}${load}${end}`;
}
