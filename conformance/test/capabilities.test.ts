import { memoryStore } from '@agentstore/core';
import { describe, expect, it } from 'vitest';
import {
  applicableChecks,
  type ConformanceTarget,
  conformanceSpecs,
  offeredCapabilities,
} from '../src/index.ts';
import { tableStore } from './support/table-store.ts';

const all = conformanceSpecs.flatMap((spec) => spec.checks);
const names = (target: ConformanceTarget) => applicableChecks(target, all).map((check) => check.name);

describe('checks are chosen by declared capabilities, never by name', () => {
  it('a durable target with every capability, reopenable from another process, gets every check', () => {
    const { store, capabilities } = tableStore();
    const target = {
      name: 'full',
      createStore: () => store,
      capabilities,
      module: 'file:///t.ts',
      reopen: {},
    };
    expect([...offeredCapabilities(target)].sort()).toEqual([
      'corrupt',
      'durable',
      'floor',
      'process',
      'raw',
    ]);
    expect(names(target)).toEqual(all.map((check) => check.name));
  });

  it('the process tier needs a module, `reopen`, and a backend several processes may share', () => {
    const { store, capabilities } = tableStore();
    const base = { name: 'p', createStore: () => store, capabilities };
    const tier = (target: ConformanceTarget) =>
      names(target).filter((name) => name.startsWith('process tier'));
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {} })).toHaveLength(2);
    expect(tier({ ...base, module: 'file:///t.ts' })).toEqual([]);
    expect(tier({ ...base, reopen: {} })).toEqual([]);
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {}, multiProcess: false })).toEqual([]);
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {}, durable: false })).toEqual([]);
  });

  it('a target without capabilities gets neither raw, corrupt nor floor checks, but the crash matrix', () => {
    const registered = names({ name: 'bare', createStore: () => memoryStore() });
    expect(registered).not.toContain('the raw reader sees exactly what load returns');
    expect(registered.some((name) => name.startsWith('load of a session with an undecodable'))).toBe(false);
    expect(registered.some((name) => name.startsWith('perf gate'))).toBe(false);
    expect(registered.filter((name) => name.startsWith('crash matrix'))).toHaveLength(4);
  });

  it('a non-durable target does not get the checks that run() a durable session', () => {
    const { capabilities } = tableStore();
    const registered = names({
      name: 'memory',
      createStore: () => memoryStore(),
      durable: false,
      capabilities,
    });
    expect(registered.some((name) => name.startsWith('crash matrix'))).toBe(false);
    expect(registered).toContain(
      'perf gate: store.append of 3 × 300-byte messages stays within maxFloorRatio of the raw floor',
    );
    expect(registered).not.toContain(
      'perf gate: a 10-step run() stays within maxFloorRatio of 20 raw floor appends',
    );
  });

  it('the same name registers the same checks: no store is special-cased', () => {
    const bare = names({ name: 'postgres', createStore: () => memoryStore() });
    expect(names({ name: 'anything else', createStore: () => memoryStore() })).toEqual(bare);
  });
});
