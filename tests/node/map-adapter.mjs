// A storage adapter on a Map, whose raw contents tests read directly; set
// `failPuts` to make writes throw as a full disk would.
export function mapAdapter(map = new Map()) {
  const adapter = {
    map,
    failPuts: false,
    async get(k) { return map.get(k); },
    async put(k, v) {
      if (adapter.failPuts) throw new Error("disk full");
      map.set(k, v);
    },
    async delete(k) { map.delete(k); },
    async list(prefix) { return [...map].filter(([k]) => k.startsWith(prefix)); },
  };
  return adapter;
}
