// Run by tests/node/sync-relays.test.mjs with the real deno binary:
//   deno run --allow-read --allow-write --allow-net --unstable-kv tests/deno/relay.mjs <kv file> <relay url> <token> write|read
// A server replica of a user's sync relay on Deno KV, and a device of that
// user syncing with it: `write` has the device remember a fact and sync, then
// the KV relay syncs with the Durable Object relay at <relay url>; `read`
// syncs the relays, then the device. Prints one JSON line.
import { initSync, Memory, SyncRelay } from "../../pkg/index.js";
import { denoKvAdapter } from "../../pkg/adapters/deno-kv.js";
import { httpTransport } from "../../pkg/sync/http.js";

initSync({ module: Deno.readFileSync(new URL("../../pkg/agent_memory_bg.wasm", import.meta.url)) });
const [path, url, token, phase] = Deno.args;
const kv = await Deno.openKv(path);
const relayStore = denoKvAdapter(kv, ["relay"]);
const relay = await SyncRelay.open({ store: relayStore, namespace: "alice" });
// The user's key, as the Node device imports it (an app keeps it in a secret store).
const key = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(7), "AES-GCM", false, ["encrypt", "decrypt"]);
const device = await Memory.open({ namespace: "alice", sessionId: "deno", store: denoKvAdapter(kv, ["device"]), encryption: { key } });
const toKv = (request) => relay.exchange(request);
const toDurableObject = httpTransport(url, { headers: { authorization: `Bearer ${token}` } });
const out = {};
if (phase === "write") {
  await device.remember({ content: "Lives in Lisbon" });
  await device.sync(toKv);
  const report = await relay.sync(toDurableObject);
  out.relays = { sent: report.sent, received: report.received };
} else {
  const report = await relay.sync(toDurableObject);
  out.relays = { sent: report.sent, received: report.received };
  await device.sync(toKv);
  out.texts = (await device.memories()).map((e) => e.content).sort();
  out.relayValues = (await relayStore.list("")).map(([, v]) => String(v)).join("\n");
}
device.free();
relay.free();
kv.close();
console.log(JSON.stringify(out));
