// A device's transport to a sync relay over HTTP: the function
// `memory.sync(transport)` takes, posting each frame to `url` with the
// host's `fetch` (default: the global one) and headers (an object, or a
// function called before each request, for a token that expires). It makes
// no request but those the sync asks for.
//
//   import { httpTransport } from "agent-memory/sync/http";
//   await memory.sync(httpTransport("/sync", { headers: () => ({ authorization: `Bearer ${token()}` }) }));
import { error } from "../guard.js";

export function httpTransport(url, options) {
  const { headers, fetch: fetchFn, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw error("INVALID_INPUT", `httpTransport: unknown option ${unknown.join(", ")}`);
  if (!(typeof url === "string" || url instanceof URL)) throw error("INVALID_INPUT", "httpTransport needs the relay's URL");
  if (fetchFn !== undefined && typeof fetchFn !== "function") throw error("INVALID_INPUT", "httpTransport: fetch must be a function");
  if (headers !== undefined && (headers === null || !["object", "function"].includes(typeof headers))) {
    throw error("INVALID_INPUT", "httpTransport: headers must be an object or a function returning one");
  }
  return async (request) => {
    const extra = typeof headers === "function" ? await headers() : headers;
    const res = await (fetchFn ?? globalThis.fetch)(url, {
      method: "POST",
      headers: { ...Object.fromEntries(new Headers(extra ?? {})), "content-type": "application/octet-stream" },
      body: request,
    });
    // The relay's error body says why (its code and message); the sync
    // reports it as a SYNC_TRANSPORT error.
    if (!res.ok) throw new Error(`the relay answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    return new Uint8Array(await res.arrayBuffer());
  };
}
