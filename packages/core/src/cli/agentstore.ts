#!/usr/bin/env node
// The bin: checks the Node version before loading anything that may fail on an older one.
import { requireNode } from '../node-version.ts';

requireNode('agentstore');
await import('./agentstore-main.ts');
