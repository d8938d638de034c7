// A local OpenAI-compatible `/v1/chat/completions` and `/v1/embeddings`
// server on 127.0.0.1 with a scripted model, for tests, benchmarks and the
// demo: no key, no network.
//
// The model is deterministic and reads the library's prompts the way a real
// model would be asked to: it extracts "[[NEW]]" user statements as
// third-person memories citing the numbers of their messages, summarizes by keeping the first words of each line,
// merges summaries, and resolves conflicts (a candidate saying "now" or
// "现在" replaces the stored memories it is shown). As a chat assistant it
// calls a tool when asked for the weather, and streams when asked to
// (server-sent chunks, as the OpenAI API does). Faults are injected per
// request from a queue: 429 (with Retry-After), 500, a hang, a dropped
// connection, a truncated body, an HTML page, invalid JSON, empty content,
// JSON with wrong types.
import { createServer } from "node:http";
import { get_encoding } from "tiktoken";

/** "I now prefer Go" -> "User now prefers Go"; "我喜欢…" -> "用户喜欢…"; else null. */
function thirdPerson(s) {
  const en = /^(?:actually,?\s*)?i\s+(now\s+)?(prefer|like|love|use|live|work|am|have|hate)\b(.*)$/i.exec(s);
  if (en) {
    const verb = { am: "is", have: "has" }[en[2].toLowerCase()] ?? en[2].toLowerCase() + "s";
    return `User ${en[1] ?? ""}${verb}${en[3]}`;
  }
  const name = /^my name is\s+(.*)$/i.exec(s);
  if (name) return `User's name is ${name[1]}`;
  if (/^我(?:现在)?(?:喜欢|更喜欢|住在|是|叫|用)/.test(s)) return "用户" + s.slice(1);
  return null;
}

function statements(text) {
  return text.split(/(?<=[.!?。！？])\s*|\n/).map((s) => s.trim().replace(/[.!。！]+$/, "")).filter(Boolean);
}

/** Third-person memories from the [[NEW]] user lines of a judge prompt. */
function judge(prompt) {
  const memories = [];
  for (const line of prompt.split("\n")) {
    const m = /^\[\[NEW\]\] #(\d+) \[user\]: (.*)$/.exec(line);
    if (!m) continue;
    for (const s of statements(m[2])) {
      if (s.endsWith("?") || s.endsWith("？")) continue;
      const content = thirdPerson(s);
      if (content) memories.push({ content, category: /name|叫|是/.test(s) ? "profile" : "preference", scope: "user", importance: 8, sources: [Number(m[1])] });
    }
  }
  return JSON.stringify({ memories });
}

function resolve(prompt) {
  const decisions = [];
  for (const block of prompt.split("\n\n")) {
    const head = /^(?:Candidate|候选) (\d+): (.*)/m.exec(block);
    if (!head) continue;
    const ids = [...block.matchAll(/- (?:stored|已存) (m\d+): (.*)/g)];
    const same = ids.find(([, , text]) => text.trim().toLowerCase() === head[2].trim().toLowerCase());
    if (same) decisions.push({ candidate: Number(head[1]), action: "skip" });
    else if (/\bnow\b|现在/.test(head[2])) decisions.push({ candidate: Number(head[1]), action: "supersede", ids: ids.map(([, id]) => id) });
    else decisions.push({ candidate: Number(head[1]), action: "add" });
  }
  return JSON.stringify({ decisions });
}

/** Keeps the first words of each transcript line or summary part. */
function summarize(prompt) {
  // Headings, "(none)" and the fences around the data are not content.
  const lines = prompt.split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !l.startsWith("(") && !/^<\/?\w+>$/.test(l));
  return lines.map((l) => l.replace(/^\[(\w+)\]: /, "$1: ").split(/\s+/).slice(0, 8).join(" ")).join("; ").slice(0, 1500);
}

/** The scripted model: an answer for a chat/completions request body. */
export function scriptedModel(body) {
  const system = textOf(body.messages.find((m) => m.role === "system")?.content);
  const user = body.messages.filter((m) => m.role === "user").map((m) => textOf(m.content)).join("\n");
  if (/remember long-term|应当从对话中长期记住/.test(system)) return judge(user);
  if (/long-term memory consistent|长期记忆的一致性/.test(system)) return resolve(user);
  return summarize(user);
}

/**
 * The scripted model as a chat assistant: asked "weather in <city>" with a
 * tool offered, it calls the first tool with { city }; given the tool's
 * result, it answers with it; else as `scriptedModel`.
 */
export function scriptedReply(body) {
  const last = body.messages.at(-1);
  if (last?.role === "tool") return { content: `The tool says: ${textOf(last.content)}`, toolCalls: [] };
  const city = last?.role === "user" && body.tools?.length && /weather in ([\p{L} ]+)/iu.exec(textOf(last.content));
  if (city) {
    const name = body.tools[0].function?.name ?? body.tools[0].name;
    const id = `call_${body.messages.length}`;
    return { content: null, toolCalls: [{ id, type: "function", function: { name, arguments: JSON.stringify({ city: city[1].trim() }) } }] };
  }
  return { content: scriptedModel(body), toolCalls: [] };
}

/** The reply as server-sent `chat.completion.chunk`s: text a word at a time, tool arguments in two pieces, usage last when asked. */
function streamReply(res, body, reply, usage, cors) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...cors });
  const chunk = (delta, finish = null) => ({ id: "chatcmpl-local", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [chunk({ role: "assistant", content: "" })];
  for (const piece of (reply.content ?? "").match(/\S*\s*/g).filter(Boolean)) events.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    const half = Math.ceil(call.function.arguments.length / 2);
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: call.function.arguments.slice(0, half) } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] }));
  });
  events.push(chunk({}, reply.toolCalls.length ? "tool_calls" : "stop"));
  if (body.stream_options?.include_usage) events.push({ id: "chatcmpl-local", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage });
  res.end(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n");
}

// Scripted embeddings: one dimension per topic (words of one topic share it,
// so a query can find a memory it shares no word with), then the words
// hashed into the rest. Deterministic and unit-free, like a real model's.
const TOPICS = [
  ["dog", "dogs", "puppy", "pet", "pets", "cat", "kitten", "宠物", "狗", "猫"],
  ["car", "cars", "automobile", "sedan", "drive", "drives", "vehicle", "车", "汽车"],
  ["food", "pasta", "spicy", "cook", "cooked", "dinner", "meal", "吃", "菜"],
  ["language", "rust", "go", "python", "code", "programming", "编程", "代码"],
];
const DIM = 64;
export function scriptedEmbedding(text) {
  const v = new Array(DIM).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) {
    const topic = TOPICS.findIndex((t) => t.some((x) => w === x || (/\p{Script=Han}/u.test(x) && w.includes(x))));
    if (topic >= 0) v[topic] += 3;
    let h = 2166136261;
    for (const c of w) h = Math.imul(h ^ c.codePointAt(0), 16777619);
    v[TOPICS.length + ((h >>> 0) % (DIM - TOPICS.length))] += 1;
  }
  v[DIM - 1] += 0.01;
  return v;
}

// Usage is counted as OpenAI bills it (o200k, the documented per-message
// rules: 3 tokens per message plus its role and content, 3 to prime the
// reply), so tests can hold the library's own totals against it.
let encoder;
const tokens = (s) => (encoder ??= get_encoding("o200k_base")).encode(s).length;
export const promptTokens = (messages) =>
  messages.reduce((n, m) => n + 3 + tokens(m.role) + tokens(textOf(m.content)), 0) + 3;

/** A message's text: its content as a string, or its parts' text (as the API accepts both). */
function textOf(content) {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("") : "";
}

/**
 * Starts the server; resolves to { url, endpoint, embeddingsEndpoint, faults, requests, close }.
 * Push fault names onto `faults` to make the next requests fail:
 * "429", "500", "hang", "reset" (the connection dropped), "truncated" (the body cut
 * mid-JSON), "garbage" (an HTML page with status 200), "invalid-json", "empty", "wrong-types".
 */
export function startLlmServer({ port = 0, latencyMs = 0 } = {}) {
  const faults = [];
  const requests = [];
  const hanging = new Set();
  const server = createServer(async (req, res) => {
    // "*" does not cover Authorization: the headers asked for are allowed by name.
    const cors = { "access-control-allow-origin": "*", "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*", "access-control-allow-methods": "POST, OPTIONS" };
    if (req.method === "OPTIONS") return res.writeHead(204, cors).end();
    const embeddings = req.url.endsWith("/embeddings");
    if (req.method !== "POST" || !(embeddings || req.url.endsWith("/chat/completions"))) return res.writeHead(404, cors).end();
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    requests.push({ body, headers: req.headers });
    const fault = faults.shift();
    const send = (status, payload, extra = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...cors, ...extra });
      res.end(typeof payload === "string" ? payload : JSON.stringify(payload));
    };
    if (fault === "429") return send(429, { error: { message: "rate limited" } }, { "retry-after": "0" });
    if (fault === "500") return send(500, { error: { message: "upstream down" } });
    if (fault === "reset") return req.socket.destroy();
    if (fault === "truncated") {
      // Headers promise more than arrives: the body ends mid-JSON.
      res.writeHead(200, { "content-type": "application/json", "content-length": "400", ...cors });
      res.write('{"id":"chatcmpl-local","choices":[{"index":0,"message":{"role":"assis');
      return res.destroy();
    }
    if (fault === "garbage") {
      res.writeHead(200, { "content-type": "text/html", ...cors });
      return res.end("<html><body>502 Bad Gateway</body></html>");
    }
    if (fault === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (latencyMs) await new Promise((ok) => setTimeout(ok, latencyMs));
    if (embeddings) {
      const input = Array.isArray(body.input) ? body.input : [body.input];
      const data = input.map((text, index) => ({ object: "embedding", index, embedding: scriptedEmbedding(text) }));
      // Out of order on purpose: clients must follow `index`.
      return send(200, { object: "list", model: body.model, data: data.reverse(), usage: { prompt_tokens: 0, total_tokens: 0 } });
    }
    const reply = scriptedReply(body);
    if (fault === "invalid-json") reply.content = "Here are the memories: {memories: [oops";
    if (fault === "empty") reply.content = "";
    if (fault === "wrong-types") reply.content = JSON.stringify({ memories: [{ content: 42 }, { content: "  ", importance: "x" }, "User likes wrong types", { content: ["nested"] }] });
    const prompt = promptTokens(body.messages);
    const completion = tokens(reply.content ?? "") + reply.toolCalls.reduce((n, c) => n + tokens(c.function.name) + tokens(c.function.arguments), 0);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (body.stream) return streamReply(res, body, reply, usage, cors);
    const message = { role: "assistant", content: reply.content, ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}) };
    send(200, {
      id: "chatcmpl-local", object: "chat.completion", model: body.model,
      choices: [{ index: 0, message, finish_reason: reply.toolCalls.length ? "tool_calls" : "stop" }],
      usage,
    });
  });
  return new Promise((ok) => {
    server.listen(port, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${server.address().port}`;
      ok({
        url, endpoint: `${url}/v1/chat/completions`, embeddingsEndpoint: `${url}/v1/embeddings`, faults, requests, server,
        close: () => new Promise((done) => { for (const r of hanging) r.destroy(); server.close(done); }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? 8787);
  startLlmServer({ port }).then(({ endpoint }) => console.log(`scripted model at ${endpoint}`));
}
