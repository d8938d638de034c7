// LoCoMo external ranker (protocol v1 of ../shared/data/locomo/README.md),
// built on the npm package: one SearchIndex per conversation.
//
//   python3 ../shared/data/locomo/bench.py eval --data ../shared/data/locomo --ranker ext \
//     --cmd "node benches/locomo-ranker.mjs"
//   python3 ../shared/data/locomo/bench.py eval --data ../shared/data/locomo --ranker ext --ext-embeddings \
//     --cmd "node benches/locomo-ranker.mjs --hybrid"
//
// Each turn is indexed with its neighbours in the same session as context
// (at a lower weight): an answer is often the turn after the question that
// names the topic. Options (for tuning on the dev split only):
//   --k1 N --b N --context-weight N --alpha N --fusion minmax|rrf --rrf-k N --mmr N
//   --decay none|linear24h|halfLife --half-life-days N --neighbours N
import readline from "node:readline";
import { SearchIndex } from "../pkg/node.js";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const hybrid = args.includes("--hybrid");
const indexOptions = { k1: Number(arg("k1", 1.2)), b: Number(arg("b", 0.75)), contextWeight: Number(arg("context-weight", 0.5)) };
const neighbours = Number(arg("neighbours", 2));
const searchOptions = {
  fusion: arg("fusion", "minmax"),
  alpha: Number(arg("alpha", 0.5)),
  rrfK: Number(arg("rrf-k", 60)),
  decay: arg("decay", "none"),
  halfLifeDays: Number(arg("half-life-days", 30)),
  ...(arg("mmr") ? { mmrLambda: Number(arg("mmr")) } : {}),
};

let index = null;
let now = 0;
let turns = []; // the current conversation's turns, in order
let built = false;

function build() {
  index = new SearchIndex(indexOptions);
  turns.forEach((t, i) => {
    const context = [];
    for (let d = 1; d <= neighbours; d++) {
      for (const j of [i - d, i + d]) {
        if (turns[j] && turns[j].session === t.session) context.push(turns[j].text);
      }
    }
    index.add({
      id: t.id,
      text: t.text,
      context: context.join("\n"),
      timestamp: t.timestamp,
      ...(hybrid && t.embedding ? { embedding: Float32Array.from(t.embedding) } : {}),
    });
  });
  built = true;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.op === "reset") {
    now = Date.parse(msg.now);
    turns = [];
    built = false;
  } else if (msg.op === "add") {
    turns.push({ id: msg.id, text: msg.text, session: msg.session, timestamp: Date.parse(msg.timestamp), embedding: msg.embedding });
  } else if (msg.op === "query") {
    if (!built) build();
    const hits = index.search(msg.text, {
      ...searchOptions,
      topK: msg.k,
      now,
      ...(hybrid && msg.embedding ? { vector: Float32Array.from(msg.embedding) } : {}),
    });
    process.stdout.write(JSON.stringify({ qid: msg.qid, ids: hits.map((h) => h.id) }) + "\n");
  }
});
