// npm run --silent bench:context-recall [-- --split test] [-- --data DIR]
//   [-- --options '<json>'] (more Memory options for the question instances)
//   [-- --misses] (each missed multi-hop and open-domain evidence turn, and why)
//
// Recall scored on what the model is SENT. LoCoMo (read from
// ../shared/data/locomo, CC BY-NC: never copied here), dev split by default,
// through the public Memory API exactly as an app would use it:
// - each LoCoMo session is a session of the conversation's namespace: its
//   turns added with the dataset's timestamps (the session's first speaker
//   is the user, the other the assistant; content = the dataset's `text`,
//   "<speaker>: <utterance>", as benches/locomo-memory.mjs adds it), then
//   `endSession()` with no model: the rule extractor writes long-term
//   memories whose `sources` are the ids of the messages they came from;
// - each question: a fresh Memory on the same store with a new sessionId,
//   the o200k tokenizer set, and `buildContext({ query: question })`
//   (afterwards `clearSession()`, so one question's message is never
//   recalled for the next).
// Evidence recall = the share of a question's gold evidence turns (dia_ids)
// present in the messages sent: a past turn recalled into the long-term
// block, or a turn among the `sources` of a memory in the block.
//
// How a line of the block is traced to ids: `buildContext` returns the
// messages and token counts but not the ids of the hits it recalled, so the
// block's lines are matched back to stored records by their exact text
// (whitespace folded, as the block writes them): a "User profile" line to
// the valid memory with that content (then its `sources`, message ids), a
// "Past conversations" line ("- [day] role: text") to the message of that
// day, role and text (a line cut at 1,000 characters by its prefix). Lines
// that match nothing are counted and printed (there should be none).
//
// Budget curve: the same at longTermBudget 250, 500, 1,000, 2,000 and 4,000
// tokens (the Memory option for the block; 4,000 is the default), and
// beside Memory, per question, two peers given exactly the long-term tokens
// Memory used for that question (o200k): the conversation's raw turns ranked
// by BM25 (the library's SearchIndex, each turn with its two neighbours on
// each side as context, as benches/locomo-ranker.mjs) and by hybrid BM25 +
// the dataset's MiniLM vectors (min-max fusion, alpha 0.5, as
// locomo-ranker.mjs --hybrid); each peer's turns as "- [day] text" lines,
// best first, whole lines while they fit (no fence or heading: the peers
// pay less per line than Memory does). The peers see the same turns.
//
// Then: why evidence is missed at the default budget. Each missed
// (question, evidence turn), first reason that applies: the question shares
// no content word (the library's analyzer; the speakers' names aside, as
// every turn starts with one) with the turn, its memories or its neighbours;
// only with a neighbour; it shares one but the turn and its memories rank
// 11+ in `memory.search` (ids and `sources` are exposed there; the block
// takes ten of each); in the top ten but under the block's relative floor;
// or cut by the budget. With, per reason: who said the turn, whether a
// memory was extracted from it, whether it would be in the top ten without
// the other speaker's turns ranked above it, and whether each peer sent it.
//
// Deterministic (no model, no clock in the scores): one run; only the time
// per request varies, shown as median (min-max). Last line: one JSON object.
import { existsSync, readFileSync } from "node:fs";
import { Memory, SearchIndex, loadTokenizer } from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";
import { machine, showSpread } from "./stats.mjs";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const split = arg("split", "dev");
// `--options '<json>'`: more Memory options for the question instances, e.g. '{"pinnedProfile":0}'.
const extraOptions = JSON.parse(arg("options", "{}"));
if (!["dev", "test"].includes(split)) throw new Error(`--split dev|test, not ${split}`);
const DEV = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"];
const data = (() => {
  const given = arg("data", split === "test" ? process.env.LOCOMO_TEST_DATA : process.env.LOCOMO_DATA);
  if (given) return given.replace(/\/?$/, "/");
  if (split === "test") {
    throw new Error("--split test: give the held-out folder with --data DIR (or LOCOMO_TEST_DATA); it is not kept next to the dev split");
  }
  return new URL("../../shared/data/locomo/", import.meta.url).pathname;
})();
if (!existsSync(`${data}memories.jsonl`)) throw new Error(`no LoCoMo data in ${data}`);

const BUDGETS = [250, 500, 1000, 2000, 4000];
const CATEGORY = { 1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop" };
const DIM = 384;
const read = (path) => readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const fold = (s) => s.split(/\s+/).filter(Boolean).join(" ");
const day = (ms) => new Date(ms).toISOString().slice(0, 10);
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const r3 = (x) => +x.toFixed(3);

const memoriesRows = read(`${data}memories.jsonl`);
const queryRows = read(`${data}queries.jsonl`);
const conversations = read(`${data}conversations.jsonl`);
const convIds = conversations.map((c) => c.conv_id);
if (split === "dev" && convIds.some((c) => !DEV.includes(c))) throw new Error(`not the dev split: ${convIds.join(", ")}`);
if (split === "test" && convIds.some((c) => DEV.includes(c))) throw new Error(`--split test was given the dev split (${convIds.join(", ")})`);

// The dataset's MiniLM vectors: row i of each file is line i of its JSONL.
function vectors(name) {
  const b = readFileSync(`${data}embeddings/minilm-l6-v2.${name}.f32`);
  const v = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  return (i) => v.subarray(i * DIM, (i + 1) * DIM);
}
const turnVector = vectors("memories");
const queryVector = vectors("queries");
memoriesRows.forEach((t, i) => (t.row = i));
queryRows.forEach((q, i) => (q.row = i));

const tok = await loadTokenizer("o200k");
const started = performance.now();
const buildMs = [];

/** The long-term block of a built request: its lines by section. */
function blockOf(messages) {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const open = system.indexOf("<memory>\n");
  const close = system.lastIndexOf("\n</memory>");
  if (open < 0 || close < open) return { profile: [], agent: [], past: [], other: [] };
  const out = { profile: [], agent: [], past: [], other: [] };
  let section = "other";
  for (const line of system.slice(open + 9, close).split("\n")) {
    if (line === "User profile:") section = "profile";
    else if (line === "Agent memory:") section = "agent";
    else if (line === "Past conversations:") section = "past";
    else if (line.startsWith("- ")) out[section].push(line.slice(2));
    else if (line.trim()) out.other.push(line);
  }
  return out;
}

const PAST = /^\[(\d{4}-\d{2}-\d{2})\] (user|assistant|system|tool): ([\s\S]*)$/;

/** One conversation: ingest, then every question at every budget. */
async function runConversation(conv) {
  const turns = memoriesRows.filter((t) => t.conv_id === conv.conv_id);
  const questions = queryRows.filter((q) => q.conv_id === conv.conv_id && CATEGORY[q.category] && q.evidence?.length);
  const store = mapAdapter();
  const namespace = `locomo-${conv.conv_id}`;
  const diaOf = new Map(); // message id -> dia_id
  const msgOf = new Map(); // dia_id -> { id, role, session }
  const turnByKey = new Map(); // "day|role|text" -> [dia_id]
  const bySession = new Map();
  for (const t of turns) {
    if (!bySession.has(t.session)) bySession.set(t.session, []);
    bySession.get(t.session).push(t);
  }
  for (const [session, list] of bySession) {
    const memory = await Memory.open({ namespace, sessionId: `session-${session}`, store });
    memory.setTokenizer(tok);
    const first = list[0].speaker;
    for (const t of list) {
      const role = t.speaker === first ? "user" : "assistant";
      const entry = await memory.add({ role, content: t.text, timestamp: Date.parse(t.timestamp) });
      diaOf.set(entry.id, t.dia_id);
      msgOf.set(t.dia_id, { id: entry.id, role, session: `session-${session}`, text: t.text });
      const key = `${day(entry.timestamp)}|${role}|${fold(t.text)}`;
      turnByKey.set(key, [...(turnByKey.get(key) ?? []), t.dia_id]);
    }
    await memory.endSession();
    await memory.idle();
    memory.free();
  }

  // The memories session end wrote, by the text a block line carries.
  const reader = await Memory.open({ namespace, sessionId: "reader", store });
  const facts = await reader.memories();
  reader.free();
  const factByText = new Map(facts.map((e) => [fold(e.content), e]));
  const derived = new Map(); // dia_id -> memories drawn from it
  for (const e of facts) for (const s of e.sources ?? []) {
    const d = diaOf.get(s);
    if (d) derived.set(d, [...(derived.get(d) ?? []), e]);
  }
  const unmatched = [];

  /** The dia_ids a block carries: as turns, and as memories' sources. */
  function trace(block) {
    const viaTurn = new Set();
    const viaFact = new Set();
    const factSources = [];
    for (const line of [...block.profile, ...block.agent]) {
      let e = factByText.get(line);
      if (!e && line.length >= 1000) e = facts.find((f) => fold(f.content).startsWith(line));
      if (!e) { unmatched.push(line); continue; }
      for (const s of e.sources ?? []) if (diaOf.has(s)) viaFact.add(diaOf.get(s));
      factSources.push({ line, dias: (e.sources ?? []).map((s) => diaOf.get(s)).filter(Boolean) });
    }
    for (const line of block.past) {
      const m = PAST.exec(line);
      let ids = m && turnByKey.get(`${m[1]}|${m[2]}|${m[3]}`);
      if (!ids && m && m[3].length >= 1000) {
        ids = turns.filter((t) => day(Date.parse(t.timestamp)) === m[1] && fold(t.text).startsWith(m[3])).map((t) => t.dia_id);
      }
      if (!ids?.length) { unmatched.push(line); continue; }
      for (const d of ids) viaTurn.add(d);
    }
    for (const line of block.other) unmatched.push(line);
    // Memories whose every source turn is in the block too: the same words sent twice.
    const echoed = factSources.filter((f) => f.dias.length && f.dias.every((d) => viaTurn.has(d)));
    return { viaTurn, viaFact, echoedTokens: echoed.reduce((n, f) => n + tok.count(`- ${f.line}\n`), 0), echoed: echoed.length };
  }

  // The pinned profile: what a query that matches nothing still gets.
  const probe = await Memory.open({ namespace, sessionId: "pinned-probe", store, ...extraOptions });
  probe.setTokenizer(tok);
  const pinned = new Set(blockOf((await probe.buildContext({ recall: "zqxj vwkq" })).messages).profile);
  probe.free();

  // The peers: raw turns, BM25 and hybrid, over the same turns.
  const lexical = new SearchIndex();
  const hybrid = new SearchIndex();
  turns.forEach((t, i) => {
    const context = [];
    for (const j of [i - 2, i + 2, i - 1, i + 1].sort((a, b) => a - b)) {
      if (turns[j] && turns[j].session === t.session) context.push(turns[j].text);
    }
    const doc = { id: t.dia_id, text: t.text, context: context.join("\n"), timestamp: Date.parse(t.timestamp) };
    lexical.add(doc);
    hybrid.add({ ...doc, embedding: turnVector(t.row) });
  });
  const lineOf = new Map(turns.map((t) => {
    const line = `- [${day(Date.parse(t.timestamp))}] ${t.text}\n`;
    return [t.dia_id, { line, tokens: tok.count(line) }];
  }));
  /** A peer's ranked turns, whole lines while they fit `budget` tokens. */
  function cut(ranked, budget) {
    const kept = [];
    let used = 0;
    for (const id of ranked) {
      const { tokens } = lineOf.get(id);
      if (used + tokens > budget) break;
      kept.push(id);
      used += tokens;
    }
    while (kept.length && tok.count(kept.map((id) => lineOf.get(id).line).join("")) > budget) kept.pop();
    return new Set(kept);
  }

  const rows = [];
  for (const q of questions) {
    const now = Date.parse(conv.now);
    const peerRank = {
      bm25: lexical.search(q.question, { topK: 400, now }).map((h) => h.id),
      hybrid: hybrid.search(q.question, { topK: 400, now, vector: queryVector(q.row), fusion: "minmax", alpha: 0.5 }).map((h) => h.id),
    };
    const row = {
      qid: q.qid, category: CATEGORY[q.category], evidence: q.evidence, question: q.question, points: {},
      roles: q.evidence.map((d) => msgOf.get(d).role), extracted: q.evidence.map((d) => (derived.get(d) ?? []).length > 0),
    };
    for (const budget of ["default", ...BUDGETS]) {
      const sessionId = `question-${q.qid.split("/q")[1]}-${budget}`;
      const memory = await Memory.open({ namespace, sessionId, store, ...extraOptions, ...(budget === "default" ? {} : { longTermBudget: budget }) });
      memory.setTokenizer(tok);
      const t0 = performance.now();
      const { messages, report } = await memory.buildContext({ query: q.question });
      buildMs.push(performance.now() - t0);
      const block = blockOf(messages);
      const { viaTurn, viaFact, echoed, echoedTokens } = trace(block);
      const sent = new Set([...viaTurn, ...viaFact]);
      const pinnedTokens = block.profile.filter((l) => pinned.has(l)).reduce((n, l) => n + tok.count(`- ${l}\n`), 0);
      const point = {
        tokens: report.longTerm,
        truncated: report.longTermTruncated,
        recall: q.evidence.filter((d) => sent.has(d)).length / q.evidence.length,
        found: q.evidence.filter((d) => sent.has(d)),
        viaTurn: q.evidence.filter((d) => viaTurn.has(d)).length,
        viaFact: q.evidence.filter((d) => viaFact.has(d)).length,
        viaPinnedOnly: q.evidence.filter((d) => !viaTurn.has(d) && block.profile.some((l) => pinned.has(l) && (factByText.get(l)?.sources ?? []).some((s) => diaOf.get(s) === d)) && !block.profile.some((l) => !pinned.has(l) && (factByText.get(l)?.sources ?? []).some((s) => diaOf.get(s) === d))).length,
        pinnedTokens,
        echoed,
        echoedTokens,
        profileTokens: block.profile.reduce((n, l) => n + tok.count(`- ${l}\n`), 0),
        lines: { profile: block.profile.length, past: block.past.length, pastAssistant: block.past.filter((l) => PAST.exec(l)?.[2] === "assistant").length },
      };
      for (const [peer, ranked] of Object.entries(peerRank)) {
        const kept = cut(ranked, report.longTerm);
        point[peer] = q.evidence.filter((d) => kept.has(d)).length / q.evidence.length;
        point[`${peer}Found`] = q.evidence.filter((d) => kept.has(d));
      }
      row.points[budget] = point;
      if (budget === "default") row.diagnosis = await diagnose(memory, sessionId, q, point);
      await memory.clearSession();
      memory.free();
    }
    rows.push(row);
  }
  return { rows, unmatched, facts: facts.length, turns: turns.length };

  /** The texts of a turn's two neighbours on each side in its session. */
  function neighboursOf(d) {
    const i = turns.findIndex((t) => t.dia_id === d);
    return [i - 2, i - 1, i + 1, i + 2].filter((j) => turns[j]?.session === turns[i].session).map((j) => turns[j].text);
  }

  /** Why each evidence turn the default block missed was missed. */
  async function diagnose(memory, sessionId, q, point) {
    const missed = q.evidence.filter((d) => !point.found.includes(d));
    if (!missed.length) return [];
    const other = (h) => h.session !== sessionId;
    const turnHits = (await memory.search(q.question, { topK: 5000, scopes: ["session"] })).filter(other);
    const factHits = await memory.search(q.question, { topK: 5000, scopes: ["user"] });
    const factFloor = new Set((await memory.search(q.question, { topK: 5000, scopes: ["user"], minScore: 0.3, minCoverage: 0.2 })).map((h) => h.id));
    const turnFloor = (turnHits[0]?.score ?? 0) * 0.3;
    const asked = unnamed(q.question);
    return missed.map((d) => {
      const msg = msgOf.get(d);
      const from = derived.get(d) ?? [];
      const turnRank = turnHits.findIndex((h) => h.id === msg.id);
      const factRank = factHits.findIndex((h) => (h.sources ?? []).includes(msg.id));
      const best = Math.min(...[turnRank, factRank].filter((r) => r >= 0).map((r) => r + 1), Infinity);
      // Turns of the other speaker (the assistant role) ranked above it that are not evidence.
      const assistantAbove = turnRank < 0 ? 0 : turnHits.slice(0, turnRank).filter((h) => h.role === "assistant" && !q.evidence.includes(diaOf.get(h.id))).length;
      // A content word in common (the library's analyzer: stop words out, stemmed), the speakers' names aside.
      const shared = [msg.text, ...from.map((e) => e.content)].some((text) => sharesTerm(asked, unnamed(text)));
      const near = !shared && neighboursOf(d).some((text) => sharesTerm(asked, unnamed(text)));
      let reason;
      if (!shared && !near) reason = "no content word in the turn, its neighbours or its memories";
      else if (!shared) reason = "no content word in the turn or its memories, one in a neighbour";
      else if ((turnRank >= 0 && turnRank < 10 && turnHits[turnRank].score >= turnFloor) || (factRank >= 0 && factRank < 10 && factFloor.has(factHits[factRank].id))) reason = point.truncated ? "in the top 10, cut by the budget" : "in the top 10, not sent (?)";
      else if (best <= 10) reason = "in the top 10, under the relative floor";
      else if (best <= 20) reason = "shares a word, ranked 11-20";
      else if (best <= 50) reason = "shares a word, ranked 21-50";
      else reason = "shares a word, ranked 51+";
      return {
        bm25: point.bm25Found.includes(d), hybrid: point.hybridFound.includes(d),
        dia: d, role: msg.role, extracted: from.length, turnRank: turnRank < 0 ? null : turnRank + 1, factRank: factRank < 0 ? null : factRank + 1,
        reason, withoutOther: turnRank >= 10 && msg.role === "user" && turnRank - assistantAbove < 10, text: msg.text,
      };
    });
  }
}

/** `text` without the speaker prefix or any speaker's name. */
let names = /$^/;
const unnamed = (text) => text.replace(/^[^:]{1,40}: /, "").replace(names, " ");
/** Whether `query` and `text` share a term under the library's analyzer. */
function sharesTerm(query, text) {
  const one = new SearchIndex();
  one.add({ id: "t", text });
  const hit = one.search(query, { topK: 1 }).length > 0;
  one.free();
  return hit;
}

const all = [];
const unmatched = [];
let nFacts = 0, nTurns = 0;
for (const conv of conversations) {
  names = new RegExp(`\\b(${[conv.speaker_a, conv.speaker_b].join("|")})('s)?\\b`, "gi");
  const r = await runConversation(conv);
  all.push(...r.rows);
  unmatched.push(...r.unmatched);
  nFacts += r.facts;
  nTurns += r.turns;
}
const seconds = (performance.now() - started) / 1000;

// ---- report
const cats = ["multi_hop", "temporal", "open_domain", "single_hop"];
const at = (budget, field, rows = all) => mean(rows.map((r) => r.points[budget][field]));
console.log(`Evidence recall on what buildContext sends: LoCoMo ${split} split (${conversations.length} conversations, ${nTurns} turns, ${nFacts} memories by rule, ${all.length} questions); o200k; ${machine()}`);
if (Object.keys(extraOptions).length) console.log(`Question instances opened with ${JSON.stringify(extraOptions)}`);
console.log(`Deterministic (no model, same input, same output): one run, no spread; buildContext took ${showSpread(buildMs, 1)} ms per request; ${seconds.toFixed(0)} s in all.`);
console.log("\nAt the default long-term budget, peers at the same tokens per question:");
console.table(["all", ...cats].map((c) => {
  const rows = c === "all" ? all : all.filter((r) => r.category === c);
  return {
    category: c, questions: rows.length,
    "Memory": r3(at("default", "recall", rows)),
    "BM25 turns": r3(at("default", "bm25", rows)),
    "hybrid turns": r3(at("default", "hybrid", rows)),
    "long-term tokens": Math.round(at("default", "tokens", rows)),
  };
}));
const evidenceTotal = all.reduce((n, r) => n + r.evidence.length, 0);
const sum = (f) => all.reduce((n, r) => n + f(r.points.default), 0);
console.log(`Of ${evidenceTotal} evidence turns, sent: ${sum((p) => p.found.length)} (${sum((p) => p.viaTurn)} as a past turn, ${sum((p) => p.viaFact)} as a memory's source, ${sum((p) => p.viaPinnedOnly)} only through a pinned profile fact). Block: ${mean(all.map((r) => r.points.default.lines.profile)).toFixed(1)} profile lines, ${mean(all.map((r) => r.points.default.lines.past)).toFixed(1)} past turns (${mean(all.map((r) => r.points.default.lines.pastAssistant)).toFixed(1)} of the assistant role), pinned facts ${Math.round(at("default", "pinnedTokens"))} tokens on average; ${at("default", "echoed").toFixed(1)} memories (${Math.round(at("default", "echoedTokens"))} tokens) whose source turns are sent too.`);
{
  const ev = all.flatMap((r) => r.evidence.map((d, i) => ({ role: r.roles[i], extracted: r.extracted[i], sent: r.points.default.found.includes(d) })));
  const part = (f) => { const l = ev.filter(f); return `${l.length} (sent ${l.filter((e) => e.sent).length}, ${(l.filter((e) => e.sent).length / Math.max(l.length, 1)).toFixed(3)})`; };
  console.log(`Evidence turns said by the session's first speaker (the user role): ${part((e) => e.role === "user")}, of them with a memory extracted at session end: ${part((e) => e.role === "user" && e.extracted)}; said by the second speaker (the assistant role, never extracted by rule): ${part((e) => e.role === "assistant")}.`);
}
if (unmatched.length) console.log(`WARNING: ${unmatched.length} block lines matched no stored record, e.g. ${JSON.stringify(unmatched[0].slice(0, 120))}`);

console.log("\nBudget curve (longTermBudget), peers cut per question to the tokens Memory used:");
const curve = BUDGETS.map((b) => ({
  budget: b,
  long_term_tokens: Math.round(at(b, "tokens")),
  memory: r3(at(b, "recall")),
  bm25: r3(at(b, "bm25")),
  hybrid: r3(at(b, "hybrid")),
  pinned_tokens: Math.round(at(b, "pinnedTokens")),
  past_turns: +mean(all.map((r) => r.points[b].lines.past)).toFixed(1),
  profile_lines: +mean(all.map((r) => r.points[b].lines.profile)).toFixed(1),
  profile_tokens: Math.round(at(b, "profileTokens")),
  truncated: r3(mean(all.map((r) => (r.points[b].truncated ? 1 : 0)))),
  ...Object.fromEntries(cats.map((c) => [c, r3(at(b, "recall", all.filter((r) => r.category === c)))])),
}));
console.table(curve.map((p) => ({
  "budget": p.budget, "tokens used": p.long_term_tokens, "Memory": p.memory, "BM25 turns": p.bm25, "hybrid turns": p.hybrid,
  "Memory - BM25": r3(p.memory - p.bm25), "profile (pinned) tokens": `${p.profile_tokens} (${p.pinned_tokens})`, "lines: profile / turns": `${p.profile_lines} / ${p.past_turns}`, "block cut": p.truncated,
  ...Object.fromEntries(cats.map((c) => [c, p[c]])),
})));
// What a smaller budget loses against the full one, and what pinned facts held of it.
for (const b of BUDGETS.slice(0, -1)) {
  const lost = all.reduce((n, r) => n + r.points[4000].found.filter((d) => !r.points[b].found.includes(d)).length, 0);
  console.log(`  at ${b}: ${lost} evidence turns sent at 4,000 are not; pinned facts hold ${Math.round((100 * at(b, "pinnedTokens")) / Math.max(at(b, "tokens"), 1))}% of the tokens.`);
}

console.log("\nWhy evidence is missed at the default budget (each missed evidence turn, first reason that applies):");
const misses = all.flatMap((r) => (r.diagnosis ?? []).map((d) => ({ ...d, category: r.category, qid: r.qid, question: r.question })));
const reasons = [...new Set(misses.map((m) => m.reason))];
console.table(reasons.map((reason) => {
  const list = misses.filter((m) => m.reason === reason);
  return {
    reason, all: list.length,
    ...Object.fromEntries(cats.map((c) => [c, list.filter((m) => m.category === c).length])),
    "said by the assistant role": list.filter((m) => m.role === "assistant").length,
    "a memory was extracted": list.filter((m) => m.extracted).length,
    "top 10 without the other speaker's turns": list.filter((m) => m.withoutOther).length,
    "sent by BM25 turns": list.filter((m) => m.bm25).length,
    "sent by hybrid turns": list.filter((m) => m.hybrid).length,
  };
}).sort((a, b) => b.all - a.all));
console.log(`Missed evidence turns: ${misses.length}; spoken by the session's second speaker (the assistant role, never extracted by rule): ${misses.filter((m) => m.role === "assistant").length}; of the first speaker's, with no memory extracted: ${misses.filter((m) => m.role === "user" && !m.extracted).length}.`);
if (args.includes("--misses")) {
  for (const m of misses.filter((x) => ["multi_hop", "open_domain"].includes(x.category))) {
    console.log(`  ${m.qid} [${m.category}] ${m.question}\n    ${m.dia} (${m.role}, turn rank ${m.turnRank ?? "-"}, memory rank ${m.factRank ?? "-"}, ${m.extracted} extracted): ${m.reason}\n    ${m.text.slice(0, 160)}`);
  }
}

const byCat = Object.fromEntries(cats.map((c) => [c, r3(at("default", "recall", all.filter((r) => r.category === c)))]));
console.log(JSON.stringify({
  evidence_recall: r3(at("default", "recall")),
  long_term_tokens: Math.round(at("default", "tokens")),
  multi_hop: byCat.multi_hop, open_domain: byCat.open_domain, temporal: byCat.temporal, single_hop: byCat.single_hop,
  split, questions: all.length,
  bm25_same_tokens: r3(at("default", "bm25")), hybrid_same_tokens: r3(at("default", "hybrid")),
  curve: curve.map(({ budget, long_term_tokens, memory, bm25, hybrid }) => ({ budget, long_term_tokens, memory, bm25, hybrid })),
}));
