// The adversarial pass, repeatable: one row per class of attack an earlier
// pass found (hook rejections by value, planted and bit-rotted sealed
// records, a key rotation with a second instance on the old key, a replayed
// record, crafted import ids, ids that are not well-formed text, oversized
// model answers, malformed framework-adapter input). Each case counts as
// typed (the AgentMemoryError it should be, or the documented recovery),
// untyped (any other error), lost (an acknowledged memory missing
// afterwards) or wrong (silently a wrong answer). A crash is an uncaught
// error or a wasm trap while the pass runs. Then each refusal of the pass is
// repeated `repeats` times on one instance, which must stay healthy.
// Run by tests/node/attacks.test.mjs (once, few repeats) and by
// bench:reliability (STAGES=attacks, 100,000 repeats).
import * as am from "../pkg/node.js";
import { fromLangChain, toLangChain, AgentMemoryRetriever } from "../pkg/integrations/langchain.js";
import { toModelMessages } from "../pkg/integrations/ai-sdk.js";
import { AgentMemorySession, memoryInputFilter } from "../pkg/integrations/openai-agents.js";

const aesKey = () => crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);

function mapStore(map = new Map()) {
  return {
    map,
    async get(k) { return map.get(k); },
    async put(k, v) { map.set(k, v); },
    async delete(k) { map.delete(k); },
    async list(prefix) { return [...map].filter(([k]) => k.startsWith(prefix)); },
  };
}

const REASONS = [undefined, null, 7, { not: "an Error" }, "nope"];
const rejecting = (reason) => [
  () => Promise.reject(reason),
  () => ({ then(_ok, reject) { reject(reason); } }),
  () => { throw reason; },
];

/** `typed` when `promise` rejects with an AgentMemoryError whose code is one of `codes`. */
async function expectTyped(promise, codes) {
  try {
    await promise;
    return { outcome: "wrong", detail: "accepted" };
  } catch (e) {
    if (e?.name === "AgentMemoryError" && codes.includes(e.code)) return { outcome: "typed" };
    if (e instanceof WebAssembly.RuntimeError) return { outcome: "crash", detail: String(e) };
    return { outcome: "untyped", detail: `${e?.name}: ${e?.message ?? e}` };
  }
}

const CLASSES = {
  async "hook rejections by value"() {
    const out = [];
    for (const reason of REASONS) {
      for (const fail of rejecting(reason)) {
        for (const op of ["get", "put", "list", "delete"]) {
          const store = mapStore();
          const m = await am.Memory.open({ namespace: "n", sessionId: "s", store });
          await m.remember({ content: "Likes green tea" });
          const healthy = store[op];
          store[op] = fail;
          const call = {
            get: () => am.Memory.open({ namespace: "n", sessionId: "s", store }),
            list: () => am.Memory.open({ namespace: "n", sessionId: "s", store }),
            put: () => m.add({ content: "hello" }),
            // A forget only adds (an operation, then its erasure); a purge deletes.
            delete: () => m.purge(),
          }[op];
          out.push(await expectTyped(call(), ["STORAGE", "STORAGE_TIMEOUT"]));
          store[op] = healthy;
          const lost = (await m.memories()).length === 1 ? 0 : 1;
          if (lost) out.push({ outcome: "lost", detail: `${op}: the memory is gone` });
          m.free();
        }
        const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", llm: { complete: fail, maxRetries: 0 }, autoCompress: false, maxTokens: 100 });
        for (let i = 0; i < 12; i++) await m.add({ content: `message number ${i} with a few words` });
        out.push(await expectTyped(m.compress(), ["LLM"]));
        const hooked = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", longTerm: fail });
        const { report } = await hooked.buildContext({ query: "hello" });
        out.push(typeof report.longTermError === "string" ? { outcome: "typed" } : { outcome: "wrong", detail: "no longTermError" });
        m.free();
        hooked.free();
      }
    }
    return out;
  },

  async "planted and bit-rotted sealed records"() {
    const out = [];
    for (const encrypted of [true, false]) {
      const store = mapStore();
      const encryption = encrypted ? { key: await aesKey() } : undefined;
      const m = await am.Memory.open({ namespace: "ns", sessionId: "s", store, encryption });
      for (const c of ["Allergic to penicillin", "Lives in Lisbon", "Has a cat called Miso"]) await m.remember({ content: c });
      await m.add({ content: "hello" });
      store.map.set("ns/lt/entry/planted", "amenc1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
      if (encrypted) {
        const [k, v] = [...store.map].find(([key]) => key.includes("/session/s/msg/"));
        const at = "amenc1.".length;
        store.map.set(k, `${v.slice(0, at)}${v[at] === "0" ? "1" : "0"}${v.slice(at + 1)}`);
      }
      const damaged = [];
      try {
        const again = await am.Memory.open({ namespace: "ns", sessionId: "s", store, encryption, onDamaged: (d) => damaged.push(d.key) });
        const n = (await again.memories()).length;
        out.push(n === 3 ? { outcome: "typed" } : { outcome: "lost", detail: `${n} of 3 memories` });
        out.push(damaged.some((k) => k.endsWith("planted")) ? { outcome: "typed" } : { outcome: "wrong", detail: "not reported" });
        again.free();
      } catch (e) {
        out.push({ outcome: e?.name === "AgentMemoryError" ? "wrong" : "untyped", detail: `open failed: ${e?.code} ${e?.message}` });
      }
      m.free();
    }
    return out;
  },

  async "rotation with a second instance"() {
    const out = [];
    const store = mapStore();
    const oldKey = await aesKey();
    const tab = await am.Memory.open({ namespace: "r", sessionId: "s", store, encryption: { key: oldKey } });
    const acknowledged = [];
    for (const c of ["Lives in Lisbon", "Has a cat called Miso"]) {
      await tab.remember({ content: c });
      acknowledged.push(c);
    }
    const newKey = await aesKey();
    const rotating = await am.Memory.open({ namespace: "r", sessionId: "s", store, encryption: { key: newKey, previousKeys: [oldKey] } });
    for (const write of [() => tab.remember({ content: "Plays the cello" }), () => tab.add({ content: "hi" })]) {
      const r = await expectTyped(write(), ["DECRYPTION"]);
      out.push(r);
      if (r.outcome === "wrong") acknowledged.push("Plays the cello");
    }
    await rotating.idle();
    const stale = (await rotating.stats()).encryption.stale;
    out.push(stale === 0 ? { outcome: "typed" } : { outcome: "wrong", detail: `stale ${stale}` });
    const after = await am.Memory.open({ namespace: "r", sessionId: "s", store, encryption: { key: newKey } });
    const kept = new Set((await after.memories()).map((e) => e.content));
    for (const c of acknowledged) out.push(kept.has(c) ? { outcome: "typed" } : { outcome: "lost", detail: c });
    for (const m of [tab, rotating, after]) m.free();
    return out;
  },

  async "replay of a forgotten record"() {
    // Every record as it was before a forget, written back by someone
    // without the key: the forget is an operation of its own, and the
    // fold counts every earlier write of the memory as never written, so
    // the memory stays forgotten. (Counted as `replayed` if it came back.)
    const store = mapStore();
    const encryption = { key: await aesKey() };
    const m = await am.Memory.open({ namespace: "p", sessionId: "s", store, encryption });
    await m.remember({ content: "Allergic to penicillin" });
    const before = new Map(store.map);
    await m.forget((await m.memories())[0].id);
    for (const [k, v] of before) store.map.set(k, v);
    const again = await am.Memory.open({ namespace: "p", sessionId: "s", store, encryption });
    const back = (await again.memories()).length;
    m.free();
    again.free();
    return [back ? { outcome: "replayed", detail: "a forgotten memory's record written back" } : { outcome: "typed" }];
  },

  async "crafted import ids"() {
    const out = [];
    const store = mapStore();
    const m = await am.Memory.open({ namespace: "i", sessionId: "s", store });
    await m.rememberMany(Array.from({ length: 25 }, (_, i) => ({ content: `fact number ${i} about topic ${i * 7}` })));
    const doc = await m.exportMemories(null);
    const base = doc.entries[0];
    const batchId = [...store.map.keys()].find((k) => k.includes("~batch/"))?.split("/lt/entry/")[1] ?? "~batch/0-0";
    for (const id of ["a/b", "../../session/s/msg/x", "lt/meta/generation", "x\ny", "x\u0000y", "x".repeat(5_000), batchId, ""]) {
      const crafted = { ...doc, entries: [{ ...base, id, content: "planted" }], count: 1 };
      out.push(await expectTyped(m.importMemories(crafted), ["INVALID_INPUT"]));
    }
    const n = (await (await am.Memory.open({ namespace: "i", sessionId: "s", store })).memories()).length;
    out.push(n === 25 ? { outcome: "typed" } : { outcome: "lost", detail: `${n} of 25 memories` });
    m.free();
    return out;
  },

  async "ids that are not well-formed text"() {
    const out = [];
    for (const sessionId of ["s\uD800", "s\uDBFF", "s\uFFFD", "s\u0000", "s\n"]) {
      out.push(await expectTyped(am.Memory.open({ store: "memory", namespace: "w", sessionId }), ["INVALID_INPUT"]));
    }
    out.push(await expectTyped(am.Memory.open({ store: "memory", namespace: "w", sessionId: "s", agentId: "a\uDC00" }), ["INVALID_INPUT"]));
    const m = await am.Memory.open({ store: "memory", namespace: "w", sessionId: "s" });
    out.push(await expectTyped(m.deleteSession("s\uDC00"), ["INVALID_INPUT"]));
    m.free();
    return out;
  },

  async "oversized model answers"() {
    const out = [];
    const huge = "The user mentioned many things. ".repeat(330_000);
    const m = await am.Memory.open({ store: "memory", namespace: "o", sessionId: "s", llm: () => huge, autoCompress: false, maxTokens: 200, retainRecentRounds: 1 });
    for (let i = 0; i < 30; i++) await m.add({ content: `message number ${i} with some words` });
    await m.compress();
    const { report } = await m.buildContext({});
    out.push(report.summary <= 2_000 ? { outcome: "typed" } : { outcome: "wrong", detail: `summary ${report.summary} tokens` });
    m.free();
    const many = JSON.stringify({ memories: Array.from({ length: 5_000 }, (_, i) => ({ content: `User owns rare item number ${i} of the set ${i * 7919}` })) });
    const judged = await am.Memory.open({ store: "memory", namespace: "o2", sessionId: "s", llm: () => many });
    await judged.add({ role: "user", content: "I like many things" });
    const started = performance.now();
    const end = await judged.endSession();
    const ms = performance.now() - started;
    const capped = end.added <= 64 && end.errors.some((e) => e.includes("were kept"));
    out.push(capped && ms < 10_000 ? { outcome: "typed" } : { outcome: "wrong", detail: `added ${end.added} in ${ms.toFixed(0)} ms` });
    judged.free();
    return out;
  },

  async "framework adapter input"() {
    const out = [];
    const m = await am.Memory.open({ store: "memory", namespace: "f", sessionId: "s" });
    const sync = (f) => expectTyped((async () => f())(), ["INVALID_INPUT"]);
    out.push(await sync(() => fromLangChain(null)));
    out.push(await sync(() => toLangChain(null)));
    out.push(await sync(() => new AgentMemoryRetriever({ memory: null })));
    out.push(await sync(() => toModelMessages([null])));
    out.push(await sync(() => new AgentMemorySession(null)));
    out.push(await expectTyped(new AgentMemorySession(m).addItems(null), ["INVALID_INPUT"]));
    out.push(await expectTyped(memoryInputFilter(m)("x"), ["INVALID_INPUT"]));
    const cycle = {};
    cycle.self = cycle;
    out.push(await expectTyped(new AgentMemorySession(m).addItems([{ type: "function_call_result", callId: "c", output: cycle }]), ["INVALID_INPUT"]));
    m.free();
    return out;
  },
};

/** Each refusal of the pass, `repeats` times on one instance: still healthy after. */
async function repeated(repeats) {
  const m = await am.Memory.open({ store: "memory", namespace: "rep", sessionId: "s" });
  const doc = { format: "agent-memory", version: 1, exportedAt: 0, entries: [{ ...am.createEntry({ content: "x" }), id: "a/b" }], processed: {} };
  const calls = [
    () => m.importMemories(doc),
    () => m.deleteSession("s\uD800"),
    () => m.add({ role: "user", content: "x", timestamp: 2 ** 50 }),
  ];
  let untyped = 0;
  for (const call of calls) {
    for (let i = 0; i < repeats; i++) {
      try {
        await call();
        untyped++;
      } catch (e) {
        if (e?.name !== "AgentMemoryError") untyped++;
      }
    }
  }
  await m.add({ role: "user", content: "still here" });
  const healthy = (await m.sessionHistory()).length === 1;
  m.free();
  return { calls: calls.length * repeats, untyped, healthy };
}

export async function attackPass({ repeats = 1_000 } = {}) {
  const crashes = [];
  const onCrash = (e) => crashes.push(String(e?.stack ?? e));
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  const rows = [];
  try {
    for (const [name, run] of Object.entries(CLASSES)) {
      const cases = await run();
      const count = (o) => cases.filter((c) => c.outcome === o).length;
      rows.push({
        class: name, cases: cases.length, typed: count("typed"), untyped: count("untyped"), lost: count("lost"),
        wrong: count("wrong"), crashes: count("crash"), replayed: count("replayed"),
        failures: cases.filter((c) => !["typed", "replayed"].includes(c.outcome)).map((c) => `${c.outcome}: ${c.detail}`),
      });
    }
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off("uncaughtException", onCrash);
    process.off("unhandledRejection", onCrash);
  }
  const refusals = await repeated(repeats);
  const sum = (f) => rows.reduce((n, r) => n + r[f], 0);
  return {
    rows, refusals,
    figures: {
      attack_cases: sum("cases"), attack_untyped: sum("untyped") + refusals.untyped, attack_lost: sum("lost"),
      attack_wrong: sum("wrong"), attack_crashes: sum("crashes") + crashes.length, attack_replayed_open: sum("replayed"),
      refusal_repeats: refusals.calls, refusal_healthy: refusals.healthy,
    },
    crashes,
  };
}
