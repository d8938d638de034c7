// Exact tokenizer packs against npm tiktoken, in Node.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { get_encoding } from "tiktoken";
import * as am from "../../pkg/node.js";
import { mixedCorpus, EDGE_CASES } from "../../benches/corpus.mjs";

const ENCODINGS = [["cl100k", "cl100k_base"], ["o200k", "o200k_base"]];

for (const [pack, encoding] of ENCODINGS) {
  test(`${pack} counts match tiktoken ${encoding}`, async () => {
    const ours = await am.loadTokenizer(pack);
    assert.equal(ours.id, pack);
    const theirs = get_encoding(encoding);
    try {
      const corpus = mixedCorpus(200_000, 7);
      const chunks = [...EDGE_CASES];
      for (let i = 0; i < corpus.length; i += 997) chunks.push(corpus.slice(i, i + 997));
      chunks.push(corpus);
      for (const text of chunks) {
        assert.equal(ours.count(text), theirs.encode(text).length, JSON.stringify(text.slice(0, 80)));
      }
    } finally {
      theirs.free();
    }
  });
}

test("lone surrogates count as U+FFFD, as tiktoken's JS binding does", async () => {
  const ours = await am.loadTokenizer("cl100k");
  const theirs = get_encoding("cl100k_base");
  try {
    for (const text of ["\ud800", "a\udc00b", "😀\ud83d", "\ud83d😀 x"]) {
      assert.equal(ours.count(text), theirs.encode(text).length);
      assert.equal(ours.count(text), ours.count(text.toWellFormed()));
    }
  } finally {
    theirs.free();
  }
});

test("budget helpers: countUpTo, truncate, truncateLines", async () => {
  const tok = await am.loadTokenizer("o200k");
  const text = mixedCorpus(5_000, 3);
  const n = tok.count(text);
  assert.equal(tok.countUpTo(text, n), n);
  assert.equal(tok.countUpTo(text, n - 1), undefined);
  const cut = tok.truncate(text, 100);
  assert.ok(text.startsWith(cut));
  assert.ok(tok.count(cut) <= 100 && tok.count(cut) >= 95);
  const lines = tok.truncateLines(text, 100);
  assert.ok(text.startsWith(lines));
  assert.ok(lines === "" || lines.endsWith("\n"));
  assert.ok(tok.count(lines) <= 100);
  const est = am.Tokenizer.estimate();
  assert.equal(est.id, "estimate");
  assert.equal(est.count("abcd"), 1);
});

test("bad packs throw TOKENIZER_PACK and leave the module usable", () => {
  const bytes = readFileSync(new URL("../../pkg/packs/cl100k.amtk", import.meta.url));
  const corrupt = Uint8Array.from(bytes);
  corrupt[corrupt.length >> 1] ^= 0xff;
  for (const bad of [corrupt, bytes.subarray(0, 1000), new Uint8Array(0), new TextEncoder().encode("hello")]) {
    assert.throws(() => am.Tokenizer.fromPack(bad), (e) => e.code === "TOKENIZER_PACK");
  }
  assert.throws(() => am.Tokenizer.fromPack("not bytes"), (e) => e.code === "INVALID_INPUT");
  assert.equal(am.Tokenizer.fromPack(bytes).count("hello world"), 2);
});

/** A pack file: header of `version` for o200k, `payload`, FNV-1a checksum (src/tokens/pack.rs). */
function packFile(version, count, payload) {
  const body = [..."AMTKPACK"].map((c) => c.charCodeAt(0)).concat([version, 2]);
  body.push(...new Uint8Array(new Uint32Array([count]).buffer), ...payload);
  let h = 0x811c9dc5;
  for (const b of body) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return Uint8Array.from([...body, ...new Uint8Array(new Uint32Array([h]).buffer)]);
}

test("a pack of format 1 (the tokens' bytes, from earlier versions) is refused naming the format read", () => {
  // Format 1 after the header: each token's length, then the tokens' bytes.
  const tokens = Array.from({ length: 256 }, (_, b) => [b]).concat([[104, 105]]);
  const v1 = packFile(1, tokens.length, [...tokens.map((t) => t.length), ...tokens.flat()]);
  assert.throws(
    () => am.Tokenizer.fromPack(v1),
    (e) => e.code === "TOKENIZER_PACK" && /version 1/.test(e.message) && /version 2/.test(e.message),
  );
  assert.equal(am.Tokenizer.fromPack(readFileSync(new URL("../../pkg/packs/o200k.amtk", import.meta.url))).count("hi"), 1);
});

test("a damaged pack refused 100,000 times leaves the module usable", async () => {
  // Format 2 with a sound checksum, but token 256 made of a token after it.
  const pairs = Array.from({ length: 256 }, (_, b) => [b, b]).concat([[300, 1]]);
  const planes = [0, 1].flatMap((side) => [0, 8, 16].flatMap((shift) => pairs.map((p) => (p[side] >> shift) & 255)));
  const bad = packFile(2, pairs.length, planes);
  const codes = new Map();
  for (let i = 0; i < 100_000; i++) {
    try {
      am.Tokenizer.fromPack(bad);
      codes.set("accepted", (codes.get("accepted") ?? 0) + 1);
    } catch (e) {
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
    }
  }
  assert.deepEqual([...codes], [["TOKENIZER_PACK", 100_000]]);
  assert.equal((await am.loadTokenizer("o200k")).count("hello world"), 2);
});

test("memories are counted like messages: exact after setTokenizer, from remember, rememberMany, supersede and session end, and after redaction", async () => {
  const enc = get_encoding("o200k_base");
  const exact = (text) => enc.encode(text).length;
  const memory = await am.Memory.open({ namespace: `tok-${Date.now()}`, sessionId: "s", store: "memory", redact: true });
  memory.setTokenizer(await am.loadTokenizer("o200k"));
  const { entry } = await memory.remember({ content: "Prefers Rust for systems code" });
  assert.deepEqual(entry.tokens, { o200k: exact("Prefers Rust for systems code") });
  const [many] = await memory.rememberMany([{ content: "Works on a database engine" }]);
  assert.deepEqual(many.entry.tokens, { o200k: exact("Works on a database engine") });
  const newer = await memory.supersede({ content: "Now prefers Zig" }, [entry.id]);
  assert.deepEqual(newer.tokens, { o200k: exact("Now prefers Zig") });
  // Counted after redaction: the text that is stored and sent.
  const mail = await memory.remember({ content: "Writes to ada.lovelace.analytical@example.com every day" });
  assert.notEqual(mail.entry.content, "Writes to ada.lovelace.analytical@example.com every day");
  assert.deepEqual(mail.entry.tokens, { o200k: exact(mail.entry.content) });
  await memory.add({ role: "user", content: "I live in Lisbon and I work as a nurse." });
  await memory.endSession();
  const all = await memory.memories();
  assert.ok(all.length >= 4, JSON.stringify(all.map((e) => e.content)));
  for (const e of all) assert.deepEqual(e.tokens, { o200k: exact(e.content) }, e.content);
  enc.free();
});
