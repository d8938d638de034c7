// agent-memory/openai-agents against the real Agents SDK (@openai/agents)
// with its OpenAI provider pointed at the local OpenAI-compatible server:
// runs keep their items in the memory's session, a restart on the same
// store continues the conversation, popItem and clearSession work, and the
// remembered fact reaches the next request through memoryInstructions.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { AgentMemorySession, memoryInstructions } from "../../pkg/integrations/openai-agents.js";

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
});

test("memoryInstructions puts what the memory knows into the agent's instructions each turn", async () => {
  const memory = await open(mapAdapter());
  await memory.remember({ content: "Allergic to penicillin" });
  const session = new AgentMemorySession(memory);
  const agent = new Agent({ name: "assistant", instructions: memoryInstructions(memory, "Be brief."), model: model() });
  await memory.add({ role: "user", content: "Which antibiotics should I avoid, given penicillin?" });
  const before = server.requests.length;
  await run(agent, "Which antibiotics should I avoid, given penicillin?", { session });
  const system = server.requests.slice(before).at(-1).body.messages.find((m) => m.role === "system").content;
  assert.match(system, /^Be brief\./);
  assert.match(system, /<memory>[\s\S]*Allergic to penicillin[\s\S]*<\/memory>/);
});
