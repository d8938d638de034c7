// A chat backend on Cloudflare Workers with memory: one Durable Object per
// user id, holding that user's conversation and long-term memories in its
// storage. Routes (the user id is the first path segment):
//
//   POST /:user/add         { "content": "...", "role": "user" | "assistant" }
//   POST /:user/context     { "query": "the new message", "system": "..." }
//                           → the messages to send to the model, within budget
//   GET  /:user/search?q=…  → long-term memories and past turns that match
//   POST /:user/endSession  → consolidates the session into long-term memory
//
// The package needs no init in Workers; the tokenizer pack is a Data module.
import { DurableObject } from "cloudflare:workers";
import { loadTokenizer, Memory } from "agent-memory";
import { durableObjectAdapter } from "agent-memory/adapters/durable-object";
import o200k from "agent-memory/packs/o200k.amtk";

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

export default {
  async fetch(request, env) {
    const user = new URL(request.url).pathname.split("/")[1];
    if (!user) return Response.json({ error: "no user id" }, { status: 400 });
    try {
      return await env.USERS.get(env.USERS.idFromName(user)).fetch(request);
    } catch (err) {
      // Library errors carry a stable code (INVALID_INPUT, LLM, STORAGE, ...).
      return Response.json({ error: err.message, code: err.code }, { status: err.code === "INVALID_INPUT" ? 400 : 500 });
    }
  },
};
