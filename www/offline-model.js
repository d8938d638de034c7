// The demo's offline model: deterministic, no network, so the page works
// with no key. It answers the library's three requests (the judge, conflict
// resolution, summaries) through the `llm` hook the way a model would be
// asked to, with the library's own rule extractor doing the judging, and it
// writes the chat's replies from the whole context it is sent (the
// long-term block, the summary, the window), as a model would read it.
import { SearchIndex, extractMemories } from "./pkg/index.js";

const isChinese = (text) => /\p{Script=Han}/u.test(text);

/** The extractor's threshold for this chat (the library's default is -0.33). */
const CHAT_THRESHOLD = -1.2;

/** A transcript line of the judge's prompt: `[[NEW]] #3 [user]: text`. */
const LINE = /^(\[\[NEW\]\] )?#(\d+) \[(\w+)[^\]]*\]: (.*)$/;

function judge(prompt) {
  const lines = prompt.split("\n").map((l) => LINE.exec(l)).filter(Boolean);
  const fresh = new Set(lines.filter((m) => m[1]).map((m) => m[2]));
  const messages = lines.map((m) => ({ id: m[2], role: m[3] === "user" ? "user" : "assistant", content: m[4] }));
  // Chat messages are short: keep more than the library's default, which
  // was tuned on long conversational turns (LoCoMo).
  const memories = extractMemories(messages, { threshold: CHAT_THRESHOLD })
    .filter((m) => m.sources.every((s) => fresh.has(s)))
    .map((m) => ({
      content: m.content,
      category: m.category,
      scope: "user",
      importance: Math.round(m.importance * 10),
      sources: m.sources.map(Number),
    }));
  return JSON.stringify({ memories });
}

/** A candidate that says "now", "moved", "no longer"... replaces what it resembles. */
const CHANGE = /\b(now|moved|switched|changed|no longer|anymore)\b|现在|搬到|换成|不再/i;

function resolve(prompt) {
  const decisions = [];
  for (const block of prompt.split("\n\n")) {
    const head = /^(?:Candidate|候选) (\d+): (.*)/m.exec(block);
    if (!head) continue;
    const stored = [...block.matchAll(/- (?:stored|已存) (m\d+): (.*)/g)];
    const candidate = Number(head[1]);
    if (stored.some(([, , text]) => text.trim().toLowerCase() === head[2].trim().toLowerCase())) {
      decisions.push({ candidate, action: "skip" });
    } else if (CHANGE.test(head[2]) && stored.length) {
      decisions.push({ candidate, action: "supersede", ids: stored.map(([, id]) => id) });
    } else {
      decisions.push({ candidate, action: "add" });
    }
  }
  return JSON.stringify({ decisions });
}

/**
 * Summaries by extraction: the first sentence of each thing the user said
 * (a chunk's transcript), or of each part (a reduce over "### n" parts).
 */
function summarize(prompt) {
  const lines = prompt.split("\n").map((l) => l.trim());
  const parts = lines.some((l) => /^### \d+$/.test(l))
    ? lines.filter((l) => l && !l.startsWith("###") && !/^<\/?summary>$/.test(l))
    : lines.map((l) => /^\[user\]: (.*)$/.exec(l)?.[1]).filter(Boolean);
  const firsts = parts.map((t) => t.split(/(?<=[.!?。！？；;])\s*/)[0]);
  const text = firsts.join(isChinese(prompt) ? "；" : "; ");
  return (text || "Small talk.").slice(0, 1200);
}

/** The `llm` hook: `({ messages, json }) => string`. */
export async function offlineModel({ messages }) {
  const system = messages[0]?.content ?? "";
  const prompt = messages.at(-1)?.content ?? "";
  if (/remember long-term|应当从对话中长期记住/.test(system)) return judge(prompt);
  if (/long-term memory consistent|长期记忆的一致性/.test(system)) return resolve(prompt);
  return summarize(prompt);
}

// ---- the chat's replies ----

const LONG_TERM = "Relevant long-term memory";
const SUMMARY = "Summary of the earlier conversation";

/** Ends as a question does. */
const asks = (text) => /[?？吗呢]\s*$/.test(text.trim());
/** A question: ends like one, or opens like one. */
const isQuestion = (text) =>
  asks(text) || /^(what|where|who|whom|whose|when|which|why|how|do|does|did|is|are|am|can|could|tell me)\b/i.test(text.trim());

/** Sentences of a summary. */
const sentences = (text) => text.split(/(?<=[.!?。！？；;])\s*|\n+/).map((s) => s.trim().replace(/[;；]$/, "")).filter(Boolean);

/**
 * Every line of the context that could answer, with where it came from:
 * the long-term block (`profile`, `agent`, `past` with its date and
 * speaker, or `memory` for a host's block without headings), the
 * summary, and the window's messages. The pinned prompt is instructions,
 * not knowledge; the assistant's own words and the user's questions state
 * nothing about the user; the question being answered is left out
 * wherever it appears.
 */
export function contextLines(messages, question) {
  const lines = [];
  const asked = question.trim().toLowerCase();
  const push = (text, from) => {
    const t = text.trim();
    if (!t || asks(t) || t.toLowerCase() === asked) return;
    if (lines.some((l) => l.text === t)) return;
    lines.push({ text: t, ...from });
  };
  const [first, ...rest] = messages;
  const system = first?.role === "system" ? first.content ?? "" : "";
  const block = system.includes(LONG_TERM) ? /<memory>\n?([\s\S]*?)<\/memory>/.exec(system.slice(system.indexOf(LONG_TERM)))?.[1] ?? "" : "";
  let part = "memory";
  for (const raw of block.split("\n")) {
    const line = raw.trim();
    if (/^User profile:$/.test(line)) part = "profile";
    else if (/^Agent memory:$/.test(line)) part = "agent";
    else if (/^Past conversations:$/.test(line)) part = "past";
    else if (line) {
      const turn = part === "past" && /^- \[(\d{4}-\d{2}-\d{2})\] (\w+): (.*)$/.exec(line);
      if (turn) {
        if (turn[2] === "user") push(turn[3], { from: "past", day: turn[1] });
      } else push(line.replace(/^- /, ""), { from: part });
    }
  }
  if (system.includes(SUMMARY)) {
    const summary = /<summary>\n?([\s\S]*?)<\/summary>/.exec(system.slice(system.indexOf(SUMMARY)))?.[1] ?? "";
    for (const s of sentences(summary)) push(s, { from: "summary" });
  }
  const window = first?.role === "system" ? rest : messages;
  for (const m of window) if (m.role === "user") push(m.content ?? "", { from: "window" });
  return lines;
}

/**
 * How much of the question a line covers is read against a background of
 * empty documents: IDF over a handful of lines swings wildly (a word on
 * two lines of three weighs almost nothing, a word on none weighs
 * everything), so there `explain.coverage`, the IDF-weighted share of the
 * question a line contains, is about the share of the question's words
 * it has. The ranking itself is the library's, over the lines alone.
 */
const BACKGROUND = 100;

/**
 * The share of the question a line must cover to be an answer at all. One
 * word of a question's two (the missing one, on no line, weighs a little
 * more) is about 0.4; a word that no line has, or only a shared character
 * of Chinese, is less. Paraphrases count as far as the library's search
 * bridges them ("dog" to "golden retriever": the concept they share).
 */
const MIN_COVERAGE = 0.3;
/** From this share on the line answers outright; below it, the model hedges. */
const SURE_COVERAGE = 0.75;
/**
 * A partial answer is none when another line, saying something else,
 * covers about as much of the question: "What's my dog's name?" is not
 * answered by "name" in "User's name is Ada" when "named" in "a puppy
 * named Rex" matches it as well; the model says it does not know.
 */
const RIVAL_MARGIN = 0.1;
/** Two lines say the same when searching with one covers this much of the other. */
const SAME = 0.5;

/** Question words carry no fact; in Chinese they would make bigrams no fact has. */
const ASKING_ZH = /为什么|什么|怎么样|怎么|哪里|哪儿|哪个|哪些|哪|谁|多少|几|吗|呢/g;

/** Runs `fn` on a throwaway index of the lines (after `background` empty documents). */
function withIndex(lines, background, fn) {
  const index = new SearchIndex();
  try {
    for (let i = 0; i < background; i++) index.add({ id: `background-${i}`, text: "" });
    // Long-term memories outrank a turn that says the same (the library's
    // long-term weight): they are what was kept.
    lines.forEach((l, i) => index.add({ id: String(i), text: l.text, longTerm: !["past", "window", "summary"].includes(l.from) }));
    return fn(index);
  } finally {
    index.free();
  }
}

const coverages = (hits) => new Map(hits.map((h) => [h.id, h.explain.coverage]));

/**
 * The line of the context that best answers `question`, ranked by the
 * library's own search over the lines (so whatever paraphrases the core
 * bridges, this model bridges too), or null when none covers enough of
 * the question, or a partial match has a rival.
 */
export function bestLine(question, messages) {
  const lines = contextLines(messages, question);
  if (!lines.length) return null;
  const query = isChinese(question) ? question.replace(ASKING_ZH, " ") : question;
  const ranked = withIndex(lines, 0, (index) => index.search(query, { topK: 10 }));
  return withIndex(lines, BACKGROUND, (index) => {
    const coverage = coverages(index.search(query, { topK: 10 }));
    // The most of the question covered; among equals, the library's order.
    const matches = ranked.map((h) => ({ id: h.id, coverage: coverage.get(h.id) ?? 0 })).sort((a, b) => b.coverage - a.coverage);
    const [best, ...others] = matches;
    if (!best || best.coverage < MIN_COVERAGE) return null;
    const sure = best.coverage >= SURE_COVERAGE;
    if (!sure) {
      // Lines saying the same (the profile's fact and the turn it came
      // from) are no rivals: each covers most of the other.
      const covers = (a, b) => coverages(index.search(lines[Number(a)].text, { topK: lines.length })).get(b) ?? 0;
      const same = (o) => covers(best.id, o.id) >= SAME && covers(o.id, best.id) >= SAME;
      if (others.some((o) => o.coverage >= best.coverage - RIVAL_MARGIN && !same(o))) return null;
    }
    return { ...lines[Number(best.id)], coverage: best.coverage, sure };
  });
}

/** Where a line came from, as the reply says it. */
function provenance(line, zh) {
  const where = {
    memory: ["from long-term memory", "来自长期记忆"],
    profile: ["from your profile in long-term memory", "来自长期记忆中的用户档案"],
    agent: ["from my long-term memory", "来自我的长期记忆"],
    past: line.day ? [`from our conversation on ${line.day}`, `来自 ${line.day} 的对话`] : ["from a past conversation", "来自以前的对话"],
    summary: ["from the summary of this chat", "来自本次对话的摘要"],
    window: ["from what you said earlier in this chat", "来自你在本次对话中说过的话"],
  }[line.from];
  return where[zh ? 1 : 0];
}

/**
 * The chat's reply, written from the whole context the model is sent (the
 * `messages` of `buildContext`): a question is answered with the line of
 * that context that best matches it, saying which memory it used (or says
 * it does not know); a statement is acknowledged, with what would be
 * remembered from it. Chinese is answered in Chinese.
 */
export function offlineReply(text, messages) {
  const zh = isChinese(text);
  if (isQuestion(text)) {
    const line = bestLine(text, messages);
    if (!line) return zh ? "我还不知道这件事。告诉我，我会记住。" : "I don't know that yet. Tell me and I'll remember it.";
    const quote = zh ? `“${line.text}”` : `"${line.text}"`;
    if (zh) return `${line.sure ? "我记得" : "我不太确定，我记得的最接近的是"}：${quote}——${provenance(line, zh)}。`;
    return `${line.sure ? "I remember" : "I'm not sure, but the closest thing I remember is"}: ${quote} (${provenance(line, zh)}).`;
  }
  const [fact] = extractMemories([{ role: "user", content: text, timestamp: Date.now() }], { threshold: CHAT_THRESHOLD });
  if (fact) return zh ? `好的，我记下了：${fact.content}。` : `Got it. I'll keep in mind: ${fact.content}.`;
  return zh ? "好的。" : "Okay.";
}
