// npm run --silent bench:context
//
// Working memory in Node: adding a message and building a request on a
// 10,000-message session (counts cached), next to LangChain.js `trimMessages`
// on the same messages with the same token counter, twice: called per
// message on every invocation (as its docs show), and memoized by text (as
// ours is cached at `add`: the like-for-like row); then small inputs where
// the two keep different messages, and why. Last line: one JSON object.
import * as am from "../pkg/node.js";
import { trimMessages, HumanMessage, AIMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { mixedCorpus } from "./corpus.mjs";
import { machine, median, spread } from "./stats.mjs";

const OVERHEAD = 4; // agent-memory's per-message overhead, used by both sides

// One conversation: user / assistant turns, every 10th turn with a tool call.
function conversation(n) {
  const text = mixedCorpus(2_000_000, 5);
  let at = 0;
  const slice = () => {
    const len = 40 + ((at * 7919) % 400);
    const s = text.slice(at % (text.length - 500), (at % (text.length - 500)) + len);
    at += len;
    return s;
  };
  const out = [];
  for (let i = 0; out.length < n; i++) {
    out.push({ role: "user", content: slice() });
    if (i % 10 === 9) {
      const id = `call_${i}`;
      out.push({ role: "assistant", content: "", toolCalls: [{ id, name: "search", arguments: `{"q":"${i}"}` }] });
      out.push({ role: "tool", content: slice(), toolCallId: id });
    }
    out.push({ role: "assistant", content: slice() });
  }
  return out.slice(0, n);
}

function toLangChain(messages, system) {
  const out = system ? [new SystemMessage(system)] : [];
  for (const m of messages) {
    if (m.role === "user") out.push(new HumanMessage(m.content));
    else if (m.role === "tool") out.push(new ToolMessage({ content: m.content, tool_call_id: m.toolCallId }));
    else out.push(new AIMessage({
      content: m.content,
      tool_calls: (m.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.arguments) })),
    }));
  }
  return out;
}

// The same counts on both sides: the estimate of the text (and tool calls) plus the overhead.
const countable = (m) => {
  let text = typeof m.content === "string" ? m.content : "";
  for (const c of m.tool_calls ?? []) text += `\n${c.name} ${JSON.stringify(c.args)}`;
  return text;
};
function tokenCounter(msgs) {
  let n = 0;
  for (const m of msgs) n += am.estimateTokens(countable(m)) + OVERHEAD;
  return n;
}
// The fair variant: counts cached as ours are at `add`. trimMessages copies
// messages, so the cache is keyed by their text, not by object.
const cache = new Map();
function memoCounter(msgs) {
  let n = 0;
  for (const m of msgs) {
    const text = countable(m);
    let c = cache.get(text);
    if (c === undefined) cache.set(text, (c = am.estimateTokens(text) + OVERHEAD));
    n += c;
  }
  return n;
}
const show = (x, unit = "ms", digits = 2) => `${x.median.toFixed(digits)} ${unit} (${x.min.toFixed(digits)}-${x.max.toFixed(digits)}, ${x.runs} runs)`;

const SYSTEM = "You are a helpful assistant.";
const N = 10_000;
const messages = conversation(N);
const budget = { contextWindow: 32_000 };
const memory = await am.Memory.open({ store: "memory", namespace: "bench", sessionId: "s", maxCachedMessages: N, maxTokens: 10_000_000, budget });

// Adding: time per message, in batches, early and late in the session (O(1) means equal).
const batchUs = [];
for (let i = 0; i < N; i += 500) {
  const t0 = performance.now();
  for (const m of messages.slice(i, i + 500)) await memory.add(m);
  batchUs.push(((performance.now() - t0) * 1000) / 500);
}
const addUs = median(batchUs);

// Building a request: warm, then the median of 50.
const request = { system: SYSTEM };
let built;
for (let i = 0; i < 5; i++) built = await memory.buildContext(request);
const buildMs = [];
for (let i = 0; i < 50; i++) {
  const t0 = performance.now();
  built = await memory.buildContext(request);
  buildMs.push(performance.now() - t0);
}
const windowTokens = built.report.limit;

// LangChain trimMessages on the same messages and budget. It recounts the
// list once per dropped message (quadratic), so at 10k messages it runs once;
// the median of 5 is taken at 1k messages.
const lc = toLangChain(messages, SYSTEM);
const trimOpts = { maxTokens: windowTokens, strategy: "last", tokenCounter, includeSystem: true, startOn: "human", allowPartial: false };
let t0 = performance.now();
const trimmed = await trimMessages(lc, trimOpts);
const trim10kMs = performance.now() - t0;
const lc1k = toLangChain(messages.slice(-1000), SYSTEM);
const trim1kMs = [];
for (let i = 0; i < 5; i++) {
  t0 = performance.now();
  await trimMessages(lc1k, trimOpts);
  trim1kMs.push(performance.now() - t0);
}
// With the memoized counter: warm once (the cache fills), then 5 runs each.
const memoOpts = { ...trimOpts, tokenCounter: memoCounter };
await trimMessages(lc, memoOpts);
const memo10kMs = [];
for (let i = 0; i < 5; i++) {
  t0 = performance.now();
  await trimMessages(lc, memoOpts);
  memo10kMs.push(performance.now() - t0);
}
const memo1kMs = [];
for (let i = 0; i < 5; i++) {
  t0 = performance.now();
  await trimMessages(lc1k, memoOpts);
  memo1kMs.push(performance.now() - t0);
}
const memory1k = await am.Memory.open({ store: "memory", namespace: "bench", sessionId: "s1k", maxCachedMessages: N, maxTokens: 10_000_000, budget });
for (const m of messages.slice(-1000)) await memory1k.add(m);
const build1kMs = [];
for (let i = 0; i < 50; i++) {
  t0 = performance.now();
  await memory1k.buildContext(request);
  build1kMs.push(performance.now() - t0);
}

console.log(`Working memory, ${machine()}: a ${N}-message session, ${budget.contextWindow}-token window; median (min-max, runs), all in this run`);
const L = "LangChain trimMessages, counter per call";
const M = "LangChain trimMessages, memoized counter";
console.table([
  { what: "add one message (500-message batches)", "agent-memory": show(spread(batchUs), "µs", 1), [L]: "n/a", [M]: "n/a" },
  { what: "add, first 500 vs last 500 messages", "agent-memory": `${batchUs[0].toFixed(1)} / ${batchUs.at(-1).toFixed(1)} µs`, [L]: "n/a", [M]: "n/a" },
  { what: "build the request, 10k messages", "agent-memory": show(spread(buildMs)), [L]: `${trim10kMs.toFixed(0)} ms (1 run)`, [M]: show(spread(memo10kMs), "ms", 1) },
  { what: "build the request, last 1k messages", "agent-memory": show(spread(build1kMs)), [L]: show(spread(trim1kMs), "ms", 1), [M]: show(spread(memo1kMs), "ms", 1) },
  { what: "messages kept", "agent-memory": built.messages.length, [L]: trimmed.length, [M]: trimmed.length },
]);

// Small inputs where the two keep different things.
async function compare(name, msgs, maxTokens, why) {
  const m = await am.Memory.open({ store: "memory", namespace: "cmp", sessionId: name.replace(/\W+/g, "-"), budget: { contextWindow: maxTokens + 2000, reservedForSystem: 0, reservedForTools: 0 } });
  for (const x of msgs) await m.add(x);
  const ours = (await m.buildContext({ system: SYSTEM })).messages;
  const theirs = await trimMessages(toLangChain(msgs, SYSTEM), { ...trimOpts, maxTokens });
  const show = (roles) => roles.join(" ");
  return {
    input: name,
    "agent-memory keeps": show(ours.map((x) => x.role)),
    "trimMessages keeps": show(theirs.map((x) => ({ human: "user", ai: "assistant" })[x._getType()] ?? x._getType())),
    why,
  };
}
const call = (id) => ({ role: "assistant", content: "", toolCalls: [{ id, name: "search", arguments: "{}" }] });
const result = (id) => ({ role: "tool", content: "result ".repeat(20), toolCallId: id });
const rows = [
  await compare("orphan tool result", [{ role: "user", content: "hi" }, result("gone"), { role: "assistant", content: "ok" }], 400,
    "a tool message without its call is rejected with HTTP 400 by OpenAI; ours drops it"),
  await compare("call missing a result", [{ role: "user", content: "hi" }, call("a"), { role: "user", content: "and?" }], 400,
    "an assistant tool call with no tool answer is rejected with HTTP 400; ours drops the call"),
  await compare("tool still running at the end", [{ role: "user", content: "look it up" }, call("c")], 400,
    "the last assistant message's call has no result yet: sending it is a 400; ours leaves the call out until its result is added"),
];
console.log("Inputs where the two keep different messages (system prompt + chat, same counter)");
console.table(rows);

console.log(JSON.stringify({
  build_context_10k_ms: Math.round(median(buildMs) * 1000) / 1000,
  add_us: Math.round(addUs * 10) / 10,
  langchain_trim_ms: Math.round(trim10kMs * 10) / 10,
  langchain_trim_memo_ms: Math.round(median(memo10kMs) * 10) / 10,
  memoized_ratio: Math.round((median(memo10kMs) / median(buildMs)) * 10) / 10,
}));
