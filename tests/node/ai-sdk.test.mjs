// agent-memory/ai-sdk against the real Vercel AI SDK (`ai`) and its OpenAI
// provider pointed at the local OpenAI-compatible server: a 20-turn chat with
// streaming on and off and a restart on the same store half way, a tool call
// run by the SDK, the fact a session end extracted reaching the next
// session's request, and the converters giving back what they were given.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { SMALL_WINDOW, twentyTurns } from "./twenty-turns.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { fromModelMessages, fromUIMessages, memoryMiddleware, toModelMessages, toUIMessages } from "../../pkg/integrations/ai-sdk.js";

let server;
before(async () => { server = await startLlmServer(); });
after(() => server.close());

const provider = () => createOpenAI({ baseURL: server.endpoint.replace(/\/chat\/completions$/, ""), apiKey: "local" });
const wrapped = (memory) => wrapLanguageModel({ model: provider().chat("scripted"), middleware: memoryMiddleware(memory) });
const llm = () => ({ endpoint: server.endpoint, model: "scripted" });
const open = (store, sessionId = "chat", extra = {}) => am.Memory.open({ namespace: "ai", sessionId, store, llm: llm(), ...extra });
const lastRequest = () => server.requests.at(-1).body;

test("a 20-turn chat, streamed and not, survives a restart; each request is the memory's context within its budget", async () => {
  const store = mapAdapter();
  const system = "You are a helpful assistant.";
  await twentyTurns({
    lastRequest,
    start: async () => {
      const memory = await open(store, "chat", SMALL_WINDOW);
      return { memory, model: wrapped(memory) };
    },
    turn: async ({ model }, prompt, stream) => {
      if (!stream) return (await generateText({ model, system, prompt })).text;
      let text = "";
      for await (const delta of streamText({ model, system, prompt }).textStream) text += delta;
      assert.match(lastRequest().messages[0].content, /^You are a helpful assistant\./);
      return text;
    },
  });
});

test("a tool call run by the SDK: call, result and answer are stored in order and sent back in the tool step", async () => {
  const memory = await open(mapAdapter(), "tools");
  const weather = tool({
    description: "The weather in a city",
    inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    execute: async ({ city }) => `21 °C and sunny in ${city}`,
  });
  for (const stream of [false, true]) {
    const args = { model: wrapped(memory), prompt: "What is the weather in Lisbon?", tools: { weather }, stopWhen: stepCountIs(3) };
    const text = stream ? await streamText(args).text : (await generateText(args)).text;
    assert.equal(text, "The tool says: 21 °C and sunny in Lisbon");
    const step = lastRequest().messages;
    assert.deepEqual(step.slice(-3).map((m) => m.role), ["user", "assistant", "tool"], "the tool step sends the call and its result");
    assert.equal(step.at(-2).tool_calls[0].function.name, "weather");
  }
  const history = await memory.sessionHistory();
  assert.deepEqual(history.map((m) => m.role), ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
  assert.equal(history[1].toolCalls[0].name, "weather");
  assert.deepEqual(JSON.parse(history[1].toolCalls[0].arguments), { city: "Lisbon" });
  assert.equal(history[2].toolCallId, history[1].toolCalls[0].id);
  assert.equal(history[2].content, "21 °C and sunny in Lisbon");
  // As SDK messages again: the call and result in the SDK's own form.
  const messages = toModelMessages(history.slice(0, 4));
  assert.equal(messages[1].content[0].type, "tool-call");
  assert.deepEqual(messages[1].content[0].input, { city: "Lisbon" });
  assert.equal(messages[2].content[0].type, "tool-result");
  assert.equal(messages[2].content[0].toolName, "weather");
});

test("a retried call does not record the new message twice", async () => {
  const memory = await open(mapAdapter(), "retry");
  server.faults.push("500");
  const { text } = await generateText({ model: wrapped(memory), prompt: "Hello there, I am retrying.", maxRetries: 2 });
  assert.ok(text.length > 0);
  assert.deepEqual((await memory.sessionHistory()).map((m) => m.role), ["user", "assistant"]);
});

test("what a session end extracted reaches the next session's request", async () => {
  const store = mapAdapter();
  const first = await open(store, "monday");
  await generateText({ model: wrapped(first), prompt: "I live in Lisbon." });
  await generateText({ model: wrapped(first), prompt: "Which museum should I visit?" });
  const ended = await first.endSession();
  assert.equal(ended.judge, "llm");
  const next = await open(store, "tuesday");
  await generateText({ model: wrapped(next), system: "Be brief.", prompt: "Where do I live?" });
  const sent = lastRequest().messages;
  assert.match(sent[0].content, /^Be brief\./);
  assert.match(sent[0].content, /<memory>[\s\S]*User lives in Lisbon[\s\S]*<\/memory>/);
  assert.equal(sent.at(-1).content, "Where do I live?");
});

test("model and UI messages convert to ours and back without loss", async () => {
  const store = mapAdapter();
  const memory = await open(store, "convert");
  const model = [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "Weather in Lisbon and Porto?" }] },
    { role: "assistant", content: [
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Lisbon" } },
      { type: "tool-call", toolCallId: "c2", toolName: "weather", input: { city: "Porto" } },
    ] },
    { role: "tool", content: [
      { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "21 C" } },
      { type: "tool-result", toolCallId: "c2", toolName: "weather", output: { type: "json", value: { temp: 18 } } },
    ] },
    { role: "assistant", content: "Lisbon 21, Porto 18." },
  ];
  for (const input of fromModelMessages(model)) await memory.add(input);
  const stored = await memory.sessionHistory();
  assert.deepEqual(stored.map((m) => [m.role, m.content, m.toolCallId ?? null]), [
    ["system", "Be brief.", null], ["user", "Weather in Lisbon and Porto?", null], ["assistant", "Checking.", null],
    ["tool", "21 C", "c1"], ["tool", "{\"temp\":18}", "c2"], ["assistant", "Lisbon 21, Porto 18.", null],
  ], "one tool message per result, each paired with its call");
  assert.deepEqual(toModelMessages(stored), model);
  const restarted = await open(store, "convert");
  assert.deepEqual(toModelMessages(await restarted.sessionHistory()), model, "and after a restart");

  const ui = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "Weather in Lisbon?" }] },
    { id: "a1", role: "assistant", parts: [
      { type: "step-start" },
      { type: "tool-weather", toolCallId: "c9", state: "output-available", input: { city: "Lisbon" }, output: { temp: 21 } },
      { type: "text", text: "21 °C.", state: "done" },
    ] },
  ];
  const uiMemory = await open(mapAdapter(), "ui");
  for (const input of fromUIMessages(ui)) await uiMemory.add(input);
  const uiStored = await uiMemory.sessionHistory();
  assert.deepEqual(uiStored.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(uiStored[1].toolCalls[0].name, "weather");
  assert.equal(uiStored[2].toolCallId, "c9");
  assert.deepEqual(toUIMessages(uiStored), ui);
  // Messages the app added by hand become UI messages too.
  const plain = await open(mapAdapter(), "plain");
  await plain.add({ role: "user", content: "hi" });
  await plain.add({ role: "assistant", content: "", toolCalls: [{ id: "t1", name: "clock", arguments: "{}" }] });
  await plain.add({ role: "tool", content: "\"12:00\"", toolCallId: "t1" });
  const built = toUIMessages(await plain.sessionHistory());
  assert.deepEqual(built.map((m) => m.role), ["user", "assistant"]);
  assert.deepEqual(built[1].parts, [{ type: "tool-clock", toolCallId: "t1", state: "output-available", input: {}, output: "12:00" }]);
  assert.throws(() => fromModelMessages([{ role: "narrator", content: "x" }]), (e) => e.code === "INVALID_INPUT");
  assert.throws(() => memoryMiddleware({}), (e) => e.code === "INVALID_INPUT");
});

test("bad input to the converters is a typed error, 100,000 times over", () => {
  const bad = [
    () => fromModelMessages("hi"), () => fromModelMessages([{ role: "user", content: 42 }]), () => fromModelMessages([null]),
    () => toModelMessages(undefined), () => fromUIMessages([{ role: "user", parts: "x" }]), () => fromUIMessages([{ role: "bot", parts: [] }]),
    () => toUIMessages({}),
  ];
  let typed = 0;
  for (let i = 0; i < 100_000; i++) {
    try {
      bad[i % bad.length]();
    } catch (e) {
      if (e.code === "INVALID_INPUT" && e.name === "AgentMemoryError") typed++;
    }
  }
  assert.equal(typed, 100_000);
});
