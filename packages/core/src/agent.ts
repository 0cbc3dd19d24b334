import { InvalidArgumentError } from './errors.ts';
import type { AnyTool } from './tool.ts';

export interface AgentDefinition {
  name: string;
  instructions: string;
  tools: Record<string, AnyTool>;
  /** Model calls per run before `run()` stops with `status: 'max-iterations'`. */
  maxIterations: number;
}

export interface AgentConfig {
  name: string;
  instructions: string;
  tools?: Record<string, AnyTool>;
  maxIterations?: number;
}

export function defineAgent(config: AgentConfig): AgentDefinition {
  if (typeof config.name !== 'string' || config.name.length === 0) {
    throw new InvalidArgumentError({ argument: 'agent.name', reason: 'must be a non-empty string' });
  }
  const maxIterations = config.maxIterations ?? 10;
  if (!Number.isSafeInteger(maxIterations) || maxIterations < 1) {
    throw new InvalidArgumentError({ argument: 'agent.maxIterations', reason: 'must be a positive integer' });
  }
  return { name: config.name, instructions: config.instructions, tools: config.tools ?? {}, maxIterations };
}
