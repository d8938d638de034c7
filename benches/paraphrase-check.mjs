// Checks the everyday-paraphrase set (benches/data/paraphrase): the
// no-shared-content-word rule between each question and its fact, the
// answer strings, the splits and the distractor pool.
//
//   node benches/paraphrase-check.mjs            # exits 1 on any failure
//   node benches/paraphrase-check.mjs --strict   # also lists shared Chinese
//                                                # characters (a warning only)
//
// Content words, deliberately simple: lowercase runs of letters and digits
// outside Han script, less the package's English stop words, with a light
// suffix stemmer (so "works" meets "work"); Chinese as character bigrams
// within runs cut at a short list of function characters.
import fs from "node:fs";
import { STOP_WORDS } from "./stop-words.mjs";

const DIR = new URL("./data/paraphrase/", import.meta.url);
const stop = new Set(STOP_WORDS);
const HAN = /\p{Script=Han}/u;
/** Function characters: they cut a Chinese run and never count as content. */
export const FUNCTION_CHARS = new Set([..."我你他她它们的地得是了吗呢吧啊呀么什哪那这个一不没很在有和也都就还又给把被对从到为与着过要会几多谁怎样啥吗嘛哦"]);

const stem = (w) => {
  w = w.replace(/'s$/, "");
  if (w.length > 4 && w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith("es")) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
};

/** The content terms of a text: English stems and Chinese bigrams (and unigrams, for --strict). */
export function contentTerms(text) {
  const words = new Set();
  const bigrams = new Set();
  const unigrams = new Set();
  const lower = text.toLowerCase();
  for (const w of lower.replace(/\p{Script=Han}+/gu, " ").match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []) {
    if (stop.has(w)) continue;
    const s = stem(w.replace(/'.*$/, ""));
    if (s && !stop.has(s)) words.add(s);
  }
  for (const run of lower.match(/\p{Script=Han}+/gu) ?? []) {
    let prev = null;
    for (const c of run) {
      if (FUNCTION_CHARS.has(c)) {
        prev = null;
        continue;
      }
      unigrams.add(c);
      if (prev) bigrams.add(prev + c);
      prev = c;
    }
  }
  return { words, bigrams, unigrams };
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/**
 * The matcher of an answer string: Chinese as a substring; otherwise a
 * whole word, case-insensitive, allowing a plural or possessive ending.
 */
export function answerPattern(answer) {
  if (HAN.test(answer)) return new RegExp(escape(answer), "u");
  return new RegExp(`(?<![\\p{L}\\p{N}])${escape(answer)}(?:s|es|'s)?(?![\\p{L}\\p{N}])`, "iu");
}

export function readJsonl(name, dir = DIR) {
  return fs
    .readFileSync(new URL(name, dir), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** Every rule; returns { errors, warnings, counts }. */
export function check({ strict = false, extraTexts = [] } = {}) {
  const facts = readJsonl("facts.jsonl");
  const questions = readJsonl("questions.jsonl");
  const distractors = readJsonl("distractors.jsonl");
  const errors = [];
  const warnings = [];
  const ids = new Set();
  const factOf = new Map(facts.map((f) => [f.id, f]));
  const TOPICS = ["pets", "family", "work", "food", "places", "health", "plans", "dates"];
  for (const row of [...facts, ...questions, ...distractors]) {
    if (ids.has(row.id)) errors.push(`duplicate id ${row.id}`);
    ids.add(row.id);
    if (!["en", "zh"].includes(row.lang)) errors.push(`${row.id}: lang must be en or zh`);
  }
  for (const f of facts) {
    if (!TOPICS.includes(f.topic)) errors.push(`${f.id}: unknown topic ${f.topic}`);
    if (!["dev", "test"].includes(f.split)) errors.push(`${f.id}: split must be dev or test`);
    if (!Array.isArray(f.aliases) || !f.aliases.length) errors.push(`${f.id}: no aliases`);
    if (!answerPattern(f.answer).test(f.text)) errors.push(`${f.id}: answer "${f.answer}" is not in its text`);
    for (const g of facts) {
      if (g !== f && answerPattern(f.answer).test(g.text)) errors.push(`${f.id}: answer "${f.answer}" also in fact ${g.id}`);
    }
    for (const d of distractors) {
      if (answerPattern(f.answer).test(d.text)) errors.push(`${f.id}: answer "${f.answer}" in distractor ${d.id}`);
    }
    for (const t of extraTexts) {
      if (answerPattern(f.answer).test(t)) errors.push(`${f.id}: answer "${f.answer}" in "${t}"`);
    }
  }
  for (const q of questions) {
    const f = factOf.get(q.fact);
    if (!f) {
      errors.push(`${q.id}: no fact ${q.fact}`);
      continue;
    }
    if (q.split !== f.split) errors.push(`${q.id}: split differs from its fact's`);
    for (const g of facts) {
      if (answerPattern(g.answer).test(q.text)) errors.push(`${q.id}: contains the answer "${g.answer}" of ${g.id}`);
    }
    const a = contentTerms(q.text);
    const b = contentTerms(f.text);
    const words = [...a.words].filter((w) => b.words.has(w));
    const bigrams = [...a.bigrams].filter((w) => b.bigrams.has(w));
    if (words.length || bigrams.length) {
      errors.push(`${q.id}: shares ${[...words, ...bigrams].join(", ")} with ${f.id} ("${q.text}" / "${f.text}")`);
    }
    if (strict) {
      const chars = [...a.unigrams].filter((c) => b.unigrams.has(c));
      if (chars.length) warnings.push(`${q.id}: shares the character(s) ${chars.join(" ")} ("${q.text}" / "${f.text}")`);
    }
  }
  const texts = new Set();
  for (const d of distractors) {
    if (texts.has(d.text)) errors.push(`${d.id}: duplicate distractor`);
    texts.add(d.text);
  }
  for (const f of facts) if (texts.has(f.text)) errors.push(`${f.id}: also a distractor`);
  const cross = questions.filter((q) => q.lang !== factOf.get(q.fact)?.lang).length;
  const counts = {
    facts: facts.length,
    questions: questions.length,
    cross,
    distractors: distractors.length,
    dev_facts: facts.filter((f) => f.split === "dev").length,
    test_facts: facts.filter((f) => f.split === "test").length,
  };
  if (counts.facts < 80) errors.push(`only ${counts.facts} facts (at least 80)`);
  if (counts.questions < 120) errors.push(`only ${counts.questions} questions (at least 120)`);
  if (cross < 20) errors.push(`only ${cross} cross-language questions (at least 20)`);
  if (counts.distractors < 300) errors.push(`only ${counts.distractors} distractors (at least 300)`);
  return { errors, warnings, counts };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { errors, warnings, counts } = check({ strict: process.argv.includes("--strict") });
  for (const w of warnings) console.log(`warning: ${w}`);
  for (const e of errors) console.log(`error: ${e}`);
  console.log(JSON.stringify(counts));
  console.log(errors.length ? `${errors.length} error(s)` : "ok: every question shares no content word with its fact");
  process.exit(errors.length ? 1 : 0);
}
