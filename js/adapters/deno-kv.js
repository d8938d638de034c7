// A storage adapter on Deno KV.
//
//   import { denoKvAdapter } from "agent-memory/adapters/deno-kv";
//   const store = denoKvAdapter(await Deno.openKv(), ["agent-memory"]);
//   const memory = await Memory.open({ namespace: userId, sessionId, store });
//
// Deno KV keys are arrays whose prefixes match whole parts, so the library's
// string keys live in one part after `prefix`, and `list(p)` reads the range
// from `p` to `p` followed by the highest code point (a `{ prefix }` list
// would match nothing). Batches are atomic up to Deno KV's 1,000 mutations
// per commit; larger ones commit in order, 1,000 at a time.
const MAX_MUTATIONS = 1000;

export function denoKvAdapter(kv, prefix = ["agent-memory"]) {
  const key = (k) => [...prefix, k];
  return {
    async get(k) {
      const entry = await kv.get(key(k));
      return entry.value ?? undefined;
    },
    async put(k, value) {
      await kv.set(key(k), value);
    },
    async putMany(entries) {
      const all = Object.entries(entries);
      for (let i = 0; i < all.length; i += MAX_MUTATIONS) {
        const op = kv.atomic();
        for (const [k, v] of all.slice(i, i + MAX_MUTATIONS)) op.set(key(k), v);
        const result = await op.commit();
        if (!result.ok) throw new Error("Deno KV atomic commit failed");
      }
    },
    async delete(k) {
      await kv.delete(key(k));
    },
    async list(p) {
      const out = [];
      for await (const e of kv.list({ start: key(p), end: key(`${p}\u{10FFFF}`) })) {
        out.push([e.key[e.key.length - 1], e.value]);
      }
      return out;
    },
  };
}
