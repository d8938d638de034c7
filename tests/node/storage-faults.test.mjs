// A storage adapter that fails, hangs or answers wrong at random, under a
// workload of messages, memories, batches, forgets and session ends: every
// failure is a typed AgentMemoryError, and what was acknowledged is all
// there when a healthy adapter reopens the same data.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { seededRandom } from "../../scripts/random.mjs";

/** Four random letter words: memories that no dedup rule calls alike. */
const words = (random) => Array.from({ length: 4 }, () =>
  Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("")).join(" ");

const STORAGE_CODES = new Set(["STORAGE", "STORAGE_TIMEOUT"]);

/** `inner` with faults: each call, with probability `rate`, throws, rejects,
 * never settles, or (reads) answers wrong: garbage for a value, a missing
 * value, a list with an item left out or a stray key added. `allowed`
 * limits the kinds. */
function faultyAdapter(inner, random, rate, allowed = ["throw", "reject", "hang", "wrong"]) {
  const faults = { throw: 0, reject: 0, hang: 0, wrong: 0 };
  const fault = (read) => {
    if (random() >= rate) return null;
    // Reads answer wrong as often as they fail: that is the rarer path.
    const kinds = allowed.flatMap((k) => (k !== "wrong" ? [k] : read ? [k, k, k] : []));
    if (!kinds.length) return null;
    const kind = kinds[Math.floor(random() * kinds.length)];
    faults[kind]++;
    return kind;
  };
  const wrap = (op, read, wrong) => (...args) => {
    switch (fault(read)) {
      case "throw": throw new Error(`${op} failed`);
      case "reject": return Promise.reject(new Error(`${op} rejected`));
      case "hang": return new Promise(() => {});
      case "wrong": return inner[op](...args).then(wrong);
      default: return inner[op](...args);
    }
  };
  return {
    faults,
    get: wrap("get", true, (v) => (random() < 0.5 ? undefined : `${v ?? ""}\u0000garbage`)),
    put: wrap("put", false),
    delete: wrap("delete", false),
    list: wrap("list", true, (items) => {
      const out = [...items];
      if (out.length && random() < 0.5) out.splice(Math.floor(random() * out.length), 1);
      else out.push([`${out[0]?.[0] ?? "u/"}~stray`, "{\"stray\":true}"]);
      return out;
    }),
  };
}

test("an adapter failing at random: typed errors, nothing acknowledged lost", { timeout: 300_000 }, async (t) => {
  const totals = { steps: 0, acknowledged: 0, failed: 0 };
  for (let round = 0; round < 12; round++) {
    const random = seededRandom(round + 1);
    const backing = mapAdapter();
    const faulty = faultyAdapter(backing, random, 0.04);
    const acked = { messages: [], memories: new Map() };
    // Memories a failed forget was asked to delete: the call failed, but the
    // adapter may have deleted before the failure, so either state is right.
    const forgetting = new Set();
    let m = null;
    for (let step = 0; step < 100; step++) {
      totals.steps++;
      try {
        if (!m) {
          m = await am.Memory.open({ namespace: "u", sessionId: "chat", store: faulty, storageTimeoutMs: 30 });
          continue;
        }
        const r = random();
        if (r < 0.4) {
          const content = `message ${round}.${step}`;
          await m.add({ role: step % 2 ? "assistant" : "user", content });
          acked.messages.push(content);
        } else if (r < 0.6) {
          const content = `Keeps ${words(random)} safe`;
          const out = await m.remember({ content });
          const kept = out.entry ?? out.existing;
          acked.memories.set(kept.id, kept.content);
        } else if (r < 0.75) {
          const batch = [0, 1, 2].map(() => ({ content: `Stores ${words(random)} away` }));
          for (const out of await m.rememberMany(batch)) {
            const kept = out.entry ?? out.existing;
            acked.memories.set(kept.id, kept.content);
          }
        } else if (r < 0.85 && acked.memories.size) {
          const id = [...acked.memories.keys()][Math.floor(random() * acked.memories.size)];
          // A forget that answers `false` (its view, read through a list
          // that left the memory out, lacks it) must not have deleted it:
          // the memory stays expected, unless an earlier forget of it failed.
          const triedBefore = forgetting.has(id);
          forgetting.add(id);
          if (await m.forget(id)) acked.memories.delete(id);
          else if (!triedBefore) forgetting.delete(id);
        } else if (r < 0.95) {
          await m.endSession();
        } else {
          await m.search("fact");
        }
        totals.acknowledged++;
      } catch (err) {
        totals.failed++;
        assert.equal(err?.name, "AgentMemoryError", String(err?.stack ?? err));
        assert.ok(STORAGE_CODES.has(err.code), `${err.code}: ${err.message}`);
      }
    }
    await m?.idle();
    const healthy = await am.Memory.open({ namespace: "u", sessionId: "chat", store: backing });
    const stored = new Map((await healthy.memories()).map((e) => [e.id, e.content]));
    const history = (await healthy.sessionHistory()).map((e) => e.content);
    for (const content of acked.messages) assert.ok(history.includes(content), `round ${round}: message ${content} lost`);
    for (const [id, content] of acked.memories) {
      if (forgetting.has(id)) continue;
      const all = await healthy.history(id);
      assert.ok(stored.get(id) === content || all.some((e) => e.content === content), `round ${round}: memory ${content} lost`);
    }
    assert.equal(history.length, new Set(history).size, `round ${round}: a message stored twice`);
    totals.faults = Object.entries(faulty.faults).reduce((o, [k, v]) => ({ ...o, [k]: (o?.[k] ?? 0) + v }), totals.faults);
  }
  t.diagnostic(JSON.stringify(totals));
  assert.ok(totals.failed > 50 && totals.acknowledged > 300 && totals.faults.wrong > 10, JSON.stringify(totals));
});

test("checkStorageAdapter refuses an adapter that answers wrong, with a typed error", async () => {
  const random = seededRandom(7);
  const wrong = faultyAdapter(mapAdapter(), random, 1, ["wrong"]);
  for (let i = 0; i < 20; i++) {
    await assert.rejects(am.checkStorageAdapter(wrong, "check"), (err) => err.name === "AgentMemoryError" && STORAGE_CODES.has(err.code));
  }
  await am.checkStorageAdapter(mapAdapter(), "check");
});
