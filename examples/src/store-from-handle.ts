// A store module for the `agentstore` CLI: the test backend described by AGENTSTORE_BACKEND_HANDLE
// (JSON of an `OpenBackend.handle` from @agentstore/conformance/backends).

import { reopenBackend } from '@agentstore/conformance/backends';
import type { AgentStore } from '@agentstore/core';

export default async function store(): Promise<AgentStore> {
  const handle = process.env.AGENTSTORE_BACKEND_HANDLE;
  if (!handle) throw new Error('set AGENTSTORE_BACKEND_HANDLE to the JSON handle of an open test backend');
  const target = await reopenBackend(JSON.parse(handle));
  const opened = await target.createStore();
  return {
    ...opened,
    async close() {
      await opened.close();
      await target.close();
    },
  };
}
