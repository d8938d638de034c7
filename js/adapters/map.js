// A storage adapter on a Map: tests, and a server-side cache whose contents
// you persist yourself.
//
//   import { mapAdapter } from "agent-memory/adapters/map";
//   const store = mapAdapter(new Map());
export function mapAdapter(map = new Map()) {
  return {
    map,
    get: async (k) => map.get(k),
    put: async (k, v) => {
      map.set(k, v);
    },
    putMany: async (entries) => {
      for (const [k, v] of Object.entries(entries)) map.set(k, v);
    },
    // Atomic by construction: nothing runs between the check and the sets.
    putManyIf: async (check, expected, entries) => {
      if (map.get(check) !== expected) return false;
      for (const [k, v] of Object.entries(entries)) map.set(k, v);
      return true;
    },
    delete: async (k) => {
      map.delete(k);
    },
    list: async (p) => [...map].filter(([k]) => k.startsWith(p)),
  };
}
