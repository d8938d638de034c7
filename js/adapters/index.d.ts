import type { StorageAdapter } from "../agent_memory.js";

/** Deno KV (`await Deno.openKv()`); the library's keys live under `prefix`. */
export function denoKvAdapter(kv: unknown, prefix?: unknown[]): StorageAdapter;
/** Durable Object storage (`this.ctx.storage`). */
export function durableObjectAdapter(storage: unknown): StorageAdapter;
/** A Map (tests, caches). */
export function mapAdapter(map?: Map<string, string>): StorageAdapter & { map: Map<string, string> };
