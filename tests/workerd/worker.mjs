// One Durable Object per user; its storage holds that user's memory through
// the shipped adapter. Routes: POST /:user/add, /:user/remember,
// GET /:user/memories, /:user/conformance.
import wasm from "../../pkg/agent_memory_bg.wasm";
import o200k from "../../pkg/packs/o200k.amtk";
import { checkStorageAdapter, initSync, loadTokenizer, Memory } from "../../pkg/index.js";
import { durableObjectAdapter } from "../../pkg/adapters/durable-object.js";

initSync({ module: wasm });

export class UserMemory {
  constructor(ctx) {
    this.store = durableObjectAdapter(ctx.storage);
  }

  async fetch(request) {
    const url = new URL(request.url);
    const [, user, action] = url.pathname.split("/");
    const memory = await Memory.open({ namespace: user, sessionId: "chat", store: this.store });
    const body = request.method === "POST" ? await request.json() : null;
    let out;
    if (action === "add") out = await memory.add(body);
    else if (action === "remember") out = await memory.remember(body);
    else if (action === "memories") out = (await memory.memories()).map((e) => e.content);
    else if (action === "history") out = (await memory.sessionHistory()).map((e) => e.content);
    else if (action === "conformance") out = await checkStorageAdapter(this.store, "conformance").then(() => "ok");
    else return new Response("not found", { status: 404 });
    await memory.idle();
    return Response.json(out ?? null);
  }
}

export default {
  async fetch(request, env) {
    const user = new URL(request.url).pathname.split("/")[1];
    if (user === "tokenizer") {
      // A pack by name has nowhere to come from here: a typed error. Its bytes work.
      const byName = await loadTokenizer("o200k").then(() => "loaded", (e) => e.code);
      const tok = await loadTokenizer(new Uint8Array(o200k));
      return Response.json({ byName, id: tok.id, count: tok.count("我喜欢用 Rust 写代码, tiktoken-exact.") });
    }
    try {
      return await env.USERS.get(env.USERS.idFromName(user)).fetch(request);
    } catch (err) {
      return Response.json({ error: String(err?.stack ?? err), code: err?.code }, { status: 500 });
    }
  },
};
