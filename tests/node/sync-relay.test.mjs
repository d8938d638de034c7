// Sync through the relay in real workerd: examples/cloudflare, installed from
// the packed tarball, under `wrangler dev`; its /sync route checks the
// user's token, then hands the frame to that user's SyncRelayObject. The
// devices are Memory instances in Node on stores of their own, and two
// Chromium profiles on IndexedDB (tests/browser/sync.html), syncing with
// httpTransport. Each device makes 200 changes offline (remember,
// supersede, undo, forget: tests/browser/sync-work.mjs), some on memories
// the other changes too, and session messages and a deleteSession (synced
// with { sessions: true }); both sync, in Node with the relay restarted in
// the middle of one sync, and a third device joins late. Counted rather than
// assumed: every memory and history the same on every device, 0 lost, 0
// duplicated, 0 resurrected; the relay's files on disk hold no plaintext
// with encryption on (and do without: the control). And examples/vite,
// built from the tarball, as two devices syncing from its own origin.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserialize, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as am from "../../pkg/node.js";
import { httpTransport } from "../../pkg/sync/http.js";
import { syncRelayRoute } from "../../pkg/sync/route.js";
import { boundedBody } from "../../pkg/sync/body.js";
import { installExample, root } from "../../scripts/example.mjs";
import { startWorker } from "../../scripts/wrangler.mjs";
import { launchChromium, launchChromiumIn } from "../../scripts/chromium.mjs";
import { startServer } from "../../scripts/static-server.mjs";
import { mapAdapter } from "./map-adapter.mjs";
import { offlineChanges, remembered, view } from "../browser/sync-work.mjs";

/**
 * What every device should hold after syncing, from each device's view
 * before: every entry one held, less what a forget erased (`gone`); valid
 * those valid on each device holding them (a device that did not change a
 * memory holds it as it was).
 */
function expectation(befores, gone) {
  const ids = new Set(befores.flatMap((v) => [...v.entries.keys()]).filter((id) => !gone.has(id)));
  const valid = new Set([...ids].filter((id) => befores.every((v) => !v.entries.has(id) || v.valid.has(id))));
  return { ids, valid, gone };
}

/** Counted against the expectation: lost (entries missing, or expired that should be valid), duplicated, resurrected. */
function tally(expected, v) {
  const lost = [...expected.ids].filter((id) => !v.entries.has(id)).length + [...expected.valid].filter((id) => !v.valid.has(id)).length;
  const valid = v.doc.entries.filter((e) => v.valid.has(e.id));
  const duplicated = v.doc.entries.length - v.entries.size + valid.length - new Set(valid.map((e) => e.content)).size;
  const resurrected = [...expected.gone].filter((id) => v.entries.has(id)).length;
  // More than expected, and nothing forgotten: a duplicate under another id.
  return { lost, duplicated: duplicated + Math.max(0, v.entries.size - expected.ids.size - resurrected), resurrected };
}

// The example installed from the packed tarball once, for every test here.
let installed;
const example = () => (installed ??= installExample("cloudflare"));
// The relay's token check (examples/cloudflare): the user id and its HMAC under SYNC_SECRET.
const secret = randomBytes(16).toString("hex");
const token = (user) => `${user}.${createHmac("sha256", secret).update(user).digest("hex")}`;

/** Each device's store's raw values, base64 ones decoded too. */
const raw = (store) => [...store.map.values()].flatMap((v) => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return [s, Buffer.from(s, "base64").toString("latin1")];
}).join("\n");

/** Every file under `dir`. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The SQLite files of the relay's Durable Objects (one per user's object), as wrangler keeps them. */
const relayObjects = (persist) => filesUnder(persist).filter((f) => f.includes("SyncRelayObject") && /[0-9a-f]{16,}\.sqlite$/.test(f));

// Wrangler's SQLite files keep recent writes in their write-ahead log,
// which the wasm SQLite of node-sqlite3-wasm cannot read: Python's sqlite3
// reads them (read-only), giving each value's bytes as hex. An object that
// never stored anything has no table.
const DUMP = `import json, sqlite3, sys
out = []
for f in sys.argv[1:]:
    db = sqlite3.connect("file:" + f + "?mode=ro", uri=True)
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = '_cf_KV'").fetchone():
        out += [[k, v.hex()] for k, v in db.execute("SELECT key, value FROM _cf_KV")]
print(json.dumps(out))`;

/** Every value the relay's objects keep on disk (V8-serialized: decoded), base64 ones decoded too; and every byte under `persist`. */
function relayDisk(persist) {
  const rows = JSON.parse(execFileSync("python3", ["-c", DUMP, ...relayObjects(persist)], { encoding: "utf8" }));
  const values = rows.map(([key, hex]) => {
    const value = String(deserialize(Buffer.from(hex, "hex")));
    return { key, value, decoded: Buffer.from(value, "base64").toString("latin1") };
  });
  // Every byte of every file too (the logs, other tables), as it lies there.
  const bytes = filesUnder(persist).map((f) => readFileSync(f).toString("latin1")).join("\n");
  return { values, bytes };
}

test("httpTransport posts each frame to its URL with the fetch and headers given (a function: before each request); bad options are typed errors", async () => {
  const relay = await am.SyncRelay.open({ store: mapAdapter(), namespace: "t" });
  const seen = [];
  let calls = 0;
  const fetchFn = async (input, init) => {
    seen.push({ input, method: init.method, headers: init.headers });
    if (init.headers.authorization === "Bearer stale") return new Response("expired", { status: 401 });
    return new Response(await relay.exchange(new Uint8Array(await new Response(init.body).arrayBuffer())));
  };
  const m = await am.Memory.open({ namespace: "t", sessionId: "s", store: mapAdapter() });
  await m.remember({ content: "Plays chess on Sundays" });
  const report = await m.sync(httpTransport("https://relay.test/sync", { fetch: fetchFn, headers: () => ({ Authorization: `Bearer t${++calls}` }) }));
  assert.equal(report.sent, 1);
  assert.equal(seen.length, report.rounds);
  assert.deepEqual(seen.map((s) => [s.input, s.method, s.headers.authorization, s.headers["content-type"]]),
    seen.map((_, i) => ["https://relay.test/sync", "POST", `Bearer t${i + 1}`, "application/octet-stream"]));
  await assert.rejects(m.sync(httpTransport("https://relay.test/sync", { fetch: fetchFn, headers: { authorization: "Bearer stale" } })),
    (e) => e.code === "SYNC_TRANSPORT" && /401: expired/.test(e.message));
  for (const [url, options] of [["/sync", { header: {} }], [42, {}], ["/sync", { fetch: "no" }], ["/sync", { headers: 5 }]]) {
    assert.throws(() => httpTransport(url, options), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT", JSON.stringify(options));
  }
  m.free();
  relay.free();
});

test("the relay reads a request's body within the limit: the bytes whole below it; past it, declared or streamed, the rest read to its end and none of it kept", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const limit = am.SyncRelay.maxRequestBytes();
  assert.equal(limit, 1 << 20);
  // A stream of `n` bytes in fresh chunks of `size`, counting what was pulled.
  const source = (n, size = 64 << 10) => {
    const s = { pulled: 0 };
    s.stream = new ReadableStream({
      pull(c) {
        const chunk = Math.min(n - s.pulled, size);
        s.pulled += chunk;
        if (chunk) c.enqueue(new Uint8Array(chunk).fill(s.pulled % 251));
        else c.close();
      },
    });
    return s;
  };
  const post = (body, headers = {}) => new Request("https://relay.test/sync", { method: "POST", body, headers, duplex: "half" });
  const small = source(200_000, 7_000);
  const bytes = await boundedBody(post(small.stream), limit);
  const again = source(200_000, 7_000);
  assert.deepEqual(Buffer.from(bytes), Buffer.from(await new Response(again.stream).arrayBuffer()), "the chunks whole and in order");
  assert.equal((await boundedBody(post(source(limit, 100_000).stream), limit)).length, limit);
  assert.equal((await boundedBody(new Request("https://relay.test/sync"), limit)).length, 0, "no body: empty");
  for (const declared of [false, true]) {
    const big = source(256 << 20, 1 << 20);
    gc();
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const watched = big.stream.pipeThrough(new TransformStream({
      transform(chunk, c) {
        if (big.pulled % (16 << 20) === 0) {
          gc();
          peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
        }
        c.enqueue(chunk);
      },
    }));
    const body = await boundedBody(post(watched, declared ? { "content-length": String(256 << 20) } : {}), limit);
    assert.equal(body, undefined);
    assert.equal(big.pulled, 256 << 20, "the body is read to its end");
    assert.ok(peak < 64 << 20, `${peak >> 20} MiB held while 256 MiB went past (declared: ${declared})`);
  }
});

test("syncRelayRoute: authorize first, nothing reached on a refusal, the user's own object otherwise; bad options and answers are typed errors", async () => {
  const reached = [];
  const env = { SYNC_RELAY: { idFromName: (name) => ({ name }), get: (id) => ({ fetch: async () => { reached.push(id.name); return new Response("frame"); } }) } };
  const route = syncRelayRoute({ binding: "SYNC_RELAY", authorize: async (request) => ({ a: "alice", n: null, f: false, u: undefined, x: 42 })[request.headers.get("x-user")] });
  const ask = (user) => route(new Request("https://w.test/sync", { method: "POST", headers: { "x-user": user } }), env);
  for (const refused of ["n", "f", "u"]) assert.equal((await ask(refused)).status, 401);
  assert.deepEqual(reached, [], "a refused request reached an object");
  assert.equal(await (await ask("a")).text(), "frame");
  assert.deepEqual(reached, ["alice"]);
  await assert.rejects(ask("x"), (e) => e.code === "INVALID_INPUT");
  await assert.rejects(syncRelayRoute({ binding: "OTHER", authorize: () => "alice" })(new Request("https://w.test/sync"), env), (e) => e.code === "INVALID_INPUT" && /OTHER/.test(e.message));
  for (const options of [undefined, { binding: "SYNC_RELAY" }, { authorize: () => "a" }, { binding: "SYNC_RELAY", authorize: () => "a", authorise: 1 }]) {
    assert.throws(() => syncRelayRoute(options), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT", JSON.stringify(options));
  }
});

test("syncRelayRoute cors: a listed origin's preflight and answers carry its headers; another origin is a 403 before authorize; same-origin and originless requests pass as without cors", async () => {
  const reached = [];
  const asked = [];
  const env = { SYNC_RELAY: { idFromName: (name) => ({ name }), get: (id) => ({ fetch: async () => { reached.push(id.name); return new Response("frame", { headers: { "content-type": "application/octet-stream" } }); } }) } };
  const authorize = (request) => {
    asked.push(request.method);
    return request.headers.get("authorization") === "Bearer ok" ? "alice" : null;
  };
  const app = "http://localhost:5173";
  const ask = (route, method, headers) => route(new Request("https://relay.test/sync", { method, headers, ...(method === "POST" && { body: "x" }) }), env);
  for (const cors of [{ origins: [app] }, { origins: (origin, e) => e === env && origin === app }, { origins: async (origin) => origin === app }]) {
    reached.length = asked.length = 0;
    const route = syncRelayRoute({ binding: "SYNC_RELAY", authorize, cors });
    const pre = await ask(route, "OPTIONS", { origin: app, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), app);
    assert.equal(pre.headers.get("access-control-allow-methods"), "POST");
    assert.deepEqual(pre.headers.get("access-control-allow-headers").split(/,\s*/).sort(), ["authorization", "content-type"]);
    assert.match(pre.headers.get("vary"), /origin/i);
    assert.deepEqual([asked, reached], [[], []], "a preflight runs no authorize and reaches no object");
    const ok = await ask(route, "POST", { origin: app, authorization: "Bearer ok" });
    assert.deepEqual([ok.status, await ok.text(), ok.headers.get("access-control-allow-origin"), ok.headers.get("content-type")], [200, "frame", app, "application/octet-stream"]);
    // A refusal the page can read: CORS headers on the 401 too.
    const no = await ask(route, "POST", { origin: app });
    assert.deepEqual([no.status, no.headers.get("access-control-allow-origin")], [401, app]);
    for (const method of ["OPTIONS", "POST"]) {
      const other = await ask(route, method, { origin: "https://evil.test", authorization: "Bearer ok" });
      assert.deepEqual([other.status, other.headers.get("access-control-allow-origin")], [403, null], method);
      assert.match((await other.json()).error, /evil\.test/);
    }
    assert.deepEqual(asked, ["POST", "POST"], "another origin ran authorize");
    // The relay's own pages and devices that are no page: as without cors.
    for (const headers of [{ origin: "https://relay.test", authorization: "Bearer ok" }, { authorization: "Bearer ok" }]) {
      const res = await ask(route, "POST", headers);
      assert.deepEqual([res.status, res.headers.get("access-control-allow-origin")], [200, null], JSON.stringify(headers));
    }
    assert.deepEqual(reached, ["alice", "alice", "alice"]);
  }
  // Without cors, no CORS headers at all.
  const plain = await ask(syncRelayRoute({ binding: "SYNC_RELAY", authorize }), "POST", { origin: app, authorization: "Bearer ok" });
  assert.deepEqual([plain.status, plain.headers.get("access-control-allow-origin")], [200, null]);
  for (const cors of [null, 1, {}, { origins: "http://a.test" }, { origins: ["http://a.test/"] }, { origins: ["a.test"] }, { origins: [1] }, { origins: [app], credentials: true }]) {
    assert.throws(() => syncRelayRoute({ binding: "SYNC_RELAY", authorize, cors }), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT", JSON.stringify(cors));
  }
});

test("the README's wrangler.toml lines for the relay are the example's", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = /```toml\n(\[\[durable_objects\.bindings\]\][^`]*SyncRelayObject[^`]*)```/.exec(readme);
  assert.ok(block, "the README gives the relay's binding and migration");
  const dedent = (text) => text.split("\n").map((l) => l.trim()).filter(Boolean).join("\n");
  const toml = dedent(readFileSync(join(root, "examples/cloudflare/wrangler.toml"), "utf8"));
  for (const table of block[1].split(/\n\s*\n/)) assert.ok(toml.includes(dedent(table)), table);
});

test("two devices, 200 offline changes each, converge through the relay in workerd: 0 lost, 0 duplicated, 0 resurrected; a restart mid-sync; a late device; no plaintext at the relay", { timeout: 600_000 }, async () => {
  const app = example();
  const persist = mkdtempSync(join(tmpdir(), "relay-"));
  let worker = await startWorker(app, persist, { SYNC_SECRET: secret });
  const url = `${worker.url}/sync`;
  // The fetch every device uses: it can stop the relay just before a chosen request.
  let stopBefore = 0;
  let requests = 0;
  const fetchVia = async (input, init) => {
    if (++requests === stopBefore) await worker.stop();
    return fetch(input, init);
  };
  const transport = (user) => httpTransport(url, { headers: () => ({ authorization: `Bearer ${token(user)}` }), fetch: fetchVia });
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const device = async (namespace = "alice", encryption = { key }) => {
    const store = mapAdapter();
    return { store, memory: await am.Memory.open({ namespace, sessionId: "chat", store, ...(encryption && { encryption }) }) };
  };
  // Sessions travel too: the chat, and an older one B deletes offline.
  const S = { sessions: true };
  const said = async (m) => (await m.sessionHistory()).map((e) => e.content);
  const oldOf = (d) => am.Memory.open({ namespace: "alice", sessionId: "old", store: d.store, encryption: { key } });
  try {
    // The host's check: no token, a forged one, a GET: refused before any object.
    const refused = await device();
    const doFiles = () => relayObjects(persist).length;
    for (const headers of [{}, { authorization: `Bearer alice.${"0".repeat(64)}` }, { authorization: `Bearer ${token("alice")}x` }]) {
      await assert.rejects(refused.memory.sync(httpTransport(url, { headers })), (e) => e.code === "SYNC_TRANSPORT" && /401/.test(e.message), JSON.stringify(headers));
    }
    assert.equal(doFiles(), 0, "a refused request reached a relay object");
    // Past the check: a GET, a malformed frame, an oversized one, as HTTP statuses with the error's code.
    const auth = { authorization: `Bearer ${token("carol")}` };
    assert.equal((await fetch(url, { headers: auth })).status, 405);
    // Oversized ones, declared or streamed with no length, are drained and
    // refused: each a 413, and the next request served (answering before
    // the body is read makes workerd cut the connection).
    const limit = am.SyncRelay.maxRequestBytes();
    const streamed = (n) => new ReadableStream({
      pull(c) {
        const chunk = Math.min(n, 64 << 10);
        n -= chunk;
        if (chunk) c.enqueue(new Uint8Array(chunk));
        else c.close();
      },
    });
    const cases = [
      [() => new Uint8Array([65, 77, 1, 1, 200]), 400, "INVALID_INPUT"],
      [() => new Uint8Array(limit), 400, "INVALID_INPUT"],
      [() => new Uint8Array(limit + 1), 413, "LIMIT_EXCEEDED"],
      [() => new Uint8Array(32 << 20), 413, "LIMIT_EXCEEDED"],
      [() => streamed(limit + 1), 413, "LIMIT_EXCEEDED"],
      [() => streamed(8 << 20), 413, "LIMIT_EXCEEDED"],
      [() => streamed(100), 400, "INVALID_INPUT"],
    ];
    for (const [body, status, code] of [...cases, ...cases]) {
      const res = await fetch(url, { method: "POST", headers: auth, body: body(), duplex: "half" });
      assert.deepEqual([res.status, (await res.json()).code], [status, code]);
    }

    // A shared start: A's memories, on B too.
    const [a, b] = [await device(), await device()];
    const base = await remembered(a.memory, 39, 40);
    for (const content of ["base chat 1", "base chat 2", "base chat 3"]) await a.memory.add({ content });
    const oldA = await oldOf(a);
    for (const content of ["older chat 1", "older chat 2"]) await oldA.add({ content });
    await a.memory.sync(transport("alice"), S);
    assert.equal(doFiles(), 2, "carol's requests and alice's sync made one relay object each");
    await b.memory.sync(transport("alice"), S);
    assert.deepEqual((await view(b.memory)).doc, (await view(a.memory)).doc);
    const oldB = await oldOf(b);
    assert.deepEqual(await said(oldB), ["older chat 1", "older chat 2"]);

    // Offline: A works on the even base memories and its own, B on the odd
    // ones and its own, and B also forgets some of A's (which A may have
    // superseded or restored meanwhile): the forget wins.
    const changesA = await offlineChanges(a.memory, { seed: 1, tag: "laptop", n: 200, base, parity: 0 });
    const changesB = await offlineChanges(b.memory, { seed: 2, tag: "phone", n: 200, base, parity: 1, cross: 0.15 });
    const [beforeA, beforeB] = [await view(a.memory), await view(b.memory)];
    const gone = new Set([...changesA.gone, ...changesB.gone].map(([id]) => id));
    assert.ok(changesA.gone.length > 10 && changesB.gone.length > 10, `forgets: ${changesA.gone.length}, ${changesB.gone.length}`);
    const forgottenTexts = [...changesA.gone, ...changesB.gone].map(([, t]) => t);
    const chat = ["base chat 1", "base chat 2", "base chat 3"];
    for (let i = 0; i < 20; i++) {
      for (const [d, tag] of [[a, "laptop"], [b, "phone"]]) {
        chat.push(`${tag} chat ${i}`);
        await d.memory.add({ content: `${tag} chat ${i}` });
      }
    }
    await b.memory.deleteSession("old");

    // A syncs; B's sync is cut: the relay stops before its second exchange.
    await a.memory.sync(transport("alice"), S);
    requests = 0;
    stopBefore = 2;
    await assert.rejects(b.memory.sync(transport("alice"), S), (e) => e.code === "SYNC_TRANSPORT");
    stopBefore = 0;
    worker = await startWorker(app, persist, { SYNC_SECRET: secret }, worker.port);
    // After the restart, with the relay's state from disk, the sync resumes.
    const resumed = await b.memory.sync(transport("alice"), S);
    assert.ok(resumed.received > 0 && resumed.sent > 0, JSON.stringify(resumed));
    await a.memory.sync(transport("alice"), S);

    const c = await device();
    await c.memory.sync(transport("alice"), S);
    // Session messages: every one on every device, once, in one order; the deleted session nowhere.
    const chats = [await said(a.memory), await said(b.memory), await said(c.memory)];
    for (const [i, held] of chats.entries()) {
      const lost = chat.filter((t) => !held.includes(t)).length;
      const duplicated = held.length - new Set(held).size;
      const old = await oldOf([a, b, c][i]);
      const resurrected = (await said(old)).length;
      old.free();
      assert.deepEqual({ lost, duplicated, resurrected }, { lost: 0, duplicated: 0, resurrected: 0 }, `device ${"ABC"[i]}'s sessions`);
      assert.deepEqual(held, chats[0], `device ${"ABC"[i]} holds A's chat in A's order`);
    }
    assert.deepEqual(await said(oldA), [], "the deleted session on the instance that held it open");
    const after = [await view(a.memory), await view(b.memory), await view(c.memory)];
    const expected = expectation([beforeA, beforeB], gone);
    for (const [i, v] of after.entries()) {
      const { lost, duplicated, resurrected } = tally(expected, v);
      const left = forgottenTexts.filter((t) => raw([a, b, c][i].store).includes(t)).length;
      assert.deepEqual({ lost, duplicated, resurrected, left }, { lost: 0, duplicated: 0, resurrected: 0, left: 0 }, `device ${"ABC"[i]}`);
      assert.deepEqual(v.doc, after[0].doc, `device ${"ABC"[i]} holds what A holds, histories included`);
    }
    const expectedValid = expected.valid;
    assert.ok(expectedValid.size > 100 && gone.size > 20, `${expectedValid.size} valid, ${gone.size} forgotten`);

    // Without encryption the relay's files show a text (the control), with
    // it none: not a memory's text, not a forgotten one.
    const plain = await device("bob", null);
    await plain.memory.remember({ content: "bob keeps a plaintext marker" });
    await plain.memory.sync(transport("bob"));
    await worker.stop();
    const disk = relayDisk(persist);
    const held = disk.values.map((v) => `${v.value}\n${v.decoded}`).join("\n");
    assert.ok(disk.values.filter((v) => v.key.includes("sync/item/")).length > 400, `${disk.values.length} values at the relay`);
    assert.ok(held.includes("bob keeps a plaintext marker"), "the disk reader sees a plain operation");
    const texts = [...changesA.texts, ...changesB.texts, ...[...beforeA.entries.values()].map((e) => e.content), ...chat, "older chat 1"];
    const seen = texts.filter((t) => held.includes(t) || disk.bytes.includes(t));
    assert.deepEqual(seen, [], "plaintext at the relay");
    for (const word of ["laptop", "phone", "base "]) assert.ok(!held.includes(word) && !disk.bytes.includes(word), word);
  } finally {
    await worker.stop();
  }
});

test("past the relay's horizon in workerd: the relay and each device drop the tombstones, and a device away longer drops the forgotten memory, keeps what it wrote offline, and brings nothing back", { timeout: 300_000 }, async () => {
  const persist = mkdtempSync(join(tmpdir(), "relay-"));
  const worker = await startWorker(example(), persist, { SYNC_SECRET: secret, SYNC_HORIZON_MS: "2000" });
  try {
    const transport = httpTransport(`${worker.url}/sync`, { headers: { authorization: `Bearer ${token("dora")}` } });
    const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    const device = async () => {
      const store = mapAdapter();
      return { store, memory: await am.Memory.open({ namespace: "dora", sessionId: "chat", store, encryption: { key } }) };
    };
    const [a, b] = [await device(), await device()];
    const dog = await a.memory.remember({ content: "Has a dog named Rex" });
    await a.memory.remember({ content: "Works as a nurse" });
    await a.memory.add({ content: "Booked the Lisbon flight" });
    for (const d of [a, b]) await d.memory.sync(transport, { sessions: true });
    // B goes away. A forgets the dog and deletes its chat; past the horizon
    // the relay drops the tombstones, and A its own at its next sync.
    await a.memory.forget(dog.entry.id);
    await a.memory.clearSession();
    await a.memory.sync(transport, { sessions: true });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const dropped = await a.memory.sync(transport, { sessions: true });
    assert.ok(dropped.dropped >= 3, JSON.stringify(dropped));
    // B comes back with something written offline.
    await b.memory.remember({ content: "Runs on Sundays" });
    const back = await b.memory.sync(transport, { sessions: true });
    assert.ok(back.dropped >= 2 && back.sent >= 1, JSON.stringify(back));
    await a.memory.sync(transport, { sessions: true });
    const c = await device();
    await c.memory.sync(transport, { sessions: true });
    for (const d of [a, b, c]) {
      assert.deepEqual((await d.memory.memories()).map((e) => e.content).sort(), ["Runs on Sundays", "Works as a nurse"]);
      assert.deepEqual(await d.memory.sessionHistory(), []);
      assert.ok(!/Rex|Lisbon flight/.test(raw(d.store)), "a forgotten text in a device's store");
    }
    await worker.stop();
    const disk = relayDisk(persist);
    assert.deepEqual(disk.values.filter((v) => v.key.includes("sync/born/")).map((v) => v.key), [], "tombstones left at the relay");
    assert.ok(disk.values.filter((v) => v.key.includes("sync/item/")).length >= 2, `${disk.values.length} values at the relay`);
  } finally {
    await worker.stop();
  }
});

test("two Chromium profiles as two devices: 200 offline changes and 20 messages each on IndexedDB and a deleted session, synced through the relay in workerd, the same memories, histories and chat, kept across a reload", { timeout: 600_000 }, async () => {
  const app = example();
  // The pages come from another origin than the Worker's, which lets it in
  // (SYNC_ORIGINS): the browser's own CORS checks, preflights included.
  const { server, url: origin } = await startServer(root, 0);
  const worker = await startWorker(app, mkdtempSync(join(tmpdir(), "relay-")), { SYNC_SECRET: secret, SYNC_ORIGINS: new URL(origin).origin });
  const key = randomBytes(32).toString("hex");
  const contexts = [];
  try {
    const pages = [];
    for (let i = 0; i < 2; i++) {
      const context = await launchChromiumIn(mkdtempSync(join(tmpdir(), "profile-")));
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${origin}tests/browser/sync.html?key=${key}&relay=${encodeURIComponent(`${worker.url}/sync`)}`);
      await page.waitForFunction(() => window.device !== undefined, null, { timeout: 60_000 });
      await page.evaluate((t) => { window.token = t; }, token("dana"));
      pages.push(page);
    }
    const [pa, pb] = pages;
    const sync = async (page) => {
      const report = await page.evaluate(() => window.device.sync());
      assert.equal(report.code, undefined, report.message);
      return report;
    };
    const viewOf = async (page) => {
      const { doc, valid } = await page.evaluate(() => window.device.view());
      return { doc, entries: new Map(doc.entries.map((e) => [e.id, e])), valid: new Set(valid) };
    };
    const base = await pa.evaluate(() => window.device.remembered(7, 30));
    const chat = ["base chat 1", "base chat 2", "base chat 3"];
    await pa.evaluate((c) => window.device.add(c), chat);
    await pa.evaluate(() => window.device.add(["older chat 1", "older chat 2"], "old"));
    await sync(pa);
    await sync(pb);
    assert.deepEqual((await viewOf(pb)).doc, (await viewOf(pa)).doc);
    assert.deepEqual(await pb.evaluate(() => window.device.said("old")), ["older chat 1", "older chat 2"]);

    // Offline: the relay cannot be reached; each profile changes its memory.
    for (const context of contexts) await context.setOffline(true);
    const offline = await pa.evaluate(() => window.device.sync());
    assert.equal(offline.code, "SYNC_TRANSPORT", offline.message);
    const changes = [
      await pa.evaluate((o) => window.device.offlineChanges(o), { seed: 11, tag: "laptop", n: 200, base, parity: 0 }),
      await pb.evaluate((o) => window.device.offlineChanges(o), { seed: 12, tag: "phone", n: 200, base, parity: 1, cross: 0.15 }),
    ];
    const befores = [await viewOf(pa), await viewOf(pb)];
    const gone = new Set(changes.flatMap((c) => c.gone.map(([id]) => id)));
    assert.ok(gone.size > 20, `${gone.size} forgotten`);
    // Both go on with the chat offline, and the phone deletes the older session.
    for (let i = 0; i < 20; i++) {
      for (const [page, tag] of [[pa, "laptop"], [pb, "phone"]]) {
        chat.push(`${tag} chat ${i}`);
        await page.evaluate((c) => window.device.add(c), [`${tag} chat ${i}`]);
      }
    }
    await pb.evaluate(() => window.device.deleteSession("old"));

    for (const context of contexts) await context.setOffline(false);
    await sync(pa);
    assert.ok((await sync(pb)).received > 0);
    await sync(pa);
    const expected = expectation(befores, gone);
    await pb.reload();
    await pb.waitForFunction(() => window.device !== undefined, null, { timeout: 60_000 });
    const after = [await viewOf(pa), await viewOf(pb)];
    for (const [i, v] of after.entries()) {
      assert.deepEqual(tally(expected, v), { lost: 0, duplicated: 0, resurrected: 0 }, `profile ${i}`);
      assert.deepEqual(v.doc, after[0].doc, "both profiles hold the same, histories included (the second after a reload)");
    }
    assert.ok(expected.valid.size > 100, `${expected.valid.size} valid`);
    // The chat: every message on both profiles, once, in one order; the deleted session on neither.
    const chats = [await pa.evaluate(() => window.device.said()), await pb.evaluate(() => window.device.said())];
    for (const [i, held] of chats.entries()) {
      const lost = chat.filter((t) => !held.includes(t)).length;
      const duplicated = held.length - new Set(held).size;
      const resurrected = (await pages[i].evaluate(() => window.device.said("old"))).length;
      assert.deepEqual({ lost, duplicated, resurrected }, { lost: 0, duplicated: 0, resurrected: 0 }, `profile ${i}'s sessions`);
      assert.deepEqual(held, chats[0], `profile ${i} holds the chat in one order`);
    }
  } finally {
    for (const context of contexts) await context.close();
    server.close();
    await worker.stop();
  }
});

test("examples/vite built from the tarball syncs through examples/cloudflare's relay from another origin: two browser contexts, one user's chat and memories on both", { timeout: 600_000 }, async () => {
  const relayApp = example();
  const vite = installExample("vite");
  execFileSync(join(root, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], { cwd: vite });
  const { server, url } = await startServer(join(vite, "dist"), 0);
  const worker = await startWorker(relayApp, mkdtempSync(join(tmpdir(), "relay-")), { SYNC_SECRET: secret, SYNC_ORIGINS: new URL(url).origin });
  const browser = await launchChromium();
  try {
    const device = async (user = "erin") => {
      const page = await (await browser.newContext()).newPage();
      const errors = [];
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await page.goto(`${url}?relay=${encodeURIComponent(`${worker.url}/sync`)}&token=${token(user)}`);
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
      return { page, errors, result: () => page.evaluate(() => window.__result) };
    };
    const send = async (d, text) => {
      await d.page.fill("#message", text);
      await d.page.click("#chat button");
      await d.page.waitForFunction((t) => window.__result.said?.includes(t) && !document.getElementById("message").value, text, { timeout: 30_000 });
      return d.result();
    };
    const q = "Which language should I use for firmware?";
    const laptop = await device();
    const first = await laptop.result();
    assert.equal(first.error, undefined, first.error);
    assert.deepEqual([first.remembered, first.received, first.said, first.recalled], ["stored", 0, [q], "Prefers Rust for systems code"]);
    assert.ok(first.sent >= 2, `sent ${first.sent}`);
    assert.ok((await send(laptop, "My dog is called Rex")).sent >= 1);

    // The phone: another profile's storage, so nothing but what it syncs.
    const phone = await device();
    const second = await phone.result();
    assert.equal(second.error, undefined, second.error);
    assert.ok(second.received >= 3, `received ${second.received}`);
    assert.equal(second.remembered, "duplicate", "the laptop's fact arrived before the phone remembered it again");
    assert.deepEqual(second.said, [q, "My dog is called Rex", q]);
    assert.equal(second.recalled, "Prefers Rust for systems code");
    const reply = await send(phone, "And a cat called Tom");
    assert.deepEqual(reply.said, [q, "My dog is called Rex", q, "And a cat called Tom"]);
    // The laptop's next message brings the phone's.
    const back = await send(laptop, "Both are two years old");
    assert.ok(back.received >= 2, `received ${back.received}`);
    assert.deepEqual(back.said, [...reply.said, "Both are two years old"]);
    assert.deepEqual([...laptop.errors, ...phone.errors], []);

    // Another user's token reaches another relay object: nothing of erin's.
    const stranger = await (await device("frank")).result();
    assert.deepEqual([stranger.error, stranger.received, stranger.said], [undefined, 0, [q]]);
  } finally {
    await browser.close();
    server.close();
    await worker.stop();
  }
});
