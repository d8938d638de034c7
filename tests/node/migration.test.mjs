// A namespace written by the previous release (commit 4e93174, long-term
// memory as records rewritten in place) opens on the long-term log: every
// memory, version, judged message, session message and vector is kept, and
// the earlier release's records are gone. The fixtures were written through
// that release's public API (tests/fixtures/release-2026-12-02/README.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const fixture = (name) =>
  JSON.parse(readFileSync(new URL(`../fixtures/release-2026-12-02/${name}.json`, import.meta.url), "utf8"));

// The fixtures' embedder, the same function (README.md).
const EMBED_MODEL = "fixture-hash-8";
function fakeEmbedding(text) {
  const v = new Array(8).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0x811c9dc5;
    for (const c of word) h = Math.imul(h ^ c.codePointAt(0), 0x01000193) >>> 0;
    v[h % 8] += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

const LEGACY = ["lt/entry/", "lt/processed/", "lt/snap/", "lt/meta/generation", "lt/meta/journal"];

// A judged message's mark lasts 7 days from its session end: the clock runs
// from a minute after the fixture was written, as for a user who upgrades
// within the week (later, the marks have lapsed and the messages would be
// judged again, in either release).
function clockFrom(at) {
  const realNow = Date.now;
  const offset = at - realNow();
  Date.now = () => realNow() + offset;
  return () => {
    Date.now = realNow;
  };
}

async function upgrade(t, name, encrypted) {
  const f = fixture(name);
  t.after(clockFrom(f.expected.generatedAt + 60_000));
  const adapter = mapAdapter(new Map(Object.entries(f.store)));
  const encryption = encrypted
    ? {
        key: await crypto.subtle.importKey("raw", Buffer.from(f.keyBase64, "base64"), { name: "AES-GCM" }, false, [
          "encrypt",
          "decrypt",
        ]),
      }
    : undefined;
  const embedded = [];
  const embed = async (texts) => {
    embedded.push(...texts);
    return texts.map(fakeEmbedding);
  };
  const open = () =>
    am.Memory.open({
      namespace: f.namespace,
      sessionId: f.expected.sessionId,
      store: adapter,
      embed,
      embedModel: EMBED_MODEL,
      ...(encryption ? { encryption } : {}),
    });
  return { f, adapter, open, embedded };
}

const rawKeys = (adapter, ns, prefix) => [...adapter.map.keys()].filter((k) => k.startsWith(`${ns}/${prefix}`));

/** What the fixture's release read, read by this one. */
async function assertSameState(m, expected) {
  assert.deepEqual(await m.memories(), expected.memories, "the current memories");
  const superseded = await m.history(expected.superseded.id);
  assert.deepEqual(superseded, expected.superseded.history, "the superseded memory's versions");
  assert.deepEqual(superseded.map((e) => e.content), ["Lives in Lisbon", "Lives in Porto"]);
  assert.equal(superseded[0].supersededBy, superseded[1].id);
  const undone = await m.history(expected.undone.id);
  assert.deepEqual(undone, expected.undone.history, "an undone supersede's versions");
  assert.deepEqual(
    (await m.memories()).filter((e) => e.content.startsWith("Works as")).map((e) => e.content),
    ["Works as a nurse at the city hospital"],
  );
  assert.equal((await m.exportMemories(null)).entries.length, expected.exportCount, "every version exported");
  assert.deepEqual(await m.sessionHistory(), expected.sessionHistory, "the session's messages");
  const stats = await m.stats();
  assert.equal(stats.processedHashes, expected.processedHashes, "the judged messages");
  assert.deepEqual(
    { total: stats.total, valid: stats.valid, superseded: stats.superseded },
    expected.stats,
  );
  assert.deepEqual(stats.damaged, []);
  assert.ok(!(await m.memories()).some((e) => e.content === expected.forgotten.content));
  assert.deepEqual(await m.history(expected.forgotten.id), [], "the forgotten memory stays forgotten");
  return stats;
}

function assertConverted(adapter, f) {
  const ns = f.namespace;
  for (const legacy of LEGACY) assert.deepEqual(rawKeys(adapter, ns, legacy), [], `${legacy} left`);
  assert.ok(rawKeys(adapter, ns, "lt/log/").length > 0, "the log holds the converted memories");
  for (const [k, v] of adapter.map) {
    assert.ok(!v.includes(f.expected.forgotten.content), `the forgotten memory's text is in ${k}`);
  }
  // Vectors stay where they were (with their model): nothing re-embedded.
  assert.deepEqual(rawKeys(adapter, ns, "vec/").sort(), f.expected.vectorKeys);
}

for (const [name, encrypted] of [["plain", false], ["encrypted", true]]) {
  test(`the ${name} namespace of the previous release opens on the log with every memory, version, hash, message and vector`, async (t) => {
    const { f, adapter, open, embedded } = await upgrade(t, name, encrypted);
    const { expected } = f;
    // What the fixture holds: the earlier release's every kind of record.
    for (const legacy of LEGACY) assert.ok(rawKeys(adapter, f.namespace, legacy).length > 0, `fixture without ${legacy}`);
    assert.ok(rawKeys(adapter, f.namespace, "lt/entry/~batch/").length > 0, "fixture without a batch");
    assert.ok(expected.vectorKeys.length > 0, "fixture without vectors");

    const m = await open();
    await m.idle();
    const stats = await assertSameState(m, expected);
    assertConverted(adapter, f);
    assert.deepEqual(embedded, [], "stored vectors are used, not recomputed");
    assert.deepEqual(
      { model: stats.embedding.model, embedded: stats.embedding.embedded, pending: stats.embedding.pending },
      expected.embedding,
    );
    if (!encrypted) {
      for (const k of expected.vectorKeys) assert.equal(adapter.map.get(k), f.store[k], `${k} changed`);
    }

    // Every message was judged by the earlier release: nothing new.
    const report = await m.endSession();
    assert.equal(report.newMessages, 0, JSON.stringify(report));
    assert.equal(report.judge, "none", JSON.stringify(report));
    assert.deepEqual([report.candidates, report.added, report.superseded, report.complete], [0, 0, 0, true]);
    assert.deepEqual(report.errors, []);
    await m.idle();

    // Another instance reads the same from the log alone.
    const again = await open();
    await again.idle();
    await assertSameState(again, expected);
    assertConverted(adapter, f);
    assert.deepEqual(embedded, [], "stored vectors are used, not recomputed");

    if (encrypted) {
      const texts = new Set(
        [
          ...expected.memories,
          ...expected.superseded.history,
          ...expected.undone.history,
          ...expected.sessionHistory,
        ].map((e) => e.content),
      );
      texts.add(expected.forgotten.content);
      for (const [k, v] of adapter.map) {
        assert.ok(v.startsWith("amenc1."), `${k} is plain`);
        for (const text of texts) assert.ok(!v.includes(text) && !k.includes(text), `"${text}" readable in ${k}`);
      }
    }
  });
}
