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
    const { store, capabilities, roundTrips } = tableStore();
    const target = {
      name: 'full',
      createStore: () => store,
      capabilities,
      roundTrips,
      module: 'file:///t.ts',
      reopen: {},
    };
    expect([...offeredCapabilities(target)].sort()).toEqual([
      'corrupt',
      'durable',
      'floor',
      'process',
      'raw',
      'roundTrips',
    ]);
    expect(names(target)).toEqual(all.map((check) => check.name));
  });

  it('the process tier needs a module, `reopen`, and a backend several processes may share', () => {
    const { store, capabilities } = tableStore();
    const base = { name: 'p', createStore: () => store, capabilities };
    const tier = (target: ConformanceTarget) =>
      names(target).filter((name) => name.startsWith('process tier'));
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {} })).toHaveLength(3);
    expect(tier({ ...base, module: 'file:///t.ts' })).toEqual([]);
    expect(tier({ ...base, reopen: {} })).toEqual([]);
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {}, multiProcess: false })).toEqual([]);
    expect(tier({ ...base, module: 'file:///t.ts', reopen: {}, durable: false })).toEqual([]);
  });

  it('a target without capabilities gets neither raw, corrupt nor floor checks, but the crash matrix', () => {
    const registered = names({ name: 'bare', createStore: () => memoryStore() });
    expect(registered).not.toContain('the raw reader sees exactly what load returns');
    expect(registered.some((name) => name.startsWith('load of a session with an undecodable'))).toBe(false);
    // The counted perf gate needs only durability; the round-trip count needs a counter and a floor.
    expect(registered.filter((name) => name.startsWith('perf gate'))).toEqual([
      'perf gate: a tool step through run() costs exactly two commits; a run, one lease grant and one load',
      'perf gate: a step writes the same bytes and makes the same store calls after 400 stored messages as on a fresh session',
    ]);
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
    // Every perf gate check counts what run() asks of a durable store.
    expect(registered.some((name) => name.startsWith('perf gate'))).toBe(false);
  });

  it('the same name registers the same checks: no store is special-cased', () => {
    const bare = names({ name: 'postgres', createStore: () => memoryStore() });
    expect(names({ name: 'anything else', createStore: () => memoryStore() })).toEqual(bare);
  });
});
