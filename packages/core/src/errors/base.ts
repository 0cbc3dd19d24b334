/** Base of every error agentstore throws on purpose. `code` is a literal per class. */
export abstract class AgentStoreError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
