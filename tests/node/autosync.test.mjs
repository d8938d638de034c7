// Memory.open({ sync }) and memory.close() through the public API: two
// memories on separate stores syncing on a short schedule to one SyncRelay
// through an in-process transport that counts its calls. Waits poll for an
// outcome under the test's overall timeout; no assertion is about time.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const open = (extra = {}) => am.Memory.open({ namespace: "autosync-user", sessionId: "s", store: mapAdapter(), ...extra });
const texts = async (m) => (await m.memories()).map((e) => e.content);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check) {
  while (!(await check())) await pause(20);
}

/** A transport to `relay` that counts its exchanges. */
function counted(relay) {
  const transport = (request) => {
    transport.calls += 1;
    return relay.exchange(request);
  };
  transport.calls = 0;
  return transport;
}

test("a memory remembered on one device reaches another by their schedules, and close stops the exchanges", { timeout: 30_000 }, async () => {
  const relay = await am.SyncRelay.open({ store: mapAdapter(), namespace: "autosync-user" });
  const [wireA, wireB] = [counted(relay), counted(relay)];
  const a = await open({ sync: { transport: wireA, intervalMs: 100 } });
  const b = await open({ sync: { transport: wireB, intervalMs: 100 } });
  await a.remember({ content: "Has a dog named Rex" });
  await until(async () => (await texts(b)).includes("Has a dog named Rex"));
  const stats = (await b.stats()).sync;
  assert.ok(stats.syncs >= 1 && stats.received >= 1, JSON.stringify(stats));
  assert.equal(stats.lastError, undefined);

  await Promise.all([a.close(), b.close()]);
  const calls = [wireA.calls, wireB.calls];
  await pause(500); // five intervals: any exchange still scheduled would show
  assert.deepEqual([wireA.calls, wireB.calls], calls, "no exchange after close");
  for (const call of [() => a.remember({ content: "x" }), () => a.stats(), () => a.sync(wireA), () => b.memories()]) {
    await assert.rejects(call(), (e) => e.name === "AgentMemoryError" && e.code === "CLOSED");
  }
  assert.throws(() => a.messages(), (e) => e.code === "CLOSED");
  await a.close(); // idempotent
  for (const m of [a, b]) m.free();
  relay.free();
});

test("open does not wait for the network: a failing transport lands in stats().sync.lastError", { timeout: 30_000 }, async () => {
  let calls = 0;
  const transport = () => {
    calls += 1;
    return Promise.reject(new Error("offline"));
  };
  const m = await open({ sync: { transport } });
  await until(async () => (await m.stats()).sync?.lastError !== undefined);
  const { lastError } = (await m.stats()).sync;
  assert.match(lastError, /SYNC_TRANSPORT.*offline/);
  assert.equal(calls, 1, "one try, then the default interval (30 s) and its backoff");
  await m.close();
  m.free();
});

test("an online event on the global object syncs at once; close removes the listener", { timeout: 30_000 }, async () => {
  // Node has no `online` event: give the global object a browser's
  // addEventListener for this test.
  const target = new EventTarget();
  globalThis.addEventListener = target.addEventListener.bind(target);
  globalThis.removeEventListener = target.removeEventListener.bind(target);
  try {
    const relay = await am.SyncRelay.open({ store: mapAdapter(), namespace: "autosync-user" });
    const wire = counted(relay);
    const m = await open({ sync: { transport: wire, intervalMs: 86_400_000 } });
    await until(async () => (await m.stats()).sync?.syncs === 1);
    target.dispatchEvent(new Event("online"));
    await until(async () => (await m.stats()).sync.syncs === 2);
    await m.close();
    const calls = wire.calls;
    target.dispatchEvent(new Event("online"));
    await pause(100);
    assert.equal(wire.calls, calls, "the listener went with close");
    m.free();
    relay.free();
  } finally {
    delete globalThis.addEventListener;
    delete globalThis.removeEventListener;
  }
});

test("a called sync during a scheduled one waits for it: never two exchanges at once", { timeout: 30_000 }, async () => {
  const relay = await am.SyncRelay.open({ store: mapAdapter(), namespace: "autosync-user" });
  let busy = 0;
  let maxBusy = 0;
  const transport = async (request) => {
    busy += 1;
    maxBusy = Math.max(maxBusy, busy);
    await pause(30);
    busy -= 1;
    return relay.exchange(request);
  };
  const m = await open({ sync: { transport, intervalMs: 100 } });
  await m.remember({ content: "Works as a nurse" });
  const reports = await Promise.all([m.sync(transport), m.sync(transport), m.sync(transport)]);
  assert.equal(reports.length, 3);
  assert.equal(maxBusy, 1);
  await m.close();
  m.free();
  relay.free();
});

test("bad sync options are typed errors, and nothing opens", async () => {
  const transport = () => new Uint8Array();
  for (const sync of [
    "yes",
    [transport],
    {},
    { transport: "https://relay.example" },
    { transport, intervalMs: 0 },
    { transport, intervalMs: 1.5 },
    { transport, intervalMs: -1000 },
    { transport, intervalMs: "1000" },
    { transport, intervalMs: 99 },
    { transport, intervalMs: 86_400_001 },
    { transport, intervalMs: 1000, unknown: true },
  ]) {
    await assert.rejects(open({ sync }), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT", JSON.stringify(sync));
  }
});
