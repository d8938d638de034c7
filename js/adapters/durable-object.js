// A storage adapter on Cloudflare Durable Object storage (one object per
// user, say; `namespace` keeps users apart inside one object too).
//
//   import { durableObjectAdapter } from "agent-memory/adapters/durable-object";
//   const store = durableObjectAdapter(this.ctx.storage);
//
// `put` with an object is atomic for up to 128 keys; larger batches commit
// in order, 128 at a time. `list({ prefix })` returns a Map in key order.
// `putManyIf` runs in one storage transaction: the object's requests never
// interleave inside it.
const MAX_KEYS = 128;

export function durableObjectAdapter(storage) {
  return {
    get: (k) => storage.get(k),
    put: (k, v) => storage.put(k, v),
    async putMany(entries) {
      const all = Object.entries(entries);
      for (let i = 0; i < all.length; i += MAX_KEYS) {
        await storage.put(Object.fromEntries(all.slice(i, i + MAX_KEYS)));
      }
    },
    putManyIf: (check, expected, entries) =>
      storage.transaction(async (txn) => {
        if ((await txn.get(check)) !== expected) return false;
        const all = Object.entries(entries);
        for (let i = 0; i < all.length; i += MAX_KEYS) await txn.put(Object.fromEntries(all.slice(i, i + MAX_KEYS)));
        return true;
      }),
    delete: (k) => storage.delete(k),
    list: (p) => storage.list({ prefix: p }),
  };
}
