// npm run --silent bench:llm
//
// The LLM pipeline in Node with the scripted model of scripts/llm-server.mjs:
// 1. library overhead of `endSession` on 50 new messages (wall time minus the
//    time spent inside the model hook), with 200 memories already stored so
//    that resolving has neighbours to look at;
// 2. model calls and tokens per 100 turns: 4 sessions of 25 turns with a
//    1,500-token context window (compression fires), each ended with
//    `endSession`; tokens as the scripted server reports them (chars / 4);
// 3. the same endSession over real HTTP to the local server, for scale.
// Last line: one JSON object.
import * as am from "../pkg/node.js";
import { machine, median, showSpread } from "./stats.mjs";
import { scriptedModel, startLlmServer } from "../scripts/llm-server.mjs";

const tokens = (s) => Math.ceil(s.length / 4);

/** A hook around the scripted model that times itself. */
function timedHook() {
  const hook = async (req) => {
    const t0 = performance.now();
    const content = scriptedModel({ messages: req.messages });
    const prompt = req.messages.reduce((n, m) => n + tokens(m.content) + 4, 0);
    hook.ms += performance.now() - t0;
    return { content, usage: { prompt_tokens: prompt, completion_tokens: tokens(content) } };
  };
  hook.ms = 0;
  return hook;
}

const TOPICS = ["Rust", "hiking", "tea", "Lisbon", "jazz", "chess", "gardening", "Python", "cycling", "sushi"];
const STATEMENTS = [
  "I prefer Rust for systems programming.", "I live in Lisbon near the river.", "I love hiking in the Alps every summer.",
  "I use Neovim with a dark theme.", "My name is Ada Moreira.", "I work as a nurse on night shifts.",
  "I hate loud open-plan offices.", "I have two cats named Miso and Tofu.", "I like jazz records from the fifties.",
  "I now prefer Go for backend services.", "I prefer green tea to coffee.", "I like cycling to work when it is dry.",
  "I live in Porto now.", "I use a standing desk at home.", "I love sushi, especially salmon nigiri.",
  "I work on a compiler in my free time.", "I prefer short answers with code first.",
];
function turn(i) {
  const t = TOPICS[i % TOPICS.length];
  if (i % 6 === 2) {
    const s = STATEMENTS[Math.floor(i / 6) % STATEMENTS.length];
    return [s, "Noted, thanks for telling me."];
  }
  return [`Could you tell me something about ${t} number ${i}?`, `Here is a short note on ${t} (${i}): it is a broad subject with history.`];
}

async function seeded(ns, memories) {
  const store = new Map();
  const adapter = {
    async get(k) { return store.get(k); },
    async put(k, v) { store.set(k, v); },
    async delete(k) { store.delete(k); },
    async list(p) { return [...store].filter(([k]) => k.startsWith(p)); },
  };
  const m = await am.Memory.open({ namespace: ns, sessionId: "seed", store: adapter });
  for (let i = 0; i < memories; i++) await m.remember({ content: `User mentioned fact ${i} about ${TOPICS[i % 10]} and item ${i * 7}` });
  return adapter;
}

// 1. Overhead per endSession of 50 messages.
const overhead = [];
const totals = [];
let callsPerEnd = 0;
for (let run = 0; run < 25; run++) {
  const adapter = await seeded(`bench-${run}`, 200);
  const hook = timedHook();
  const m = await am.Memory.open({ namespace: `bench-${run}`, sessionId: "s", store: adapter, llm: { complete: hook }, autoCompress: false });
  for (let i = 0; i < 25; i++) {
    const [u, a] = turn(i);
    await m.add({ role: "user", content: u });
    await m.add({ role: "assistant", content: a });
  }
  hook.ms = 0;
  const t0 = performance.now();
  const report = await m.endSession();
  const total = performance.now() - t0;
  if (!report.complete) throw new Error(`endSession incomplete: ${JSON.stringify(report)}`);
  callsPerEnd = report.llmCalls;
  if (run >= 5) { // warm-up runs are not counted
    totals.push(total);
    overhead.push(total - hook.ms);
  }
}

// 2. Calls and tokens per 100 turns.
const adapter = await seeded("usage", 0);
let calls = 0, tok = 0;
const byPurpose = {};
for (let s = 0; s < 4; s++) {
  const m = await am.Memory.open({
    namespace: "usage", sessionId: `s${s}`, store: adapter, llm: { complete: timedHook() },
    budget: { contextWindow: 1_500, reservedForSystem: 200, reservedForTools: 0, reservedForResponse: 500 },
  });
  for (let i = 0; i < 25; i++) {
    const [u, a] = turn(s * 25 + i);
    await m.add({ role: "user", content: u });
    await m.add({ role: "assistant", content: a });
  }
  await m.idle();
  await m.endSession();
  const st = m.llmStats();
  calls += st.calls;
  tok += st.inputTokens + st.outputTokens;
  for (const [k, v] of Object.entries(st.byPurpose)) byPurpose[k] = (byPurpose[k] ?? 0) + v.calls;
}

// 3. Over HTTP.
const server = await startLlmServer();
const httpTimes = [];
for (let run = 0; run < 10; run++) {
  const m = await am.Memory.open({ store: "memory", namespace: `http-${run}`, sessionId: "s", llm: { endpoint: server.endpoint, model: "scripted" }, autoCompress: false });
  for (let i = 0; i < 25; i++) {
    const [u, a] = turn(i);
    await m.add({ role: "user", content: u });
    await m.add({ role: "assistant", content: a });
  }
  const t0 = performance.now();
  await m.endSession();
  httpTimes.push(performance.now() - t0);
}
await server.close();

const memories = (await (await am.Memory.open({ namespace: "usage", sessionId: "x", store: adapter })).memories()).length;
console.log(`LLM pipeline, ${machine()}, scripted model; median (min-max) over ${overhead.length} runs after 5 warm-ups`);
console.table([
  { figure: "endSession of 50 messages: library overhead (ms)", value: showSpread(overhead, 2), goal: "<= 5" },
  { figure: "endSession of 50 messages: total incl. in-process hook (ms)", value: showSpread(totals, 2), goal: "" },
  { figure: "endSession of 50 messages over HTTP to 127.0.0.1 (ms)", value: showSpread(httpTimes, 2), goal: "" },
  { figure: "model calls per endSession of 50 messages", value: callsPerEnd, goal: "<= 1 judge + 1 resolve + 1 summary" },
  { figure: "model calls per 100 turns (4 sessions, compression on)", value: calls, goal: "report" },
  { figure: "model tokens per 100 turns", value: tok, goal: "report" },
  { figure: "memories stored from the 100 turns", value: memories, goal: "" },
]);
console.log("calls by purpose over the 100 turns:", JSON.stringify(byPurpose));
console.log("reference, not run here: a per-turn extractor such as Mem0's add() makes 2 calls per add (extract + update), 200 per 100 turns");
console.log(JSON.stringify({
  end_session_overhead_ms: +median(overhead).toFixed(3),
  llm_calls_per_100_turns: calls,
  llm_tokens_per_100_turns: tok,
}));
