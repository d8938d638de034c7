// The demo's offline model: deterministic, no network, so the page works
// with no key. It answers the library's three requests (the judge, conflict
// resolution, summaries) through the `llm` hook the way a model would be
// asked to, with the library's own rule extractor doing the judging, and it
// writes the chat's replies from what memory recalled.
import { extractMemories } from "./pkg/index.js";

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

/**
 * The chat's reply: a question is answered from the recalled facts and
 * past user turns (or says it knows nothing yet); a statement is
 * acknowledged, with what would be remembered from it.
 */
export function offlineReply(text, recalled) {
  const zh = isChinese(text);
  // Facts first; before a session end has made any, what the user said.
  const said = (h) => h.source === "turn" && h.role === "user" && h.text.trim() !== text.trim();
  const known = recalled.filter((h) => h.source === "fact");
  const facts = (known.length ? known : recalled.filter(said)).slice(0, 3);
  if (/[?？吗]\s*$/.test(text.trim())) {
    if (facts.length) {
      const list = facts.map((h) => `• ${h.text}`).join("\n");
      return zh ? `根据我的记忆：\n${list}` : `Here is what I remember:\n${list}`;
    }
    return zh ? "我还不知道这件事。告诉我，我会记住。" : "I don't know that yet. Tell me and I'll remember it.";
  }
  const [fact] = extractMemories([{ role: "user", content: text, timestamp: Date.now() }], { threshold: CHAT_THRESHOLD });
  if (fact) return zh ? `好的，我记下了：${fact.content}。` : `Got it. I'll keep in mind: ${fact.content}.`;
  return zh ? "好的。" : "Okay.";
}
