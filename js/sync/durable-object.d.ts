/**
 * A Durable Object (one per user) holding that user's devices' operations and
 * answering their syncs: `POST` with a frame as the body, the answer frame back.
 */
export class SyncRelayObject {
  constructor(ctx: unknown, env: unknown);
  fetch(request: Request): Promise<Response>;
}
export interface SyncRelayRouteOptions<Env> {
  /** The name of the Durable Object binding of `SyncRelayObject` in `env`. */
  binding: string;
  /** The user whose relay this request may reach, or nothing: 401, and no object is touched. */
  authorize(request: Request, env: Env): Promise<string | null | undefined | false> | string | null | undefined | false;
}
/** The Worker's sync route: the host's check, then that user's object. */
export function syncRelayRoute<Env = Record<string, unknown>>(options: SyncRelayRouteOptions<Env>): (request: Request, env: Env) => Promise<Response>;
