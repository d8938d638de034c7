// Sync through the public API: two memories on separate stores and a
// SyncRelay on a third, the transport a plain function calling the relay
// (what a host's fetch to its relay route does).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const open = (store, extra = {}) => am.Memory.open({ namespace: "sync-user", sessionId: "s", store, ...extra });
const texts = async (m) => (await m.memories()).map((e) => e.content).sort();
const raw = (store) => [...store.map.values()].map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join("\n");
// A relay keeps items as base64: its raw store read decoded too.
const decoded = (store) => raw(store) + [...store.map.values()].map((v) => Buffer.from(String(v), "base64").toString()).join("\n");

test("two memories syncing through a relay hold the same memories, and a forget propagates", async () => {
  const [storeA, storeB, relayStore] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const [a, b] = [await open(storeA), await open(storeB)];
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const transport = (request) => relay.exchange(request);

  const dog = await a.remember({ content: "Has a dog named Rex" });
  await a.remember({ content: "Works as a nurse" });
  await b.remember({ content: "Lives in Lisbon" });
  const first = await a.sync(transport);
  assert.equal(first.sent, 2);
  assert.ok(first.bytesSent > 0 && first.rounds >= 1, JSON.stringify(first));
  await b.sync(transport);
  await a.sync(transport);
  assert.deepEqual(await texts(a), ["Has a dog named Rex", "Lives in Lisbon", "Works as a nurse"]);
  assert.deepEqual(await texts(b), await texts(a));

  assert.equal(await b.forget(dog.entry.id), true);
  await b.sync(transport);
  const report = await a.sync(transport);
  assert.equal(report.received, 2, "the forget and the erased write");
  assert.deepEqual(await texts(a), ["Lives in Lisbon", "Works as a nurse"]);
  await a.idle();
  assert.ok(!raw(storeA).includes("Rex") && !raw(storeB).includes("Rex"), "a forgotten text stays in a device's store");
  assert.ok(!decoded(relayStore).includes("Rex"), "a forgotten text stays in the relay's store");
  const stats = (await a.stats()).sync;
  assert.equal(stats.syncs, 3);
  assert.equal(stats.lastError, undefined);
  // A purge travels: both empty, the relay's store without the texts.
  await a.purge();
  for (const m of [a, b, a]) await m.sync(transport);
  assert.deepEqual([await texts(a), await texts(b)], [[], []]);
  assert.ok(!/Lisbon|nurse/.test(decoded(relayStore)), "a purged text stays in the relay's store");
  for (const m of [a, b]) m.free();
  relay.free();
});

test("with encryption the relay holds no plaintext; a transport that rejects or answers junk is a typed error", async () => {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const [storeA, storeB, relayStore] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const [a, b] = [await open(storeA, { encryption: { key } }), await open(storeB, { encryption: { key } })];
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const transport = async (request) => relay.exchange(request);
  await a.remember({ content: "Allergic to peanuts" });
  await a.sync(transport);
  await b.sync(transport);
  assert.deepEqual(await texts(b), ["Allergic to peanuts"]);
  const held = raw(relayStore);
  assert.ok(held.length > 0 && !held.includes("peanuts"));
  assert.ok(!Buffer.from(held, "latin1").toString().includes("peanuts"));
  for (const [bad, code] of [
    [async () => { throw new Error("offline"); }, "SYNC_TRANSPORT"],
    [async () => "not bytes", "SYNC_TRANSPORT"],
    [async () => new Uint8Array([65, 77, 9, 3]), "SYNC_VERSION"],
    ["not a function", "INVALID_INPUT"],
  ]) {
    await assert.rejects(a.sync(bad), (e) => e.name === "AgentMemoryError" && e.code === code, code);
  }
  assert.match((await a.stats()).sync.lastError, /SYNC_VERSION/);
  await assert.rejects(relay.exchange(new Uint8Array((1 << 20) + 1)), (e) => e.code === "LIMIT_EXCEEDED");
  await assert.rejects(relay.exchange("junk"), (e) => e.code === "INVALID_INPUT");
  await assert.rejects(am.SyncRelay.open({ store: relayStore, namespace: "n", misspelt: 1 }), (e) => e.code === "INVALID_INPUT");
  for (const m of [a, b]) m.free();
  relay.free();
});

test("a device that synced plain and then took a key resends what it sent, sealed: the relay keeps no plaintext", async () => {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const [storeA, storeB, relayStore] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const transport = async (request) => relay.exchange(request);
  const before = await open(storeA);
  await before.remember({ content: "Allergic to peanuts" });
  await before.sync(transport);
  assert.ok(decoded(relayStore).includes("peanuts"), "it synced plain first");
  before.free();
  // The passphrase is set: the same store, its records sealed as they are read.
  const a = await open(storeA, { encryption: { key, migrate: true } });
  const report = await a.sync(transport);
  assert.equal(report.resent, 1, JSON.stringify(report));
  assert.ok(!decoded(relayStore).includes("peanuts"), "the relay still holds the plain copy");
  assert.equal((await a.sync(transport)).resent, 0, "once");
  const b = await open(storeB, { encryption: { key } });
  const got = await b.sync(transport);
  assert.equal(got.rejected, 0, JSON.stringify(got));
  assert.deepEqual(await texts(b), ["Allergic to peanuts"]);
  for (const m of [a, b]) m.free();
  relay.free();
});

test("relay to relay: two relays sync their sealed items, so a device on each sees the other's memories and forgets", async () => {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const [storeA, storeB, storeEu, storeUs] = [mapAdapter(), mapAdapter(), mapAdapter(), mapAdapter()];
  const [a, b] = [await open(storeA, { encryption: { key } }), await open(storeB, { encryption: { key } })];
  const eu = await am.SyncRelay.open({ store: storeEu, namespace: "sync-user" });
  const us = await am.SyncRelay.open({ store: storeUs, namespace: "sync-user" });
  const toEu = (request) => eu.exchange(request);
  const toUs = (request) => us.exchange(request);

  const dog = await a.remember({ content: "Has a dog named Rex" });
  await b.remember({ content: "Lives in Lisbon" });
  await a.sync(toEu);
  await b.sync(toUs);
  const report = await eu.sync(toUs);
  assert.deepEqual([report.sent, report.received], [1, 1], JSON.stringify(report));
  await a.sync(toEu);
  await b.sync(toUs);
  assert.deepEqual(await texts(a), ["Has a dog named Rex", "Lives in Lisbon"]);
  assert.deepEqual(await texts(b), await texts(a));
  // A forget on one side's device reaches the other side's through the relays.
  await b.forget(dog.entry.id);
  await b.sync(toUs);
  await us.sync(toEu);
  await a.sync(toEu);
  assert.deepEqual(await texts(a), ["Lives in Lisbon"]);
  assert.ok(!/Rex|Lisbon/.test(decoded(storeEu) + decoded(storeUs)), "relays hold ciphertext and erasures only");
  // Equal relays exchange nothing more.
  const again = await eu.sync(toUs);
  assert.deepEqual([again.sent, again.received], [0, 0]);
  // A transport that is not a function, or that fails, is a typed error.
  await assert.rejects(eu.sync("https://relay.test"), (e) => e.code === "INVALID_INPUT" && /transport/.test(e.message));
  await assert.rejects(eu.sync(async () => { throw undefined; }), (e) => e.code === "SYNC_TRANSPORT");
  for (const x of [a, b, eu, us]) x.free();
});

test("lists that restate lists of versions: each version names one, and a new device gets one memory in force with its history", async () => {
  const [store, relayStore, fresh] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const m = await open(store);
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const said = (i) => ({ content: `Saved ${i} euros towards the trip to Porto this month`, sources: [`msg-${i}`] });
  const outcomes = [];
  for (let b = 0; b < 3; b++) outcomes.push(await m.rememberMany(Array.from({ length: 20 }, (_, k) => said(b * 20 + k))));
  // The second list: its first version replaces the first list's 20, each
  // later one the version of its own list before it.
  const named = outcomes[1].map((o) => (o.outcome === "superseded" ? o.superseded.length : -1));
  assert.deepEqual(named, [20, ...Array(19).fill(1)]);
  const [head] = await m.memories();
  assert.equal(head.content, "Saved 59 euros towards the trip to Porto this month");
  assert.equal(head.sources.length, 60, "the version in force stands for every version's messages");
  await m.sync((request) => relay.exchange(request));
  const device = await open(fresh);
  const report = await device.sync((request) => relay.exchange(request));
  assert.ok(report.bytesReceived < 60 * 1500, `${report.bytesReceived} bytes for 60 versions`);
  assert.deepEqual((await device.memories()).map((e) => e.content), [head.content]);
  assert.equal((await device.history(head.id)).length, 60);
});

test("a relay with a horizon drops tombstones past it; each device drops its own, and a device away longer drops the forgotten memory and sends what it wrote offline", async () => {
  for (const horizonMs of [0, -1, 1.5, "60000", {}, Number.NaN]) {
    await assert.rejects(am.SyncRelay.open({ store: mapAdapter(), namespace: "alice", horizonMs }), (e) => e.code === "INVALID_INPUT", String(horizonMs));
  }
  // null keeps them for good: past any horizon, its tombstones stay.
  const keptStore = mapAdapter();
  const kept = await am.SyncRelay.open({ store: keptStore, namespace: "alice", horizonMs: null });
  const relayStore = mapAdapter();
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "alice", horizonMs: 300 });
  const to = (request) => relay.exchange(request);
  const [a, b] = [await open(mapAdapter()), await open(mapAdapter())];
  const dog = await a.remember({ content: "Has a dog named Rex" });
  await a.remember({ content: "Works as a nurse" });
  for (const m of [a, b]) await m.sync(to);
  // B goes away; A forgets, and once past the horizon the relay and A let the tombstones go.
  await a.forget(dog.entry.id);
  await a.sync(to);
  const toKept = (request) => kept.exchange(request);
  await a.sync(toKept);
  const tombstones = (store = relayStore) => [...store.map.keys()].filter((k) => k.includes("sync/born/")).length;
  assert.equal(tombstones(), 2, "the forget and the erased write, each noted when it came");
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal((await a.sync(to)).dropped, 2);
  assert.equal(tombstones(), 0);
  await a.sync(toKept);
  assert.equal(tombstones(keptStore), 2, "the relay opened with null keeps its tombstones past any horizon");
  assert.match(decoded(keptStore), /"do":"forget"/);
  kept.free();
  await b.remember({ content: "Runs on Sundays" });
  const back = await b.sync(to);
  assert.deepEqual([back.sent, back.dropped], [1, 1], JSON.stringify(back));
  await a.sync(to);
  assert.deepEqual(await texts(b), ["Runs on Sundays", "Works as a nurse"]);
  assert.deepEqual(await texts(a), await texts(b));
  assert.ok(!decoded(relayStore).includes("Rex"));
  for (const m of [a, b]) m.free();
  relay.free();
});
