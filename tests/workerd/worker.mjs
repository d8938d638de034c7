// What the example Worker does not show, in real workerd: the Durable Object
// adapter passes the storage conformance suite, the explicit start
// (`initSync` with the imported wasm) works, a pack by name is a typed error
// and a pack imported as data counts exactly. Routes: GET /conformance,
// GET /tokenizer, GET /encrypted (a memory sealed with WebCrypto on the
// Durable Object's storage). Run by tests/node/workerd.test.mjs.
import wasm from "../../pkg/agent_memory_bg.wasm";
import o200k from "../../pkg/packs/o200k.amtk";
import { checkStorageAdapter, initSync, loadTokenizer, Memory } from "../../pkg/index.js";
import { durableObjectAdapter } from "../../pkg/adapters/durable-object.js";

initSync({ module: wasm });

export class Conformance {
  constructor(ctx) {
    this.storage = ctx.storage;
    this.store = durableObjectAdapter(ctx.storage);
  }

  async fetch(request) {
    if (new URL(request.url).pathname === "/encrypted") return Response.json(await this.encrypted());
    await checkStorageAdapter(this.store, "conformance");
    return Response.json("ok");
  }

  async encrypted() {
    const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    const open = (encryption) => Memory.open({ namespace: "sealed", sessionId: "chat", store: this.store, encryption });
    const m = await open({ key });
    await m.add({ content: "I moved to Porto" });
    await m.remember({ content: "Lives in Porto" });
    const again = await open({ key });
    const raw = [...(await this.storage.list()).values()].map(String);
    return {
      memories: (await again.memories()).map((e) => e.content),
      history: (await again.sessionHistory()).map((e) => e.content),
      noKey: await open(undefined).then(() => "opened", (e) => e.code),
      records: raw.length,
      plain: raw.filter((v) => v.includes("Porto")).length,
    };
  }
}

export default {
  async fetch(request, env) {
    try {
      if (["/conformance", "/encrypted"].includes(new URL(request.url).pathname)) {
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
