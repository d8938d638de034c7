import type { StorageAdapter } from "../agent_memory.js";
/** A storage adapter on Durable Object storage (`this.ctx.storage`). */
export function durableObjectAdapter(storage: unknown): StorageAdapter;
