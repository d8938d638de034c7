// The peer for CJK retrieval: plain Okapi BM25 (k1 = 1.2, b = 0.75, the
// scorer's idf) over character unigrams and bigrams of each CJK run, and
// lowercase letter/digit runs otherwise, the NLTK stop words our analyzer
// drops too. No stemming, no context, no weights: what a search engine's
// "cjk" analyzer does. An external ranker of the LoCoMo protocol v1:
//
//   python3 ../shared/data/locomo/bench.py eval --data benches/data/zh --ranker ext \
//     --cmd "node benches/cjk-bm25-ranker.mjs"
import readline from "node:readline";
import { STOP_WORDS } from "./stop-words.mjs";

const stop = new Set(STOP_WORDS);
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

export function terms(text) {
  const out = [];
  for (const run of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = [...run];
    if (!chars.some((c) => CJK.test(c))) {
      if (!stop.has(run)) out.push(run);
      continue;
    }
    // Mixed runs: CJK characters as uni+bigrams, the rest as words.
    let word = "";
    let prev = null;
    for (const c of chars) {
      if (CJK.test(c)) {
        if (word) { if (!stop.has(word)) out.push(word); word = ""; }
        out.push(c);
        if (prev) out.push(prev + c);
        prev = c;
      } else {
        word += c;
        prev = null;
      }
    }
    if (word && !stop.has(word)) out.push(word);
  }
  return out;
}

let docs = [];
let built = null;
let now = 0;

function build() {
  const df = new Map();
  const rows = docs.map((d) => {
    const tf = new Map();
    const ts = terms(d.text);
    for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    return { id: d.id, tf, len: ts.length };
  });
  const avgdl = rows.reduce((n, r) => n + r.len, 0) / Math.max(rows.length, 1);
  built = { rows, df, avgdl };
}

function search(query, k) {
  const { rows, df, avgdl } = built;
  const n = rows.length;
  const q = [...new Set(terms(query))];
  const scored = [];
  rows.forEach((r, i) => {
    let s = 0;
    for (const t of q) {
      const f = r.tf.get(t);
      if (!f) continue;
      const idf = Math.log(1 + (n - df.get(t) + 0.5) / (df.get(t) + 0.5));
      s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * r.len) / avgdl));
    }
    if (s > 0) scored.push([s, i]);
  });
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return scored.slice(0, k).map(([, i]) => rows[i].id);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (msg.op === "reset") { docs = []; built = null; now = Date.parse(msg.now); }
    else if (msg.op === "add") docs.push({ id: msg.id, text: msg.text });
    else if (msg.op === "query") {
      if (!built) build();
      process.stdout.write(JSON.stringify({ qid: msg.qid, ids: search(msg.text, msg.k) }) + "\n");
    }
  });
}
