// agent-memory/openai-agents against the real Agents SDK (@openai/agents)
// with its OpenAI provider pointed at the local OpenAI-compatible server:
// runs keep their items in the memory's session, a restart on the same
// store continues the conversation, popItem and clearSession work, and the
// remembered fact reaches the next request through memoryInputFilter; with
// a tool, streaming on and off, and 20 turns within the memory's budget.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { SMALL_WINDOW, twentyTurns } from "./twenty-turns.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { AgentMemorySession, memoryInputFilter } from "../../pkg/integrations/openai-agents.js";

setTracingDisabled(true);
let server;
before(async () => { server = await startLlmServer(); });
after(() => server.close());

const model = () => new OpenAIChatCompletionsModel(new OpenAI({ baseURL: server.endpoint.replace(/\/chat\/completions$/, ""), apiKey: "local" }), "scripted");
const open = (store) => am.Memory.open({ namespace: "agents", sessionId: "chat", store });

test("runs keep their items in the session; a restart continues it; popItem and clearSession work", async () => {
  const store = mapAdapter();
  let memory = await open(store);
  let session = new AgentMemorySession(memory, { sessionId: "chat" });
  const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: model() });
  for (const input of ["My name is Ada.", "I live in Lisbon.", "I have a cat named Miso."]) {
    const result = await run(agent, input, { session });
    assert.equal(typeof result.finalOutput, "string");
  }
  const items = await session.getItems();
  assert.equal(items.length, 6, JSON.stringify(items.map((i) => i.role)));
  assert.deepEqual(items.filter((i) => i.role === "user").map((i) => i.content), ["My name is Ada.", "I live in Lisbon.", "I have a cat named Miso."]);
  assert.deepEqual((await session.getItems(2)).map((i) => i.role), ["user", "assistant"]);
  // A restart on the same store: the next run sends the whole history.
  memory = await open(store);
  session = new AgentMemorySession(memory, { sessionId: "chat" });
  const before = server.requests.length;
  await run(agent, "What is my cat's name?", { session });
  const sent = JSON.stringify(server.requests.slice(before).at(-1).body.messages);
  assert.match(sent, /I have a cat named Miso/);
  assert.equal((await session.getItems()).length, 8);
  const popped = await session.popItem();
  assert.equal(popped.role, "assistant");
  assert.equal((await session.getItems()).length, 7);
  await session.clearSession();
  assert.deepEqual(await session.getItems(), []);
  assert.equal(await session.popItem(), undefined);
});

test("items keep their exact form, tool calls and results included", async () => {
  const session = new AgentMemorySession(await open(mapAdapter()));
  const items = [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Lisbon?" }] },
    { type: "function_call", callId: "call_1", name: "weather", arguments: "{\"city\":\"Lisbon\"}", status: "completed" },
    { type: "function_call_result", callId: "call_1", name: "weather", output: { type: "text", text: "21 C" }, status: "completed" },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "21 °C." }] },
  ];
  await session.addItems(items);
  assert.deepEqual(await session.getItems(), items);
  const stored = await session.memory.sessionHistory();
  assert.deepEqual(stored.map((e) => [e.role, e.content]), [["user", "Weather in Lisbon?"], ["assistant", ""], ["tool", "21 C"], ["assistant", "21 °C."]]);
  assert.equal(stored[1].toolCalls[0].name, "weather");
  await assert.rejects(session.addItems([{ type: "message", role: "narrator", content: "x" }]), (e) => e.code === "INVALID_INPUT");
  for (const bad of [null, "hi", 42]) await assert.rejects(session.addItems([bad]), (e) => e.code === "INVALID_INPUT");
});

test("memoryInputFilter puts what the memory knows for the turn's input into the instructions", async () => {
  const memory = await open(mapAdapter());
  await memory.remember({ content: "Allergic to penicillin" });
  const session = new AgentMemorySession(memory);
  const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: model() });
  const before = server.requests.length;
  await run(agent, "Which antibiotics should I avoid, given penicillin?", { session, callModelInputFilter: memoryInputFilter(memory) });
  const system = server.requests.slice(before).at(-1).body.messages.find((m) => m.role === "system").content;
  assert.match(system, /^Be brief\./);
  assert.match(system, /<memory>[\s\S]*Allergic to penicillin[\s\S]*<\/memory>/);
  assert.equal((await session.getItems()).length, 2, "the input and the reply, once");
  assert.throws(() => memoryInputFilter({}), (e) => e.code === "INVALID_INPUT");
});
const withLlm = (store, sessionId, extra = {}) => am.Memory.open({ namespace: "agents-llm", sessionId, store, llm: { endpoint: server.endpoint, model: "scripted" }, ...extra });
const lastRequest = () => server.requests.at(-1).body;

/** One run, streamed or not; its final text. */
async function turn(agent, input, session, stream) {
  const options = { session, callModelInputFilter: memoryInputFilter(session.memory) };
  if (!stream) return (await run(agent, input, options)).finalOutput;
  const result = await run(agent, input, { ...options, stream: true });
  let text = "";
  for await (const delta of result.toTextStream()) text += delta;
  await result.completed;
  return text;
}

test("a 20-turn chat, streamed and not, across a restart; with window: true each request fits the memory's budget", async () => {
  const store = mapAdapter();
  const memory = await twentyTurns({
    lastRequest,
    start: async () => {
      const memory = await withLlm(store, "long", SMALL_WINDOW);
      const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: model() });
      return { memory, agent, session: new AgentMemorySession(memory, { sessionId: "long", window: true }) };
    },
    turn: ({ agent, session }, input, stream) => turn(agent, input, session, stream),
  });
  assert.match(lastRequest().messages[0].content, /^Be brief\.[\s\S]*<summary>/, "the summary of what no longer fits comes with the instructions");
  assert.equal((await new AgentMemorySession(memory).getItems()).length, 40);
});

test("a tool call, streamed and not: call, result and answer are items of the session and reach the model", async () => {
  const memory = await withLlm(mapAdapter(), "tools");
  const session = new AgentMemorySession(memory, { sessionId: "tools" });
  const weather = tool({
    name: "weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
    strict: true,
    execute: async ({ city }) => `21 C and sunny in ${city}`,
  });
  const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: model(), tools: [weather] });
  for (const stream of [false, true]) {
    const text = await turn(agent, "What is the weather in Lisbon?", session, stream);
    assert.equal(text, "The tool says: 21 C and sunny in Lisbon");
    assert.deepEqual(lastRequest().messages.slice(-2).map((m) => m.role), ["assistant", "tool"]);
  }
  const items = await session.getItems();
  assert.deepEqual(items.map((i) => i.type ?? "message"), ["message", "function_call", "function_call_result", "message", "message", "function_call", "function_call_result", "message"]);
  const stored = await memory.sessionHistory();
  assert.equal(stored[5].toolCalls[0].name, "weather");
  assert.equal(stored[6].toolCallId, stored[5].toolCalls[0].id);
  assert.equal(stored[6].content, "21 C and sunny in Lisbon");
});

test("what a session end extracted reaches the next session's request through memoryInputFilter", async () => {
  const store = mapAdapter();
  const first = await withLlm(store, "monday");
  const agent = (memory) => new Agent({ name: "assistant", instructions: "Be brief.", model: model() });
  for (const input of ["I live in Lisbon.", "Which museum should I visit?"]) {
    await turn(agent(first), input, new AgentMemorySession(first), false);
  }
  assert.equal((await first.endSession()).judge, "llm");
  const next = await withLlm(store, "tuesday");
  await turn(agent(next), "Where do I live?", new AgentMemorySession(next), true);
  const sent = lastRequest().messages;
  assert.match(sent[0].content, /^Be brief\.[\s\S]*<memory>[\s\S]*User lives in Lisbon[\s\S]*<\/memory>/);
  assert.deepEqual(sent.slice(1).map((m) => m.content), ["Where do I live?"]);
});
