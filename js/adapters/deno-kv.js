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
// `putManyIf` checks with the versionstamp of the value it read, in the
// batch's first commit: another process (a Deno Deploy isolate on the same
// KV) that wrote in between makes the commit fail, not both pass.
const MAX_MUTATIONS = 1000;
// Deno KV's 819,200 bytes per commit, with room to spare: a string counts
// twice its length (V8 serializes text outside Latin-1 as UTF-16).
const MAX_COMMIT_BYTES = 700_000;
const size = (k, v) => 2 * (k.length + (typeof v === "string" ? v.length : JSON.stringify(v ?? null).length)) + 64;

/**
 * `f()`, tried again while a local KV file is busy with another process's
 * commit (SQLite's "database is locked"): a wait, not a failure.
 */
async function busyRetried(f) {
  for (let tries = 1; ; tries++) {
    try {
      return await f();
    } catch (e) {
      if (tries === 20 || !/database is locked/.test(String(e?.message))) throw e;
      await new Promise((ok) => setTimeout(ok, 5 + Math.random() * 20 * tries));
    }
  }
}

/**
 * Commits `entries` in as few atomic commits as Deno KV allows; the first
 * one checks `guard` (an entry read before) when given. Resolves to whether
 * it committed (false: the guard's key changed since it was read).
 */
async function commitAll(kv, key, entries, guard) {
  let op = guard ? kv.atomic().check(guard) : kv.atomic();
  let [count, bytes, first] = [0, 0, true];
  const commit = async () => {
    const result = await busyRetried(() => op.commit());
    if (!result.ok) {
      if (first && guard) return false;
      throw new Error("Deno KV atomic commit failed");
    }
    [op, count, bytes, first] = [kv.atomic(), 0, 0, false];
    return true;
  };
  for (const [k, v] of Object.entries(entries)) {
    const n = size(k, v);
    if (count > 0 && (count === MAX_MUTATIONS || bytes + n > MAX_COMMIT_BYTES) && !(await commit())) return false;
    op.set(key(k), v);
    count += 1;
    bytes += n;
  }
  return count === 0 || (await commit());
}

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
    putMany: (entries) => commitAll(kv, key, entries, null),
    async putManyIf(check, expected, entries) {
      const current = await kv.get(key(check));
      if ((current.value ?? undefined) !== (expected ?? undefined)) return false;
      return commitAll(kv, key, entries, current);
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
