// The Worker's route in front of the sync relay's Durable Objects (exported
// by durable-object.js): apart from the object's class, it imports nothing of
// workerd's, so it also runs outside it (its checks are tested in Node).
import { error } from "../guard.js";

/**
 * The Worker's sync route: `authorize(request, env)` resolves to the user id
 * whose relay the request may reach, or to nothing (401, and no object or
 * storage is touched); the request then goes to that user's object.
 */
export function syncRelayRoute(options) {
  const { binding, authorize, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw error("INVALID_INPUT", `syncRelayRoute: unknown option ${unknown.join(", ")}`);
  if (typeof binding !== "string" || !binding) throw error("INVALID_INPUT", "syncRelayRoute needs { binding }: the Durable Object binding's name");
  if (typeof authorize !== "function") throw error("INVALID_INPUT", "syncRelayRoute needs { authorize: (request, env) => userId | null }");
  return async (request, env) => {
    const user = await authorize(request, env);
    if (user === undefined || user === null || user === false) {
      return Response.json({ error: "not authorized to sync" }, { status: 401 });
    }
    if (typeof user !== "string" || !user) throw error("INVALID_INPUT", "authorize must resolve to a user id (a non-empty string) or nothing");
    const relays = env[binding];
    if (!relays) throw error("INVALID_INPUT", `no Durable Object binding ${binding} in this Worker's env`);
    return relays.get(relays.idFromName(user)).fetch(request);
  };
}
