// A sync relay on Cloudflare: a Durable Object class (one object per user)
// that keeps the user's devices' operations in its storage and answers their
// reconciliation requests, and the Worker's route in front of it, which runs
// the host's authentication check before any object is reached.
//
//   import { SyncRelayObject, syncRelayRoute } from "agent-memory/sync/durable-object";
//   export { SyncRelayObject };
//   const sync = syncRelayRoute({ binding: "SYNC_RELAY", authorize: (request, env) => userOf(request, env) });
//   export default { fetch: (request, env) => sync(request, env) };
//
// The protocol is the core's (SyncRelay.exchange): this file only moves a
// request's bytes to it and its answer back. With `encryption` on the
// devices, what the object stores is ids, stamps and ciphertext.
import { DurableObject } from "cloudflare:workers";
// The workerd entry instantiates the wasm on import (the same module as the
// app's own `import "agent-memory"` there, so one instance).
import { SyncRelay } from "../workerd.js";
import { durableObjectAdapter } from "../adapters/durable-object.js";
import { boundedBody } from "./body.js";

// One object holds one user's operations: the namespace only names its keys.
const NAMESPACE = "sync";

// Library errors a request can cause, as HTTP statuses; the rest (storage
// failing) are the relay's own: 500.
const STATUS = { INVALID_INPUT: 400, LIMIT_EXCEEDED: 413 };

export class SyncRelayObject extends DurableObject {
  /**
   * This object's relay, opened once (a failed open is retried on the next request). Its tombstone
   * horizon is the Worker's `SYNC_HORIZON_MS` variable: milliseconds, or `off` to keep tombstones for
   * good; unset or empty, the library's default (90 days).
   */
  relay() {
    const horizon = String(this.env?.SYNC_HORIZON_MS ?? "").trim();
    const horizonMs = horizon === "" ? undefined : horizon === "off" ? null : Number(horizon);
    this.opened ??= SyncRelay.open({ store: durableObjectAdapter(this.ctx.storage), namespace: NAMESPACE, horizonMs }).catch((err) => {
      this.opened = undefined;
      throw err;
    });
    return this.opened;
  }

  /** `POST` with a sync frame as the body: the answer frame. */
  async fetch(request) {
    if (request.method !== "POST") {
      return Response.json({ error: "a sync request is a POST of a frame", code: "INVALID_INPUT" }, { status: 405, headers: { allow: "POST" } });
    }
    const limit = SyncRelay.maxRequestBytes();
    const body = await boundedBody(request, limit);
    if (!body) {
      return Response.json({ error: `a sync request past ${limit} bytes`, code: "LIMIT_EXCEEDED" }, { status: STATUS.LIMIT_EXCEEDED });
    }
    try {
      const answer = await (await this.relay()).exchange(body);
      return new Response(answer, { headers: { "content-type": "application/octet-stream" } });
    } catch (err) {
      return Response.json({ error: err.message, code: err.code }, { status: STATUS[err.code] ?? 500 });
    }
  }
}

export { syncRelayRoute } from "./route.js";
