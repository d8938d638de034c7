// LoCoMo external ranker (protocol v1 of ../shared/data/locomo/README.md)
// whose every step goes through the public Memory API, as an app would:
// each LoCoMo session becomes a session of the conversation's namespace
// (its turns added as messages with the dataset's timestamps, the first
// speaker as the user), and each question is a `memory.search` of a
// Memory opened afterwards on the same store (episodic recall).
//
//   python3 ../shared/data/locomo/bench.py eval --data ../shared/data/locomo --ranker ext \
//     --cmd "node benches/locomo-memory.mjs"
import readline from "node:readline";
import { Memory } from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";

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
    const memory = await Memory.open({ namespace, sessionId: `session-${session}`, store });
    const first = list[0].text.split(":")[0];
    for (const t of list) {
      const role = t.text.startsWith(`${first}:`) ? "user" : "assistant";
      const entry = await memory.add({ role, content: t.text, timestamp: t.timestamp });
      datasetId.set(entry.id, t.id);
    }
  }
  searcher = await Memory.open({ namespace, sessionId: "questions", store });
}

async function handle(msg) {
  if (msg.op === "reset") {
    conversation += 1;
    now = Date.parse(msg.now);
    turns = [];
    searcher = null;
  } else if (msg.op === "add") {
    turns.push({ id: msg.id, text: msg.text, session: msg.session, timestamp: Date.parse(msg.timestamp) });
  } else if (msg.op === "query") {
    if (!searcher) await build();
    const hits = await searcher.search(msg.text, { topK: msg.k, now });
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
