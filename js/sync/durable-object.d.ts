/**
 * A Durable Object (one per user) holding that user's devices' operations and
 * answering their syncs: `POST` with a frame as the body, the answer frame back.
 * It drops tombstones older than the Worker's `SYNC_HORIZON_MS` variable
 * (milliseconds; `off` keeps them for good; unset or empty, 90 days).
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
  /**
   * Pages on these origins may sync from the browser: a list of origins
   * (`"https://app.example.com"`), or a check run on each cross-origin
   * request. Preflights are answered; a request from any other origin is a
   * 403 before `authorize` runs. Without it, no CORS headers are sent.
   */
  cors?: { origins: string[] | ((origin: string, env: Env) => boolean | Promise<boolean>) };
}
/** The Worker's sync route: the host's check, then that user's object. */
export function syncRelayRoute<Env = Record<string, unknown>>(options: SyncRelayRouteOptions<Env>): (request: Request, env: Env) => Promise<Response>;
