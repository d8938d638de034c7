import type { StorageAdapter } from "../agent_memory.js";
/** A storage adapter on a Map (tests, caches). */
export function mapAdapter(map?: Map<string, string>): StorageAdapter & { map: Map<string, string> };
