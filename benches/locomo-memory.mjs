// LoCoMo external ranker (protocol v1 of ../shared/data/locomo/README.md)
// whose every step goes through the public Memory API, as an app would:
// each LoCoMo session becomes a session of the conversation's namespace
// (its turns added as messages with the dataset's timestamps, the first
// speaker as the user), and each question is a `memory.search` of a
// Memory opened afterwards on the same store (episodic recall).
//
//   python3 ../shared/data/locomo/bench.py eval --data ../shared/data/locomo --ranker ext \
//     --cmd "node benches/locomo-memory.mjs"
//
// `--hybrid` (with the scorer's `--ext-embeddings`): the dataset's MiniLM
// vectors reach the memory through the `embed` hook, as a host's model
// would (each text's vector, looked up by the text the hook is given).
// `--options '<json>'`: extra search options (see below).
import readline from "node:readline";
import { Memory } from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";

const hybrid = process.argv.includes("--hybrid");
// `--options '<json>'`: more search options, e.g. the block's absolute
// floor ('{"minCoverage":0.2,"minCosine":0.4}') to measure what it costs.
const optionsAt = process.argv.indexOf("--options");
const searchOptions = optionsAt > 0 ? JSON.parse(process.argv[optionsAt + 1]) : {};
const vectorOf = new Map(); // text -> the dataset's vector
const embedOptions = hybrid
  ? {
      embed: async (texts) => texts.map((t) => {
        const v = vectorOf.get(t);
        if (!v) throw new Error(`no dataset vector for ${JSON.stringify(t.slice(0, 40))}`);
        return v;
      }),
      embedModel: "minilm-l6-v2",
    }
  : {};

let conversation = 0;
let now = 0;
let turns = [];
let searcher = null;
const datasetId = new Map(); // message id -> dia_id

async function build() {
  const store = mapAdapter();
  const namespace = `locomo-${conversation}`;
  const sessions = new Map();
  for (const t of turns) {
    if (!sessions.has(t.session)) sessions.set(t.session, []);
    sessions.get(t.session).push(t);
  }
  for (const [session, list] of sessions) {
    const memory = await Memory.open({ namespace, sessionId: `session-${session}`, store, ...embedOptions });
    const first = list[0].text.split(":")[0];
    for (const t of list) {
      const role = t.text.startsWith(`${first}:`) ? "user" : "assistant";
      const entry = await memory.add({ role, content: t.text, timestamp: t.timestamp });
      datasetId.set(entry.id, t.id);
    }
    await memory.idle();
  }
  searcher = await Memory.open({ namespace, sessionId: "questions", store, ...embedOptions });
  await searcher.idle();
}

async function handle(msg) {
  if (msg.op === "reset") {
    conversation += 1;
    now = Date.parse(msg.now);
    turns = [];
    searcher = null;
  } else if (msg.op === "add") {
    turns.push({ id: msg.id, text: msg.text, session: msg.session, timestamp: Date.parse(msg.timestamp) });
    if (msg.embedding) vectorOf.set(msg.text, Float32Array.from(msg.embedding));
  } else if (msg.op === "query") {
    if (!searcher) await build();
    if (msg.embedding) vectorOf.set(msg.text, Float32Array.from(msg.embedding));
    const hits = await searcher.search(msg.text, { topK: msg.k, now, ...searchOptions });
    const ids = hits.map((h) => datasetId.get(h.id)).filter(Boolean);
    process.stdout.write(JSON.stringify({ qid: msg.qid, ids }) + "\n");
  }
}

// Lines are handled one after another: each waits for the one before.
let queue = Promise.resolve();
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  queue = queue.then(() => handle(msg)).catch((err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  });
});
