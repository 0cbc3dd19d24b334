import { arch, cpus, release, totalmem, type } from 'node:os';

/** The machine the figures came from: absolute times mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cpuCount: number;
  totalMemoryBytes: number;
  os: string;
  arch: string;
  node: string;
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
  };
}

/** One line: "Intel Xeon … × 2, 23.6 GiB, Linux 6.1 x64, Node v22.23.3". */
export function describeMachine(machine: MachineInfo): string {
  const gib = (machine.totalMemoryBytes / 1024 ** 3).toFixed(1);
  return `${machine.cpuModel} × ${machine.cpuCount}, ${gib} GiB RAM, ${machine.os} ${machine.arch}, Node ${machine.node}`;
}
