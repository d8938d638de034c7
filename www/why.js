// "Recalled, and why" in words: one sentence per hit, from what the search
// returned (`explain`, `source`, `scope`, `timestamp`) and from the library's
// own analyzer. Which words of the question a memory matched is found by
// asking a one-document `SearchIndex` about each word alone; a word found
// without being in the text met it through a form of the word (puppies,
// puppy) or an everyday concept (dog, retriever: pets), which a second small
// index, one document per concept, names.
import { SearchIndex } from "./pkg/index.js";

const CONCEPTS = [
  ["pets", "pet"], ["work", "job"], ["food", "food"], ["family", "family"], ["home", "home"],
  ["health", "health"], ["travel", "trip"], ["hobbies", "hobby"], ["dates", "birthday"],
  ["study", "study"], ["languages", "language"], ["cars", "car"], ["names", "name"],
];
// Chinese words too common to be worth naming as a match.
const FILLER = new Set("我 你 他 她 它 的 了 是 对 在 吗 呢 吧 啊 和 也 都 就 要 去 有 这 那 个 一 什么 怎么 哪".split(" "));
const segmenter = new Intl.Segmenter(undefined, { granularity: "word" });
const words = (text) => {
  const seen = new Set();
  for (const s of segmenter.segment(text)) {
    const w = s.segment.toLowerCase().replace(/['’]s$/, "");
    if (s.isWordLike && !FILLER.has(w)) seen.add(w);
  }
  return [...seen];
};

let conceptIndex = null;
function conceptsOf(word) {
  if (!conceptIndex) {
    conceptIndex = new SearchIndex();
    for (const [id, text] of CONCEPTS) conceptIndex.add({ id, text });
  }
  return conceptIndex.search(word).map((h) => h.id);
}

/** How each word of `query` meets `text`: [{ word, via?: word, concept?: name }]. */
export function matchedWords(query, text) {
  const index = new SearchIndex();
  try {
    index.add({ id: "hit", text });
    const lower = text.toLowerCase();
    const own = words(text);
    const matches = [];
    for (const word of words(query)) {
      if (!index.search(word, { topK: 1 }).length) continue;
      if (lower.includes(word)) {
        matches.push({ word });
        continue;
      }
      const stem = Math.max(3, Math.min(word.length, 5) - 2);
      const form = own.find((w) => w.slice(0, stem) === word.slice(0, stem));
      if (form) {
        matches.push({ word, via: form });
        continue;
      }
      const mine = conceptsOf(word);
      const via = own.find((w) => conceptsOf(w).some((c) => mine.includes(c)));
      const concept = via ? conceptsOf(via).find((c) => mine.includes(c)) : mine[0];
      matches.push({ word, via, concept });
    }
    return matches;
  } finally {
    index.free();
  }
}

const quote = (w) => `“${w}”`;
const list = (items) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

function age(ms) {
  const minutes = Math.round(Math.max(0, ms) / 60_000);
  if (minutes < 1) return "moments";
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} hour${hours === 1 ? "" : "s"}`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? "" : "s"}`;
}

function what(hit, turn, session) {
  if (hit.source === "summary") return hit.session === session ? "A summary of earlier messages in this chat" : `A summary of the chat ${hit.session}`;
  if (hit.source === "turn") {
    if (hit.role === "user" && hit.text === turn.text && Math.abs(hit.timestamp - turn.at) < 60_000) return "The message you just sent (the search sees it too)";
    const who = hit.role === "assistant" ? "Something the assistant said" : hit.role === "user" ? "Something you said" : "A message";
    return `${who} ${hit.session && hit.session !== session ? `in the chat ${hit.session}` : "in this chat"}`;
  }
  const scope = String(hit.scope ?? "");
  return scope.startsWith("agent:") ? `A fact the agent ${scope.slice(6)} keeps` : "A fact about you in long-term memory";
}

/** One sentence a person can read about why `hit` was recalled for `turn`. */
export function whySentence(hit, turn, session) {
  const e = hit.explain;
  const parts = [];
  const matches = matchedWords(turn.text, hit.text);
  const said = matches.map((m) => (m.concept ? `${quote(m.word)} through ${m.via ? `${quote(m.via)} (both about ${m.concept})` : `the concept ${m.concept}`}` : m.via ? `${quote(m.word)} as ${quote(m.via)}` : quote(m.word)));
  const share = e.coverage >= 0.995 ? "all" : `about ${Math.max(1, Math.round(e.coverage * 100))}%`;
  if (said.length) parts.push(`Matched ${list(said)}: ${share} of what the question asks${share === "all" ? "" : " (rarer words count more)"}.`);
  else if (e.vector == null) parts.push("No word of the question is in its own text: the search found it through the messages next to it or its aliases.");
  if (e.vector != null) parts.push(`Close in meaning to the question (cosine ${e.vector.toFixed(2)}).`);
  const source = what(hit, turn, session);
  const when = hit.timestamp > turn.at - 60_000 ? "just before this turn" : `${age(turn.at - hit.timestamp)} before this turn`;
  parts.push(source.startsWith("The message you just sent") ? `${source}.` : `${source}, written ${when}.`);
  if (e.sourceWeight > 1) parts.push(`Long-term memories count ${e.sourceWeight}×.`);
  if (e.decay < 1) parts.push(`Its age lowers it to ${Math.round(e.decay * 100)}%.`);
  if (e.mmrPenalty > 0) parts.push("Ranked a little lower for repeating a higher hit.");
  return parts.join(" ");
}

/** The raw numbers behind the sentence. */
export function numbers(hit) {
  const e = hit.explain;
  const f = (x, d = 2) => (x == null ? "–" : Number(x).toFixed(d));
  return [
    ["score", f(hit.score, 3)], ["bm25", f(e.bm25)], ["coverage", f(e.coverage)], ["vector", f(e.vector)],
    ["relevance", f(e.relevance)], ["decay", f(e.decay)], ["source weight", f(e.sourceWeight)],
    ["importance weight", f(e.importanceWeight)], ["MMR penalty", f(e.mmrPenalty)],
  ];
}
