/**
 * Open any installed adapter on a launched server, from any process.
 * @module @agentstore/conformance/backends
 */
export { importAdapterTesting } from './adapter-module.ts';
export {
  BACKEND_NAMES,
  type BackendHandle,
  type BackendName,
  isBackendName,
  type OpenBackend,
  type OpenBackendOptions,
  openBackend,
  reopenBackend,
} from './registry.ts';
