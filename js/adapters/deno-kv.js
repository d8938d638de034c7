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
// and 800 KiB per commit; larger ones commit in order, each within both.
const MAX_MUTATIONS = 1000;
// Deno KV's 819,200 bytes per commit, with room to spare: a string counts
// twice its length (V8 serializes text outside Latin-1 as UTF-16).
const MAX_COMMIT_BYTES = 700_000;
const size = (k, v) => 2 * (k.length + (typeof v === "string" ? v.length : JSON.stringify(v ?? null).length)) + 64;

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
      let op = kv.atomic();
      let [count, bytes] = [0, 0];
      const commit = async () => {
        const result = await op.commit();
        if (!result.ok) throw new Error("Deno KV atomic commit failed");
        [op, count, bytes] = [kv.atomic(), 0, 0];
      };
      for (const [k, v] of Object.entries(entries)) {
        const n = size(k, v);
        if (count > 0 && (count === MAX_MUTATIONS || bytes + n > MAX_COMMIT_BYTES)) await commit();
        op.set(key(k), v);
        count += 1;
        bytes += n;
      }
      if (count > 0) await commit();
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
