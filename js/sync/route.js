// The Worker's route in front of the sync relay's Durable Objects (exported
// by durable-object.js): apart from the object's class, it imports nothing of
// workerd's, so it also runs outside it (its checks are tested in Node).
import { error } from "../guard.js";

// What a browser app on another origin may send: the frame's content type
// and the token. A preflight's answer is cached this long (seconds).
const ALLOW_HEADERS = "authorization, content-type";
const PREFLIGHT_MAX_AGE = "86400";

/**
 * The Worker's sync route: `authorize(request, env)` resolves to the user id
 * whose relay the request may reach, or to nothing (401, and no object or
 * storage is touched); the request then goes to that user's object. With
 * `cors: { origins }`, pages on those origins (a list, or a check
 * `(origin, env) => boolean`) may sync from the browser; a request from any
 * other origin is a 403 before `authorize` runs.
 */
export function syncRelayRoute(options) {
  const { binding, authorize, cors, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw error("INVALID_INPUT", `syncRelayRoute: unknown option ${unknown.join(", ")}`);
  if (typeof binding !== "string" || !binding) throw error("INVALID_INPUT", "syncRelayRoute needs { binding }: the Durable Object binding's name");
  if (typeof authorize !== "function") throw error("INVALID_INPUT", "syncRelayRoute needs { authorize: (request, env) => userId | null }");
  const allowed = originCheck(cors);
  const route = async (request, env) => {
    const user = await authorize(request, env);
    if (user === undefined || user === null || user === false) {
      return Response.json({ error: "not authorized to sync" }, { status: 401 });
    }
    if (typeof user !== "string" || !user) throw error("INVALID_INPUT", "authorize must resolve to a user id (a non-empty string) or nothing");
    const relays = env[binding];
    if (!relays) throw error("INVALID_INPUT", `no Durable Object binding ${binding} in this Worker's env`);
    return relays.get(relays.idFromName(user)).fetch(request);
  };
  if (!allowed) return route;
  return async (request, env) => {
    const origin = request.headers.get("origin");
    // A page of the relay's own origin, and a device that is no page (no
    // Origin), are no cross-origin requests.
    if (origin === null || origin === new URL(request.url).origin) return route(request, env);
    if (!(await allowed(origin, env))) {
      return Response.json({ error: `origin ${origin} may not sync here` }, { status: 403, headers: { vary: "origin" } });
    }
    const headers = { "access-control-allow-origin": origin, vary: "origin" };
    if (request.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: { ...headers, "access-control-allow-methods": "POST", "access-control-allow-headers": ALLOW_HEADERS, "access-control-max-age": PREFLIGHT_MAX_AGE },
      });
    }
    // The object's answer, a 401 or an error alike: the page can read why.
    const answer = await route(request, env);
    const out = new Response(answer.body, answer);
    for (const [k, v] of Object.entries(headers)) out.headers.set(k, v);
    return out;
  };
}

/** `cors` as a check `(origin, env) => Promise<boolean>`, or nothing when the option is absent. */
function originCheck(cors) {
  if (cors === undefined) return undefined;
  const { origins, ...rest } = cors ?? {};
  const unknown = Object.keys(rest);
  if (cors === null || typeof cors !== "object" || unknown.length) {
    throw error("INVALID_INPUT", `syncRelayRoute: cors is { origins }${unknown.length ? `, not ${unknown.join(", ")}` : ""}`);
  }
  if (typeof origins === "function") return async (origin, env) => (await origins(origin, env)) === true;
  if (Array.isArray(origins) && origins.every((o) => typeof o === "string" && o === safeOrigin(o))) {
    const set = new Set(origins);
    return async (origin) => set.has(origin);
  }
  throw error("INVALID_INPUT", "syncRelayRoute: cors.origins is a list of origins (scheme://host[:port]) or a function (origin, env) => boolean");
}

/** `o` as the origin a browser sends (no path, no trailing slash), or null. */
function safeOrigin(o) {
  try {
    return new URL(o).origin;
  } catch {
    return null;
  }
}
