import type { StorageAdapter } from "../agent_memory.js";

/** A `pg.Pool` (npm `pg` 8.x), as far as the adapter uses it. */
export interface PgPoolLike {
  query(text: string, values?: unknown[]): Promise<unknown>;
  connect(): Promise<unknown>;
  readonly totalCount: number;
}

export interface PostgresAdapterOptions {
  /** The table holding the keys (`name` or `schema.name`), made if missing. Default `"agent_memory"`. */
  table?: string;
}

/**
 * A storage adapter on PostgreSQL through npm `pg` 8.x (`npm install pg`). Pass a `pg.Pool`
 * (yours: `close()` leaves it open), or a pool config object / connection string (the adapter
 * makes the pool and `close()` ends it); not a `pg.Client`.
 *
 * The table (`k text COLLATE "C" PRIMARY KEY, v text NOT NULL`) is made on first use, safely
 * when several processes start at once. `list` reads a key range in bytewise order.
 * `putManyIf` is one transaction: the check key's row locked (`SELECT ... FOR UPDATE`), or,
 * when it must be absent, inserted first (`INSERT ... ON CONFLICT DO NOTHING`), so two writers
 * expecting the same absent key never both win. Throws an `AgentMemoryError` "STORAGE" if `pg`
 * is missing or a query fails, "INVALID_INPUT" for a bad argument.
 */
export function postgresAdapter(
  poolOrConfig: PgPoolLike | Record<string, unknown> | string,
  options?: PostgresAdapterOptions,
): StorageAdapter & { readonly pool: PgPoolLike; close(): Promise<void> };
