// Sync through the relay in real workerd: examples/cloudflare, installed from
// the packed tarball, under `wrangler dev`; its /sync route checks the
// user's token, then hands the frame to that user's SyncRelayObject. The
// devices are Memory instances in Node on stores of their own, syncing with
// httpTransport. Each device makes 200 changes offline (remember, supersede,
// undo, forget), some on memories the other changes too; both sync, the
// relay restarted in the middle of one sync; a third device joins late. What
// is checked, counted rather than assumed: every memory and history the same
// on every device, 0 lost, 0 duplicated, 0 resurrected; the relay's files on
// disk hold no plaintext with encryption on (and do without: the control).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserialize } from "node:v8";
import * as am from "../../pkg/node.js";
import { httpTransport } from "../../pkg/sync/http.js";
import { installExample, root } from "../../scripts/example.mjs";
import { seededRandom } from "../../scripts/random.mjs";
import { startWorker } from "../../scripts/wrangler.mjs";
import { mapAdapter } from "./map-adapter.mjs";

const WORDS = ("amber basil cedar dune ember fjord garnet harbor indigo juniper kelp lantern meadow nutmeg opal pepper quartz " +
  "raven saffron thistle umber violet willow yarrow zephyr anchor bramble copper dahlia falcon glacier hazel iris jasmine " +
  "kestrel lilac marble nettle orchid pebble quince russet sorrel tundra walnut").split(" ");

// Each tag's texts draw on words of its own: a device's remember never
// takes another device's text for an older version of its own (which would
// supersede it), so what each device did offline is what the sync must keep.
const VOCAB = { base: WORDS.slice(0, 15), laptop: WORDS.slice(15, 30), phone: WORDS.slice(30) };

/** A text no other text of the run says. */
const text = (rand, tag) => `${tag} ${Array.from({ length: 5 }, () => VOCAB[tag][Math.floor(rand() * VOCAB[tag].length)]).join(" ")} ${Math.floor(rand() * 1e9).toString(36)}`;

/** The export (every entry, history too, in id order; not its time), its entries by id, and the valid ones' ids. */
async function view(m) {
  const { exportedAt, ...doc } = await m.exportMemories(null);
  assert.ok(exportedAt > 0);
  doc.entries.sort((x, y) => (x.id < y.id ? -1 : 1));
  const entries = new Map(doc.entries.map((e) => [e.id, e]));
  return { doc, entries, valid: new Set((await m.memories(null)).map((e) => e.id)) };
}

/**
 * `n` changes made offline: remember, supersede, undo (of a supersede) and
 * forget, on the memories of `pool(valid)` (a forget: `forgetPool(valid)`).
 * Gives the entries a forget erased (id to text) and the texts written.
 */
async function offlineChanges(m, rand, tag, n, pool, forgetPool = pool) {
  const gone = new Map();
  const texts = [];
  const undoable = [];
  for (let i = 0; i < n; i++) {
    const valid = await m.memories(null);
    const mine = pool(valid);
    const r = rand();
    const pick = (list) => list[Math.floor(rand() * list.length)];
    if (r < 0.4 || mine.length === 0) {
      const content = text(rand, tag);
      texts.push(content);
      await m.remember({ content });
    } else if (r < 0.65) {
      const content = text(rand, tag);
      texts.push(content);
      undoable.push((await m.supersede({ content }, [pick(mine).id])).id);
    } else if (r < 0.8 && undoable.some((id) => valid.some((e) => e.id === id))) {
      const id = pick(undoable.filter((u) => valid.some((e) => e.id === u)));
      await m.undo(id);
    } else {
      const before = (await view(m)).entries;
      const some = forgetPool(valid);
      assert.equal(await m.forget(pick(some.length ? some : mine).id), true);
      const after = (await view(m)).entries;
      for (const [id, e] of before) if (!after.has(id)) gone.set(id, e.content);
    }
  }
  return { gone, texts };
}

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

test("the README's wrangler.toml lines for the relay are the example's", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = /```toml\n(\[\[durable_objects\.bindings\]\][^`]*SyncRelayObject[^`]*)```/.exec(readme);
  assert.ok(block, "the README gives the relay's binding and migration");
  const dedent = (text) => text.split("\n").map((l) => l.trim()).filter(Boolean).join("\n");
  const toml = dedent(readFileSync(join(root, "examples/cloudflare/wrangler.toml"), "utf8"));
  for (const table of block[1].split(/\n\s*\n/)) assert.ok(toml.includes(dedent(table)), table);
});

test("two devices, 200 offline changes each, converge through the relay in workerd: 0 lost, 0 duplicated, 0 resurrected; a restart mid-sync; a late device; no plaintext at the relay", { timeout: 600_000 }, async () => {
  const app = installExample("cloudflare");
  const persist = mkdtempSync(join(tmpdir(), "relay-"));
  const secret = randomBytes(16).toString("hex");
  const token = (user) => `${user}.${createHmac("sha256", secret).update(user).digest("hex")}`;
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
    for (const [body, status, code] of [[new Uint8Array([65, 77, 1, 1, 200]), 400, "INVALID_INPUT"], [new Uint8Array((1 << 20) + 1), 413, "LIMIT_EXCEEDED"]]) {
      const res = await fetch(url, { method: "POST", headers: auth, body });
      assert.deepEqual([res.status, (await res.json()).code], [status, code]);
    }

    // A shared start: A's memories, on B too.
    const [a, b] = [await device(), await device()];
    const rand = seededRandom(39);
    const base = [];
    for (let i = 0; i < 40; i++) base.push((await a.memory.remember({ content: text(rand, "base") })).entry.id);
    await a.memory.sync(transport("alice"));
    assert.equal(doFiles(), 2, "carol's requests and alice's sync made one relay object each");
    await b.memory.sync(transport("alice"));
    assert.deepEqual((await view(b.memory)).doc, (await view(a.memory)).doc);

    // Offline: A works on the even base memories and its own, B on the odd
    // ones and its own, and B also forgets some of A's (which A may have
    // superseded or restored meanwhile): the forget wins.
    const half = (parity) => (valid) => valid.filter((e) => !base.includes(e.id) || base.indexOf(e.id) % 2 === parity);
    const [randA, randB] = [seededRandom(1), seededRandom(2)];
    const changesA = await offlineChanges(a.memory, randA, "laptop", 200, (v) => half(0)(v).filter((e) => !e.content.startsWith("phone")));
    const phone = (v) => v.filter((e) => !e.content.startsWith("laptop"));
    const changesB = await offlineChanges(b.memory, randB, "phone", 200, (v) => phone(half(1)(v)), (v) => phone(randB() < 0.15 ? half(0)(v) : half(1)(v)));
    const [beforeA, beforeB] = [await view(a.memory), await view(b.memory)];
    const gone = new Set([...changesA.gone.keys(), ...changesB.gone.keys()]);
    assert.ok(changesA.gone.size > 10 && changesB.gone.size > 10, `forgets: ${changesA.gone.size}, ${changesB.gone.size}`);
    const forgottenTexts = [...changesA.gone.values(), ...changesB.gone.values()];

    // A syncs; B's sync is cut: the relay stops before its second exchange.
    await a.memory.sync(transport("alice"));
    requests = 0;
    stopBefore = 2;
    await assert.rejects(b.memory.sync(transport("alice")), (e) => e.code === "SYNC_TRANSPORT");
    stopBefore = 0;
    worker = await startWorker(app, persist, { SYNC_SECRET: secret }, worker.port);
    // After the restart, with the relay's state from disk, the sync resumes.
    const resumed = await b.memory.sync(transport("alice"));
    assert.ok(resumed.received > 0 && resumed.sent > 0, JSON.stringify(resumed));
    await a.memory.sync(transport("alice"));

    // The expected result: every entry either device held, less what a
    // forget erased; valid what each device holding it held valid (a device
    // that did not change a memory holds it as it was).
    const expectedIds = new Set([...beforeA.entries.keys(), ...beforeB.entries.keys()].filter((id) => !gone.has(id)));
    const expectedValid = new Set([...expectedIds].filter((id) => [beforeA, beforeB].every((v) => !v.entries.has(id) || v.valid.has(id))));
    const c = await device();
    await c.memory.sync(transport("alice"));
    const after = [await view(a.memory), await view(b.memory), await view(c.memory)];
    for (const [i, v] of after.entries()) {
      const name = "ABC"[i];
      const lost = [...expectedIds].filter((id) => !v.entries.has(id)).length + [...expectedValid].filter((id) => !v.valid.has(id)).length;
      const memories = await [a, b, c][i].memory.memories(null);
      const contents = memories.map((e) => e.content);
      const duplicated = memories.length - new Set(memories.map((e) => e.id)).size + contents.length - new Set(contents).size;
      const resurrected = [...gone].filter((id) => v.entries.has(id)).length +
        forgottenTexts.filter((t) => raw([a, b, c][i].store).includes(t)).length;
      assert.deepEqual({ lost, duplicated, resurrected }, { lost: 0, duplicated: 0, resurrected: 0 }, `device ${name}`);
      assert.equal(v.entries.size, expectedIds.size, `device ${name}: nothing more than expected`);
      assert.deepEqual(v.doc, after[0].doc, `device ${name} holds what A holds, histories included`);
    }
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
    const texts = [...changesA.texts, ...changesB.texts, ...[...beforeA.entries.values()].map((e) => e.content)];
    const seen = texts.filter((t) => held.includes(t) || disk.bytes.includes(t));
    assert.deepEqual(seen, [], "plaintext at the relay");
    for (const word of ["laptop", "phone", "base "]) assert.ok(!held.includes(word) && !disk.bytes.includes(word), word);
  } finally {
    await worker.stop();
  }
});
