// What the example Worker does not show, in real workerd: the Durable Object
// adapter passes the storage conformance suite, the explicit start
// (`initSync` with the imported wasm) works, a pack by name is a typed error
// and a pack imported as data counts exactly. Routes: GET /conformance,
// GET /tokenizer. Run by tests/node/workerd.test.mjs.
import wasm from "../../pkg/agent_memory_bg.wasm";
import o200k from "../../pkg/packs/o200k.amtk";
import { checkStorageAdapter, initSync, loadTokenizer } from "../../pkg/index.js";
import { durableObjectAdapter } from "../../pkg/adapters/durable-object.js";

initSync({ module: wasm });

export class Conformance {
  constructor(ctx) {
    this.store = durableObjectAdapter(ctx.storage);
  }

  async fetch() {
    await checkStorageAdapter(this.store, "conformance");
    return Response.json("ok");
  }
}

export default {
  async fetch(request, env) {
    try {
      if (new URL(request.url).pathname === "/conformance") {
        return await env.CONFORMANCE.get(env.CONFORMANCE.idFromName("one")).fetch(request);
      }
      const byName = await loadTokenizer("o200k").then(() => "loaded", (e) => e.code);
      const tok = await loadTokenizer(new Uint8Array(o200k));
      return Response.json({ byName, id: tok.id, count: tok.count("我喜欢用 Rust 写代码, tiktoken-exact.") });
    } catch (err) {
      return Response.json({ error: String(err?.stack ?? err), code: err?.code }, { status: 500 });
    }
  },
};
