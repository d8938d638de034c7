// npm run --silent bench:extract
//
// Session-end extraction scored on LoCoMo's observations (the gold facts
// about each speaker of a session, with the turns they come from; read from
// ../shared/data/locomo, never copied here) by its scorer, observations.py,
// in its protocol: each dev session's turns with one speaker as the user
// and the other as the assistant; the memories with their sources mapped
// back to dia_ids. Rows:
// - rules, `extractMemories` (what endSession falls back to without a model);
// - rules through `Memory.endSession` with no model: the same extraction,
//   then dedup on write, read back from the store with `sources`;
// - the model through `Memory.endSession`, when AGENT_MEMORY_LLM_URL names
//   an OpenAI-compatible chat endpoint (AGENT_MEMORY_LLM_MODEL, _KEY).
// Also our Chinese set (benches/data/zh/observations.jsonl: 48 facts about
// the speakers of its six sessions, written with it). observations.py reads
// text as [a-z0-9] words, so for Chinese its text recall and tokens mean
// nothing: there the bench scores text the same way on character bigrams
// (and Latin words), and counts characters per memory. Last line: the
// figures of the rules on the dev split, as one JSON object.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Memory, extractMemories } from "../pkg/node.js";
import { machine } from "./stats.mjs";

const data = process.env.LOCOMO_DATA ?? new URL("../../shared/data/locomo/", import.meta.url).pathname;
const zhData = new URL("./data/zh/", import.meta.url).pathname;
const read = (path) => readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const dir = mkdtempSync(join(tmpdir(), "bench-extract-"));
// The scorer's one dependency (the stemmer bench.py uses too).
try {
  execFileSync("python3", ["-c", "import snowballstemmer"], { stdio: "ignore" });
} catch {
  execFileSync("python3", ["-m", "pip", "install", "--quiet", "snowballstemmer"], { stdio: "inherit" });
}

/** Each (conversation, session, speaker) of the gold, with the session's turns. */
function units(folder) {
  const turns = read(`${folder}/memories.jsonl`);
  const gold = read(`${folder}/observations.jsonl`);
  const keys = [...new Set(gold.map((o) => JSON.stringify([o.conv_id, o.session, o.speaker])))].map((k) => JSON.parse(k));
  return keys.map(([conv, session, speaker]) => ({
    conv, session, speaker,
    messages: turns
      .filter((t) => t.conv_id === conv && t.session === session)
      .map((t) => ({
        id: t.dia_id,
        role: t.speaker === speaker ? "user" : "assistant",
        content: t.text.slice(t.text.indexOf(": ") + 2),
        timestamp: Date.parse(t.timestamp),
      })),
  }));
}

/** Character bigrams of CJK runs and lowercase Latin words. */
function grams(text) {
  const out = [];
  for (const run of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = [...run];
    if (!chars.some((c) => /\p{Script=Han}/u.test(c))) { out.push(run); continue; }
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  }
  return out;
}
function f1(a, b) {
  const ga = grams(a), gb = grams(b);
  if (!ga.length || !gb.length) return 0;
  const bag = new Map();
  for (const g of ga) bag.set(g, (bag.get(g) ?? 0) + 1);
  let hit = 0;
  for (const g of gb) if (bag.get(g) > 0) { hit += 1; bag.set(g, bag.get(g) - 1); }
  if (!hit) return 0;
  const p = hit / gb.length, r = hit / ga.length;
  return (2 * p * r) / (p + r);
}
/** Text recall on bigrams (F1 >= 0.3, as observations.py on words) and characters per memory. */
function chineseText(folder, rows) {
  const gold = read(`${folder}/observations.jsonl`);
  const mine = new Map(rows.map((r) => [JSON.stringify([r.conv_id, r.session, r.speaker]), r.memories]));
  const hits = gold.filter((g) => (mine.get(JSON.stringify([g.conv_id, g.session, g.speaker])) ?? []).some((m) => f1(g.text, m.text) >= 0.3));
  const all = rows.flatMap((r) => r.memories);
  return { text_recall: +(hits.length / gold.length).toFixed(3), tokens_per_memory: +(all.reduce((n, m) => n + [...m.text].length, 0) / Math.max(all.length, 1)).toFixed(1) };
}

function score(folder, name, rows) {
  const run = join(dir, `${name}.jsonl`);
  writeFileSync(run, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const out = execFileSync("python3", [`${data}/observations.py`, "score", "--data", folder, "--run", run], { encoding: "utf8" });
  const lines = out.trim().split("\n");
  const figures = JSON.parse(lines.at(-1));
  return { table: lines.slice(0, -1).join("\n"), figures: folder === zhData ? { ...figures, ...chineseText(folder, rows) } : figures };
}

const byRules = (u) => extractMemories(u.messages).map((m) => ({ text: m.content, sources: m.sources }));

/** Through Memory: the session added, ended, the memories read back. */
async function throughMemory(u, llm) {
  const memory = await Memory.open({ store: "memory", namespace: "bench", sessionId: `${u.conv}-${u.session}`, ...(llm ? { llm } : {}) });
  const idOf = new Map();
  for (const m of u.messages) {
    const entry = await memory.add({ role: m.role, content: m.content, timestamp: m.timestamp });
    idOf.set(entry.id, m.id);
  }
  await memory.endSession();
  const memories = (await memory.memories()).map((e) => ({ text: e.content, sources: (e.sources ?? []).map((s) => idOf.get(s)).filter(Boolean) }));
  memory.free();
  return memories;
}

const results = [];
for (const [label, folder] of [["LoCoMo dev", data], ["our Chinese set", zhData]]) {
  const list = units(folder);
  const run = async (name, extract) => {
    const rows = [];
    for (const u of list) rows.push({ conv_id: u.conv, session: u.session, speaker: u.speaker, memories: await extract(u) });
    const r = score(folder, `${label}-${name}`.replace(/\W+/g, "-"), rows);
    results.push({ set: label, extractor: name, ...r.figures });
    return r;
  };
  await run("rules (extractMemories)", byRules);
  await run("rules through Memory.endSession", (u) => throughMemory(u, null));
  if (process.env.AGENT_MEMORY_LLM_URL) {
    const llm = {
      endpoint: process.env.AGENT_MEMORY_LLM_URL, model: process.env.AGENT_MEMORY_LLM_MODEL ?? "default",
      headers: process.env.AGENT_MEMORY_LLM_KEY ? { authorization: `Bearer ${process.env.AGENT_MEMORY_LLM_KEY}` } : {},
    };
    await run(`model through Memory.endSession (${llm.model})`, (u) => throughMemory(u, llm));
  }
}

console.log(`Extraction on LoCoMo observations (dev split) and our Chinese set, scored by observations.py; ${machine()}; deterministic: one run`);
console.table(results.map((r) => ({
  set: r.set, extractor: r.extractor, "evidence recall": r.evidence_recall, "text recall": r.text_recall,
  precision: r.precision, "per session": r.memories_per_session,
  [`tokens/memory (Chinese: chars)`]: r.tokens_per_memory,
})));
const dev = results.find((r) => r.set === "LoCoMo dev" && r.extractor.startsWith("rules (")); 
console.log(JSON.stringify({
  evidence_recall: dev.evidence_recall, text_recall: dev.text_recall, precision: dev.precision,
  memories_per_session: dev.memories_per_session, tokens_per_memory: dev.tokens_per_memory,
}));
