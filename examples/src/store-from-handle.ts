// A store module for the `agentstore` CLI: the test target described by AGENTSTORE_BACKEND_HANDLE,
// JSON `{ module, options }` — a target module and its `reopen` options (`OpenTestTarget.module`,
// `.reopen` from an adapter's `./testing` entry), as the conformance kit's child processes use them.

import { openToolTarget } from '@agentstore/conformance';
import type { AgentStore } from '@agentstore/core';

export default async function store(): Promise<AgentStore> {
  const handle = process.env.AGENTSTORE_BACKEND_HANDLE;
  if (!handle)
    throw new Error('set AGENTSTORE_BACKEND_HANDLE to the JSON { module, options } of an open test target');
  const { module, options } = JSON.parse(handle) as { module: string; options?: Record<string, string> };
  const target = await openToolTarget(module, options);
  const opened = await target.createStore();
  return {
    ...opened,
    async close() {
      await opened.close();
      await target.close();
    },
  };
}
