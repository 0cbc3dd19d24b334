import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';

/** The machine the figures came from: absolute times mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cpuCount: number;
  totalMemoryBytes: number;
  os: string;
  arch: string;
  node: string;
  /** 1, 5 and 15-minute load averages when the run started (other work on the machine skews times). */
  loadAverage: number[];
}

export function machineInfo(): MachineInfo {
  const processors = cpus();
  return {
    cpuModel: processors[0]?.model.trim() || 'unknown',
    cpuCount: processors.length,
    totalMemoryBytes: totalmem(),
    os: `${type()} ${release()}`,
    arch: arch(),
    node: process.version,
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

/** One line: "Intel Xeon … × 2, 23.6 GiB RAM, Linux 6.1 x64, Node v22.23.3, load 0.42 at start". */
export function describeMachine(machine: MachineInfo): string {
  const gib = (machine.totalMemoryBytes / 1024 ** 3).toFixed(1);
  const load =
    machine.loadAverage[0] !== undefined ? `, load ${machine.loadAverage[0].toFixed(2)} at start` : '';
  return `${machine.cpuModel} × ${machine.cpuCount}, ${gib} GiB RAM, ${machine.os} ${machine.arch}, Node ${machine.node}${load}`;
}
