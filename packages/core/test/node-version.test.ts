import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../src/node-version.ts';

describe('nodeVersionProblem', () => {
  it('accepts the engines floor and anything newer', () => {
    for (const version of ['22.12.0', '22.23.3', '23.0.0', '24.1.0', '100.0.0']) {
      expect(nodeVersionProblem('agentstore', version)).toBeNull();
    }
  });

  it('refuses older Nodes and says what to install', () => {
    for (const version of ['20.20.2', '22.11.9', '18.0.0', '21.99.0', 'garbage']) {
      const problem = nodeVersionProblem('agentstore-bench', version, '/usr/bin/node');
      expect(problem).toContain(
        `agentstore-bench needs Node.js >= 22.12, but this is Node.js ${version} (/usr/bin/node)`,
      );
      expect(problem).toContain('Install Node.js 22 LTS or newer');
    }
  });
});
