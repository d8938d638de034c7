// A chat backend on Cloudflare Workers with memory: one Durable Object per
// user id, holding that user's conversation and long-term memories in its
// storage. Routes (the user id is the first path segment):
//
//   POST /:user/add         { "content": "...", "role": "user" | "assistant" }
//   POST /:user/context     { "query": "the new message", "system": "..." }
//                           → the messages to send to the model, within budget
//   GET  /:user/search?q=…  → long-term memories and past turns that match
//   POST /:user/endSession  → consolidates the session into long-term memory
//   POST /sync              a sync frame → the answer frame: the relay through
//                           which a user's devices sync their memories
//                           (`authorization: Bearer <user>.<token>`)
//
// The package needs no init in Workers; the tokenizer pack is a Data module.
import { DurableObject } from "cloudflare:workers";
import { loadTokenizer, Memory } from "agent-memory";
import { durableObjectAdapter } from "agent-memory/adapters/durable-object";
import { SyncRelayObject, syncRelayRoute } from "agent-memory/sync/durable-object";
import o200k from "agent-memory/packs/o200k.amtk";

// The relay's Durable Object class, bound as SYNC_RELAY in wrangler.toml.
export { SyncRelayObject };

// One exact tokenizer per isolate, shared by its Durable Objects.
let tokenizer;
const o200kTokenizer = async () => (tokenizer ??= await loadTokenizer(new Uint8Array(o200k)));

export class UserMemory extends DurableObject {
  /** This user's memory, opened once per object (a failed open is retried on the next request). */
  memory(user) {
    this.opened ??= this.open(user).catch((err) => {
      this.opened = undefined;
      throw err;
    });
    return this.opened;
  }

  async open(user) {
    const { LLM_ENDPOINT, LLM_MODEL, LLM_API_KEY } = this.env;
    const memory = await Memory.open({
      namespace: user,
      sessionId: "chat",
      store: durableObjectAdapter(this.ctx.storage),
      llm: LLM_ENDPOINT ? { endpoint: LLM_ENDPOINT, model: LLM_MODEL, headers: { authorization: `Bearer ${LLM_API_KEY ?? ""}` } } : undefined,
    });
    memory.setTokenizer(await o200kTokenizer());
    return memory;
  }

  async fetch(request) {
    const url = new URL(request.url);
    const [, user, action] = url.pathname.split("/");
    const memory = await this.memory(user);
    const body = request.method === "POST" ? await request.json().catch(() => ({})) : {};
    let out;
    if (action === "add") out = await memory.add({ role: body.role ?? "user", content: body.content });
    else if (action === "context") out = await memory.buildContext(body);
    else if (action === "search") out = (await memory.search(url.searchParams.get("q") ?? "")).map(({ text, score, source }) => ({ text, score, source }));
    else if (action === "endSession") out = await memory.endSession();
    else return Response.json({ error: "not found" }, { status: 404 });
    // Background work (embedding, compression) finishes before the reply, so
    // an evicted object owes nothing.
    await memory.idle();
    return Response.json(out);
  }
}

/**
 * The user a sync request is from, or nothing (401). Here a token is the hex
 * HMAC-SHA256 of the user id under the SYNC_SECRET secret, as the app's
 * sign-in would issue it; put your own session check in its place.
 */
async function authorize(request, env) {
  const [, user, token] = /^Bearer ([^.\s]+)\.([0-9a-f]{64})$/.exec(request.headers.get("authorization") ?? "") ?? [];
  if (!user || !env.SYNC_SECRET) return null;
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(env.SYNC_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const mac = new Uint8Array(token.match(/../g).map((h) => parseInt(h, 16)));
  return (await crypto.subtle.verify("HMAC", key, mac, new TextEncoder().encode(user))) ? user : null;
}

// Browser apps served elsewhere (SYNC_ORIGINS, comma-separated) sync from the page.
const origins = (origin, env) => (env.SYNC_ORIGINS ?? "").split(",").map((o) => o.trim()).includes(origin);
const sync = syncRelayRoute({ binding: "SYNC_RELAY", authorize, cors: { origins } });

export default {
  async fetch(request, env) {
    const user = new URL(request.url).pathname.split("/")[1];
    if (!user) return Response.json({ error: "no user id" }, { status: 400 });
    try {
      if (user === "sync") return await sync(request, env);
      return await env.USERS.get(env.USERS.idFromName(user)).fetch(request);
    } catch (err) {
      // Library errors carry a stable code (INVALID_INPUT, LLM, STORAGE, ...).
      return Response.json({ error: err.message, code: err.code }, { status: err.code === "INVALID_INPUT" ? 400 : 500 });
    }
  },
};
