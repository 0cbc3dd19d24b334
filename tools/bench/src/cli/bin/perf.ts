#!/usr/bin/env node
// The bin: checks the Node version before loading anything that fails on an older one.
import { requireNode } from '@agentstore/core/node-version';

requireNode('agentstore-perf');
await import('../perf.ts');
