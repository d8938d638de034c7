// The tokenizer benchmark, shared by the Node run (benches/tokenizer.mjs) and
// the Chromium run (benches/browser/tokenizer.html): parity and throughput of
// our packs against the npm peers, in one process, on the same text.
import { mixedCorpus, EDGE_CASES } from "./corpus.mjs";

const now = () => performance.now();

/** MB/s of `count` over `texts` (total `bytes`): first pass, then the
 * median, slowest and fastest of 5 more. */
function throughput(count, texts, bytes) {
  const pass = () => {
    const t0 = now();
    let n = 0;
    for (const t of texts) n += count(t);
    return { ms: now() - t0, n };
  };
  const first = pass();
  const rest = [pass(), pass(), pass(), pass(), pass()].map((p) => p.ms).sort((a, b) => a - b);
  const mb = bytes / 1e6;
  const rate = (ms) => mb / (ms / 1000);
  return { first: rate(first.ms), steady: rate(rest[2]), slowest: rate(rest[4]), fastest: rate(rest[0]), tokens: first.n };
}

function chunks(text, size) {
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * @param ours  { cl100k: Tokenizer, o200k: Tokenizer }
 * @param peers [{ name, cl100k: (text) => number, o200k?: (text) => number }]
 * @returns { rows, parity, mbps, mbpsByName }
 */
export function runTokenizerBench(ours, peers) {
  const corpus = mixedCorpus(1_000_000, 42);
  const bytes = new TextEncoder().encode(corpus).length;
  const parityTexts = [...EDGE_CASES, ...chunks(mixedCorpus(300_000, 9), 1000)];

  const counters = [
    { name: "agent-memory (pack)", cl100k: (t) => ours.cl100k.count(t), o200k: (t) => ours.o200k.count(t) },
    ...peers,
  ];
  // Parity: every counter against the first peer (npm tiktoken where present).
  const reference = peers[0];
  let parity = true;
  const rows = [];
  for (const c of counters) {
    let same = 0;
    let total = 0;
    for (const enc of ["cl100k", "o200k"]) {
      if (!c[enc] || !reference[enc]) continue;
      for (const t of parityTexts) {
        total++;
        if (c[enc](t) === reference[enc](t)) same++;
      }
    }
    if (c === counters[0]) parity = same === total;
    const whole = throughput(c.cl100k, [corpus], bytes);
    const chunked = throughput(c.cl100k, chunks(corpus, 1000), bytes);
    rows.push({
      counter: c.name,
      parity: `${same}/${total}`,
      "whole MB/s (first)": whole.first.toFixed(1),
      "whole MB/s (5 runs)": `${whole.steady.toFixed(1)} (${whole.slowest.toFixed(1)}-${whole.fastest.toFixed(1)})`,
      "1KB chunks MB/s (5 runs)": `${chunked.steady.toFixed(1)} (${chunked.slowest.toFixed(1)}-${chunked.fastest.toFixed(1)})`,
      tokens: whole.tokens,
      _mbps: Math.min(whole.steady, chunked.steady),
    });
  }
  return { rows, parity, corpusBytes: bytes };
}
