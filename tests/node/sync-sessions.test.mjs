// Session sync through the public API: memories on separate stores (a chat
// and an older one on each device) and a SyncRelay on a third, encrypted;
// `sync(transport, { sessions: true })` and what it leaves out without.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const open = (store, sessionId, key) =>
  am.Memory.open({ namespace: "sync-user", sessionId, store, ...(key ? { encryption: { key } } : {}) });
const said = async (m) => (await m.sessionHistory()).map((e) => e.content);
// A relay keeps items as base64: its raw store read decoded too.
const decoded = (store) =>
  [...store.map.values()].map((v) => `${v}\n${Buffer.from(String(v), "base64").toString("latin1")}`).join("\n");

test("sessions sync through an encrypted relay: messages arrive in order, a deleted session stays deleted", async () => {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const [storeA, storeB, relayStore] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const transport = (request) => relay.exchange(request);
  const sessions = { sessions: true };
  const [a, oldA, b] = [await open(storeA, "chat", key), await open(storeA, "old", key), await open(storeB, "chat", key)];
  for (const text of ["My dog is called Rex", "He is four", "He likes the beach"]) await a.add({ content: text });
  await oldA.add({ content: "Planning a trip to Porto" });
  await oldA.add({ content: "In October" });
  const sent = await a.sync(transport, sessions);
  assert.equal(sent.sent, 5);
  const got = await b.sync(transport, sessions);
  assert.equal(got.received, 5);
  assert.deepEqual(await said(b), ["My dog is called Rex", "He is four", "He likes the beach"]);
  // b was never told the other chat's id: it lists what it synced.
  const listed = Object.fromEntries((await b.sessions()).map((s) => [s.sessionId, s]));
  assert.deepEqual(Object.keys(listed).sort(), ["chat", "old"]);
  assert.deepEqual(
    [listed.old.messages, listed.old.preview, listed.old.summarized, listed.chat.preview],
    [2, "Planning a trip to Porto", false, "My dog is called Rex"],
  );
  assert.ok(listed.old.firstAt <= listed.old.lastAt && listed.old.lastAt <= Date.now());
  const oldB = await open(storeB, "old", key);
  assert.deepEqual(await said(oldB), ["Planning a trip to Porto", "In October"]);
  assert.ok(!/Rex|beach|Porto|October/.test(decoded(relayStore)), "message plaintext in the relay's store");

  // b replies; a deletes the old chat while b still holds it.
  await b.add({ content: "Rex sounds lovely", role: "assistant" });
  assert.ok((await a.deleteSession("old")) >= 2);
  await a.sync(transport, sessions);
  await b.sync(transport, sessions);
  await a.sync(transport, sessions);
  assert.deepEqual(await said(a), await said(b));
  assert.equal((await said(a)).at(-1), "Rex sounds lovely");
  for (const store of [storeA, storeB]) {
    const reopened = await open(store, "old", key);
    assert.deepEqual(await said(reopened), [], "the deleted session came back");
    reopened.free();
  }
  assert.ok(!/Porto|October/.test(decoded(relayStore)), "a deleted message's ciphertext stays at the relay");
  assert.deepEqual((await b.sessions()).map((s) => s.sessionId), ["chat"], "a deleted session is not listed");
  // On b the deletion met the two messages it held: two conflicts settled.
  const stats = (await b.stats()).sync;
  assert.equal(stats.conflicts, 2, JSON.stringify(stats));
  assert.ok(Number.isInteger(stats.lagMs) && stats.lagMs >= 0 && stats.lagMs < 60_000, JSON.stringify(stats));
  for (const m of [a, oldA, b, oldB]) m.free();
  relay.free();
});

test("a sync without sessions neither sends nor receives session items; its options are checked", async () => {
  const [storeA, storeB, relayStore] = [mapAdapter(), mapAdapter(), mapAdapter()];
  const relay = await am.SyncRelay.open({ store: relayStore, namespace: "sync-user" });
  const transport = (request) => relay.exchange(request);
  const [a, b] = [await open(storeA, "chat"), await open(storeB, "chat")];
  await a.add({ content: "Booked the dentist for Tuesday" });
  await a.remember({ content: "Sees a dentist on Tuesdays" });
  assert.equal((await a.sync(transport)).sent, 1, "without sessions, the message stays home");
  await a.sync(transport, { sessions: true });
  const report = await b.sync(transport, {});
  assert.equal(report.received, 1);
  assert.deepEqual(await said(b), []);
  assert.equal((await b.sync(transport, { sessions: true })).received, 1);
  assert.deepEqual(await said(b), ["Booked the dentist for Tuesday"]);
  assert.equal((await b.stats()).sync.lagMs >= 0, true);
  for (const bad of [{ sessionz: true }, { sessions: "yes" }, 5, "sessions", [true]]) {
    await assert.rejects(
      a.sync(transport, bad),
      (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT",
      JSON.stringify(bad),
    );
  }
  for (const fine of [undefined, null, { sessions: undefined }, { sessions: false }]) await a.sync(transport, fine);
  for (const m of [a, b]) m.free();
  relay.free();
});
