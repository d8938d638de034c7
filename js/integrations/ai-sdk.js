// agent-memory inside the Vercel AI SDK (`ai`): a language-model middleware
// for `wrapLanguageModel` that records each turn in a memory's session and
// builds every request from the memory (system prompt, long-term block,
// summary and the window that fits, counted exactly), and converters between
// the SDK's messages and ours. Each stored message keeps the SDK's own form in
// its metadata, so converting back gives exactly what was stored. The SDK is
// an optional peer dependency: this entry point imports nothing from it.
import { readPrompt } from "../guard.js";
import { inputs, isObjects } from "./inputs.js";
import { sentEntries } from "./sent.js";

const MESSAGE = "aiSdk.message";
const UI = "aiSdk.uiMessage";
// Set on a message split off the one before it (the second and later
// results of one tool message, the tool outputs of one UI message): it is
// joined back when converting.
const JOINS = "aiSdk.joinsPrevious";

const partsOf = (content) => (typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : []);
const textOf = (content) => partsOf(content).filter((p) => p.type === "text").map((p) => p.text).join("");
const { invalid, objects: list, json: toJson, optionsOf } = inputs("ai-sdk");
/** JSON text of a value; a string is already the text (a tool input the model gave as text). */
const json = (value) => (typeof value === "string" ? value : toJson(value ?? {}));
const parsed = (text) => {
  try {
    return JSON.parse(text || "{}");
  } catch {
    return text;
  }
};

/** A tool result's output (`{ type: "text" | "json" | "error-text" | ..., value }`) as the text a model reads. */
function outputText(output) {
  if (output == null) return "";
  if (typeof output.value === "string") return output.value;
  if (output.type === "content") return list(output.value, "a tool result's content").map((p) => p.text ?? "").join("");
  return json(output.value ?? output);
}

/** One SDK message as the `MessageInput`s of `memory.add`: one per message, one per tool result. */
export function fromModelMessage(message) {
  const keep = (m) => ({ [MESSAGE]: json(m) });
  if (typeof message?.content !== "string" && !isObjects(message?.content)) {
    throw invalid("a message's content must be a string or an array of parts");
  }
  switch (message?.role) {
    case "system":
      return [{ role: "system", content: json(message.content), metadata: keep(message) }];
    case "user":
      return [{ role: "user", content: textOf(message.content), metadata: keep(message) }];
    case "assistant": {
      const calls = partsOf(message.content).filter((p) => p.type === "tool-call");
      const toolCalls = calls.map((p) => ({ id: p.toolCallId, name: p.toolName, arguments: json(p.input) }));
      return [{ role: "assistant", content: textOf(message.content), ...(toolCalls.length ? { toolCalls } : {}), metadata: keep(message) }];
    }
    case "tool":
      // One message per result: the window pairs each with its call.
      return partsOf(message.content).map((part, i) => ({
        role: "tool",
        content: part.type === "tool-result" ? outputText(part.output) : json(part),
        toolCallId: part.toolCallId ?? "",
        metadata: { ...keep({ ...message, content: [part] }), ...(i ? { [JOINS]: "1" } : {}) },
      }));
    default:
      throw invalid(`a message with role ${String(message?.role)}`);
  }
}

/** An entry's tool calls, checked: an entry the app hands in may hold anything there, and each call's fields are read. */
const callsOf = (entry) => list(entry.toolCalls ?? [], "an entry's toolCalls");

/**
 * The field `name` of what the SDK hands a middleware hook (`{ params }`,
 * `{ doGenerate }`), checked to be of `type`: a hook called any other way
 * would fail with a TypeError from inside.
 */
function hookArg(args, name, type) {
  const value = args?.[name];
  if (value === null || typeof value !== type) throw invalid(`the middleware hook is called with { ${name} } (a ${type})`);
  return value;
}

/**
 * The SDK's form kept in an entry's metadata under `key`, or undefined when
 * it is missing or damaged (not JSON, or not what `ok` reads): the entry is
 * then rebuilt from its role and text, so one bad stored value cannot break
 * every later read of the session.
 */
function kept(entry, key, ok) {
  const text = entry.metadata?.[key];
  if (!text) return undefined;
  try {
    const value = JSON.parse(text);
    return typeof value?.role === "string" && ok(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** SDK messages (`ModelMessage[]`) as `MessageInput`s, in order. */
export const fromModelMessages = (messages) => list(messages, "messages").flatMap(fromModelMessage);

/** The name of the call a tool result answers, from the messages before it. */
function toolNameOf(entries, index, id) {
  for (let i = index - 1; i >= 0; i--) {
    const call = callsOf(entries[i]).find((c) => c.id === id);
    if (call) return call.name;
  }
  return "";
}

/** One stored entry as an SDK message in the prompt's form (content as parts). */
function modelMessageOf(entries, index) {
  const entry = entries[index];
  const stored = kept(entry, MESSAGE, (m) => typeof m.content === "string" || isObjects(m.content));
  if (stored) return stored;
  switch (entry.role) {
    case "system":
      return { role: "system", content: entry.content };
    case "user":
      return { role: "user", content: [{ type: "text", text: entry.content }] };
    case "tool": {
      const toolName = toolNameOf(entries, index, entry.toolCallId);
      return { role: "tool", content: [{ type: "tool-result", toolCallId: entry.toolCallId ?? "", toolName, output: { type: "text", value: entry.content } }] };
    }
    default: {
      const calls = callsOf(entry).map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: parsed(c.arguments) }));
      return { role: "assistant", content: [...(entry.content ? [{ type: "text", text: entry.content }] : []), ...calls] };
    }
  }
}

/** Stored entries (`memory.sessionHistory()`, `memory.messages()`) as SDK messages: what was added comes back as it was. */
export function toModelMessages(entries) {
  list(entries, "entries");
  const out = [];
  entries.forEach((entry, i) => {
    const message = modelMessageOf(entries, i);
    const previous = out.at(-1);
    if (entry.metadata?.[JOINS] && previous?.role === message.role && Array.isArray(previous.content)) {
      // A loop, not push(...): spreading a long content array overflows the call stack.
      for (const part of message.content) previous.content.push(part);
    } else {
      out.push(message);
    }
  });
  return out;
}

const isToolPart = (p) => typeof p.type === "string" && (p.type === "dynamic-tool" || p.type.startsWith("tool-"));
const toolNameOfPart = (p) => (p.type === "dynamic-tool" ? p.toolName : p.type.slice("tool-".length));

/**
 * One UI message (`useChat`'s) as `MessageInput`s: its text, its tool calls
 * on the message, and each tool output that arrived as a tool message after
 * it. The UI message itself is kept on the first.
 */
export function fromUIMessage(message) {
  const role = message?.role;
  if (!["user", "assistant", "system"].includes(role)) {
    throw invalid(`a UI message with role ${String(role)}`);
  }
  const parts = list(message.parts ?? [], "a UI message's parts");
  const content = parts.filter((p) => p.type === "text").map((p) => p.text).join("");
  const tools = parts.filter(isToolPart);
  const toolCalls = tools.map((p) => ({ id: p.toolCallId, name: toolNameOfPart(p), arguments: json(p.input) }));
  const first = { role, content, ...(toolCalls.length ? { toolCalls } : {}), metadata: { [UI]: json(message) } };
  const results = tools
    .filter((p) => p.state === "output-available" || p.state === "output-error")
    .map((p) => ({ role: "tool", content: p.state === "output-error" ? p.errorText ?? "" : json(p.output), toolCallId: p.toolCallId, metadata: { [JOINS]: "1" } }));
  return [first, ...results];
}

/** UI messages as `MessageInput`s, in order. */
export const fromUIMessages = (messages) => list(messages, "messages").flatMap(fromUIMessage);

/** Stored entries as UI messages: what was added as one comes back as it was; others are built from their text and tool calls. */
export function toUIMessages(entries) {
  list(entries, "entries");
  const out = [];
  for (const entry of entries) {
    const stored = kept(entry, UI, (m) => isObjects(m.parts));
    if (stored) {
      out.push(stored);
      continue;
    }
    const previous = out.at(-1);
    if (entry.role === "tool") {
      // A tool output fills in the call it answers, on the message that made it.
      const part = previous?.parts.find((p) => isToolPart(p) && p.toolCallId === entry.toolCallId);
      if (part && !entry.metadata?.[JOINS]) Object.assign(part, { state: "output-available", output: parsed(entry.content) });
      continue;
    }
    const parts = [
      ...(entry.content ? [{ type: "text", text: entry.content }] : []),
      ...callsOf(entry).map((c) => ({ type: `tool-${c.name}`, toolCallId: c.id, state: "input-available", input: parsed(c.arguments) })),
    ];
    out.push({ id: entry.id, role: entry.role, parts });
  }
  return out;
}

/** Records the messages the session does not already end with (a retried call sends them again): the core decides which. */
const record = (memory, inputs) => memory.addNew(inputs);

/** A generate result's content as the assistant message it adds to the conversation. */
function assistantMessage(content) {
  const parts = [];
  for (const part of list(content, "the model's content")) {
    if (part.type === "text" || part.type === "reasoning") {
      const last = parts.at(-1);
      if (last?.type === part.type) last.text += part.text;
      else parts.push({ type: part.type, text: part.text });
    } else if (part.type === "tool-call") {
      parts.push({ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: parsed(part.input), ...(part.providerExecuted ? { providerExecuted: true } : {}) });
    }
  }
  return { role: "assistant", content: parts };
}

/** A prompt message as the middleware hands it on: content as parts, images as files. */
function promptMessage(message) {
  if (message.role === "system") return { ...message, content: json(message.content) };
  const content = partsOf(message.content).map((p) =>
    p.type === "image" ? { type: "file", data: p.image, mediaType: p.mediaType ?? "image/*" } : p);
  return { ...message, content };
}

/**
 * A middleware for `wrapLanguageModel({ model, middleware })`. Each call:
 * the messages after the prompt's last assistant message (the user's new
 * message, or the tool results of a tool step) are added to the session,
 * unless it already ends with them; the prompt is replaced by the memory's
 * context for the newest user message (within the memory's budget, exact
 * tokens, the tool definitions counted); the reply, streamed or not, is
 * added when it is complete. The app may send the whole chat or only the new
 * message: the session is the history.
 */
export function memoryMiddleware(memory, options) {
  if (typeof memory?.buildContext !== "function") {
    throw invalid("memoryMiddleware needs a Memory");
  }
  const { system } = optionsOf(options, "memoryMiddleware");
  return {
    specificationVersion: "v4",
    async transformParams(args) {
      const params = hookArg(args, "params", "object");
      const prompt = list(params.prompt ?? [], "the prompt");
      // The core reads the turn (the system text, which messages are new)
      // from each message's role and a system message's text; only the new
      // ones are converted whole (and checked).
      const turn = readPrompt(prompt.map((m) => ({ role: m.role, content: typeof m.content === "string" ? m.content : "" })), system);
      await record(memory, fromModelMessages(turn.newMessages.map((i) => prompt[i])));
      // No query: the core recalls with the newest user message, the one just recorded.
      const { system: text, entries } = await sentEntries(memory, {
        ...(turn.system ? { system: turn.system } : {}),
        ...(params.tools?.length ? { tools: params.tools } : {}),
      });
      const history = entries.map((_, i) => promptMessage(modelMessageOf(entries, i)));
      return { ...params, prompt: [...(text ? [{ role: "system", content: text }] : []), ...history] };
    },
    async wrapGenerate(args) {
      const result = await hookArg(args, "doGenerate", "function")();
      await record(memory, fromModelMessage(assistantMessage(result?.content)));
      return result;
    },
    async wrapStream(args) {
      const result = await hookArg(args, "doStream", "function")();
      if (typeof result?.stream?.pipeThrough !== "function") throw invalid("doStream must give { stream } (a ReadableStream)");
      const { stream, ...rest } = result;
      const content = [];
      const recorder = new TransformStream({
        transform(part, controller) {
          // Thrown here, the typed error is what the stream's reader gets.
          if (part === null || typeof part !== "object") throw invalid("a stream part must be an object");
          if (part.type === "text-delta") content.push({ type: "text", text: part.delta });
          else if (part.type === "reasoning-delta") content.push({ type: "reasoning", text: part.delta });
          else if (part.type === "tool-call") content.push(part);
          controller.enqueue(part);
        },
        async flush() {
          await record(memory, fromModelMessage(assistantMessage(content)));
        },
      });
      return { stream: stream.pipeThrough(recorder), ...rest };
    },
  };
}
