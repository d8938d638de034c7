import type { StorageAdapter } from "../agent_memory.js";
/** A storage adapter on Deno KV (`await Deno.openKv()`); the library's keys live under `prefix`. */
export function denoKvAdapter(kv: unknown, prefix?: unknown[]): StorageAdapter;
