// Run by tests/node/deno.test.mjs with the real deno binary:
//   deno run --allow-read --allow-write --unstable-kv tests/deno/kv.mjs <kv file> write|read
// Prints one JSON line.
import { checkStorageAdapter, initSync, Memory } from "../../pkg/index.js";
import { denoKvAdapter } from "../../pkg/adapters/deno-kv.js";

initSync({ module: Deno.readFileSync(new URL("../../pkg/agent_memory_bg.wasm", import.meta.url)) });
const [path, phase] = Deno.args;
const kv = await Deno.openKv(path);
const store = denoKvAdapter(kv, ["app"]);
const out = {};
// A key both processes import from the same bytes (a real app would keep it
// in a secret store, or derive it from a passphrase).
const key = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(7), "AES-GCM", false, ["encrypt", "decrypt"]);
if (phase === "write") {
  await checkStorageAdapter(store, "conformance");
  // 1.3 MB in one batch (a snapshot's chunks): past one commit's 800 KiB.
  await store.putMany(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`big/${String(i).padStart(2, "0")}`, String(i % 10).repeat(32 * 1024)])));
  out.big = (await store.list("big/")).map(([, v]) => v.length).reduce((a, b) => a + b, 0);
  const alice = await Memory.open({ namespace: "alice", sessionId: "chat", store });
  await alice.add({ content: "I moved to Lisbon last spring" });
  await alice.remember({ content: "Lives in Lisbon" });
  await alice.rememberMany(Array.from({ length: 1200 }, (_, i) => ({ content: `Fact ${i} ${"x".repeat(i % 7)} ${i * 7919}` })));
  const bob = await Memory.open({ namespace: "bob", sessionId: "chat", store });
  await bob.remember({ content: "Lives in Oslo" });
  // Why values of many records are at most 30 KiB: KV counts text beyond
  // Latin-1 as UTF-16, so 32 KiB of it is past its 64 KiB per value.
  const wide = (n) => "x".repeat(n - 3) + "\u2014";
  out.valueLimit = [];
  for (const n of [30 * 1024, 32 * 1024]) {
    out.valueLimit.push(await kv.set(["limit"], wide(n)).then(() => "stored", () => "refused"));
  }
  await kv.delete(["limit"]);
  // Written together, with text beyond Latin-1 (two bytes a unit in KV):
  // batch records near their size, under KV's 64 KiB.
  const dana = await Memory.open({ namespace: "dana", sessionId: "chat", store });
  await dana.rememberMany(Array.from({ length: 600 }, (_, i) => ({ content: `Note ${i} — ${"word ".repeat(10 + (i % 13))}${i * 104729}` })));
  const carol = await Memory.open({ namespace: "carol", sessionId: "chat", store, encryption: { key } });
  await carol.add({ content: "I moved to Porto" });
  await carol.remember({ content: "Lives in Porto" });
  out.written = true;
} else {
  const alice = await Memory.open({ namespace: "alice", sessionId: "chat", store });
  out.memories = (await alice.memories()).length;
  out.lisbon = (await alice.search("Lisbon", { scopes: ["user"] })).map((h) => h.text);
  out.history = (await alice.sessionHistory()).map((e) => e.content);
  const bob = await Memory.open({ namespace: "bob", sessionId: "chat", store });
  out.bob = (await bob.memories()).map((e) => e.content);
  out.dana = (await (await Memory.open({ namespace: "dana", sessionId: "chat", store })).memories()).length;
  const carol = await Memory.open({ namespace: "carol", sessionId: "chat", store, encryption: { key } });
  out.carol = (await carol.memories()).map((e) => e.content);
  out.carolHistory = (await carol.sessionHistory()).map((e) => e.content);
  out.carolNoKey = await Memory.open({ namespace: "carol", sessionId: "chat", store }).then(() => "opened", (e) => e.code);
  let plain = 0;
  for await (const { value } of kv.list({ prefix: ["app"] })) {
    if (JSON.stringify(value).includes("Porto")) plain++;
  }
  out.carolPlainRecords = plain;
}
kv.close();
console.log(JSON.stringify(out));
