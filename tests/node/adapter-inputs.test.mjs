// Malformed input to the framework adapters gets the library's typed error
// (an AgentMemoryError, code INVALID_INPUT), as a rejected promise from an
// async method, never a TypeError or SyntaxError; and a damaged stored value
// (tool call arguments or adapter metadata that are not JSON, planted with
// the core API) does not break later reads: the message comes back, rebuilt
// from its role and text, with the others.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { AgentMemoryChatHistory, AgentMemoryRetriever, fromLangChain, toLangChain } from "../../pkg/integrations/langchain.js";
import { fromModelMessage, fromModelMessages, fromUIMessage, memoryMiddleware, toModelMessages, toUIMessages } from "../../pkg/integrations/ai-sdk.js";
import { AgentMemorySession, memoryInputFilter, toAgentItem } from "../../pkg/integrations/openai-agents.js";

const open = (sessionId) => am.Memory.open({ namespace: "inputs", sessionId, store: mapAdapter() });

// The core's own error for bad input, which the adapters' must look like.
const core = await (await open("core")).add(null).catch((e) => e);

/** The library's typed error for bad input. */
function typed(e) {
  assert.ok(!(e instanceof TypeError) && !(e instanceof SyntaxError), `untyped: ${e?.name}: ${e?.message}`);
  assert.equal(e.name, core.name);
  assert.equal(Object.getPrototypeOf(e), Object.getPrototypeOf(core));
  assert.equal(e.code, "INVALID_INPUT");
  return true;
}

/** An async method's call: it must return a promise that rejects with the typed error, not throw. */
async function rejects(call) {
  let promise;
  assert.doesNotThrow(() => { promise = call(); }, "an async method rejects, it does not throw");
  assert.ok(promise instanceof Promise);
  await assert.rejects(promise, typed);
}

const circular = () => {
  const value = { a: 1 };
  value.self = value;
  return value;
};

test("the core's error for bad input is an AgentMemoryError with code INVALID_INPUT", () => {
  assert.equal(core.name, "AgentMemoryError");
  assert.equal(core.code, "INVALID_INPUT");
});

test("LangChain: a stored tool call whose arguments are not JSON comes back as an invalid tool call, and later reads work", async () => {
  const memory = await open("lc-bad-args");
  const raw = '{"city": "Lis';
  await memory.add({ role: "user", content: "Weather in Lisbon and Porto?" });
  await memory.add({ role: "assistant", content: "", toolCalls: [
    { id: "call_1", name: "weather", arguments: raw },
    { id: "call_2", name: "weather", arguments: '{"city":"Porto"}' },
  ] });
  await memory.add({ role: "tool", content: "bad arguments", toolCallId: "call_1" });
  await memory.add({ role: "tool", content: "18 °C", toolCallId: "call_2" });
  for (const window of [false, true]) {
    const history = new AgentMemoryChatHistory(memory, { window });
    await history.addMessage(new AIMessage(`turn ${window}`));
    const messages = (await history.getMessages()).filter((m) => m._getType() !== "system");
    assert.deepEqual(messages.map((m) => m._getType()), ["human", "ai", "tool", "tool", "ai", ...(window ? ["ai"] : [])]);
    const call = messages[1];
    assert.deepEqual(call.tool_calls.map(({ id, name, args }) => ({ id, name, args })), [{ id: "call_2", name: "weather", args: { city: "Porto" } }]);
    assert.deepEqual(call.invalid_tool_calls.map(({ id, name, args }) => ({ id, name, args })), [{ id: "call_1", name: "weather", args: raw }]);
    assert.equal(typeof call.invalid_tool_calls[0].error, "string");
  }
  // Added back (a copy of the chat), the invalid call keeps its raw arguments.
  const copy = await open("lc-copy");
  await new AgentMemoryChatHistory(copy).addMessages(await new AgentMemoryChatHistory(memory).getMessages());
  assert.deepEqual((await copy.sessionHistory())[1].toolCalls.map((c) => c.arguments).sort(), [raw, '{"city":"Porto"}'].sort());
});

test("LangChain: arguments that are JSON but not an object are an invalid tool call too", async () => {
  const memory = await open("lc-not-object");
  for (const args of ["null", "[1]", "5"]) {
    await memory.add({ role: "assistant", content: "", toolCalls: [{ id: `c_${args}`, name: "f", arguments: args }] });
  }
  const messages = await new AgentMemoryChatHistory(memory).getMessages();
  assert.deepEqual(messages.map((m) => [m.tool_calls.length, m.invalid_tool_calls.map((c) => c.args)]), [[0, ["null"]], [0, ["[1]"]], [0, ["5"]]]);
});

test("LangChain: a retriever or a history without a Memory is a typed error when built", () => {
  for (const fields of [{ memory: null }, {}, undefined, null]) {
    assert.throws(() => new AgentMemoryRetriever(fields), typed);
  }
  assert.throws(() => new AgentMemoryChatHistory(null), typed);
});

test("ai-sdk: malformed messages are typed errors", () => {
  assert.throws(() => fromModelMessage({ role: "user", content: [null] }), typed);
  assert.throws(() => fromModelMessages([{ role: "user", content: [null] }]), typed);
  const call = { type: "tool-call", toolCallId: "call_1", toolName: "weather", input: circular() };
  assert.throws(() => fromModelMessage({ role: "assistant", content: [call] }), typed);
  assert.throws(() => toModelMessages([null]), typed);
  assert.throws(() => toUIMessages([null]), typed);
});

test("ai-sdk: a middleware prompt of [null] or a string rejects with a typed error", async () => {
  const middleware = memoryMiddleware(await open("ai-prompt"));
  for (const prompt of [[null], "What is my name?", [{ role: "user", content: [null] }]]) {
    await rejects(() => middleware.transformParams({ params: { prompt } }));
  }
});

test("ai-sdk: stored aiSdk.message metadata that is not a message is rebuilt from the stored text; the middleware keeps working", async () => {
  const memory = await open("ai-bad-meta");
  for (const [i, bad] of ["{not json", "null", '{"role":"user"}'].entries()) {
    await memory.add({ role: "user", content: `planted ${i}`, metadata: { "aiSdk.message": bad, "aiSdk.uiMessage": bad } });
  }
  for (const input of fromModelMessage({ role: "assistant", content: [{ type: "text", text: "Noted." }] })) await memory.add(input);
  assert.deepEqual(toModelMessages(await memory.sessionHistory()), [
    ...[0, 1, 2].map((i) => ({ role: "user", content: [{ type: "text", text: `planted ${i}` }] })),
    { role: "assistant", content: [{ type: "text", text: "Noted." }] },
  ]);
  assert.deepEqual(toUIMessages(await memory.sessionHistory()).map((m) => m.parts[0].text), ["planted 0", "planted 1", "planted 2", "Noted."]);
  const middleware = memoryMiddleware(memory);
  for (const text of ["And now?", "And later?"]) {
    const { prompt } = await middleware.transformParams({ params: { prompt: [{ role: "user", content: [{ type: "text", text }] }] } });
    const texts = prompt.filter((m) => m.role !== "system").map((m) => m.content.map((p) => p.text).join(""));
    assert.deepEqual(texts.slice(0, 4), ["planted 0", "planted 1", "planted 2", "Noted."]);
    assert.equal(texts.at(-1), text);
    await middleware.wrapGenerate({ doGenerate: async () => ({ content: [{ type: "text", text: "ok" }] }) });
  }
});

test("openai-agents: addItems of null, an object or an item JSON cannot hold rejects with a typed error and adds nothing", async () => {
  const session = new AgentMemorySession(await open("agents-add"));
  await rejects(() => session.addItems(null));
  await rejects(() => session.addItems({}));
  const result = { type: "function_call_result", callId: "call_1", name: "weather", status: "completed", output: circular() };
  await rejects(() => session.addItems([{ role: "user", content: "hi" }, result]));
  assert.deepEqual(await session.getItems(), []);
});

test("openai-agents: memoryInputFilter called with a string, [null] or no model data rejects with a typed error", async () => {
  const filter = memoryInputFilter(await open("agents-filter"));
  for (const args of ["What is my name?", [null], {}, undefined, { modelData: null }, { modelData: { input: [null] } }, { modelData: { input: "hi" } }]) {
    await rejects(() => filter(args));
  }
});

test("openai-agents: stored openaiAgents.item metadata that is not an item is rebuilt from the stored message; getItems keeps working", async () => {
  const memory = await open("agents-bad-meta");
  const session = new AgentMemorySession(memory);
  await memory.add({ role: "user", content: "My name is Ada.", metadata: { "openaiAgents.item": "{not json" } });
  await memory.add({ role: "assistant", content: "Hi Ada.", metadata: { "openaiAgents.item": "[]" } });
  const good = { type: "message", role: "user", content: "I live in Lisbon." };
  await session.addItems([good]);
  const expected = [
    { type: "message", role: "user", content: "My name is Ada." },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hi Ada." }] },
    good,
  ];
  assert.deepEqual(await session.getItems(), expected);
  assert.deepEqual(await new AgentMemorySession(memory, { window: true }).getItems(), expected);
  assert.deepEqual(await session.getItems(1), [good]);
  await session.popItem();
  assert.deepEqual(await session.popItem(), expected[1]);
  assert.deepEqual(await session.getItems(), [expected[0]]);
});

test("LangChain: addMessages(null) rejects with a typed error", async () => {
  const history = new AgentMemoryChatHistory(await open("lc-add-null"));
  await rejects(() => history.addMessages(null));
});

test("LangChain: addMessage of an AI message whose tool call args are circular rejects with a typed error", async () => {
  const history = new AgentMemoryChatHistory(await open("lc-circular-args"));
  await rejects(() => history.addMessage(new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "f", args: circular() }] })));
});

test("LangChain: addMessage of a message whose content is circular rejects with a typed error", async () => {
  const history = new AgentMemoryChatHistory(await open("lc-circular-content"));
  await rejects(() => history.addMessage(new HumanMessage({ content: [{ type: "text", text: "hi", extra: circular() }] })));
});

test("LangChain: fromLangChain of tool calls that are not an array of objects, or a BigInt in the content, is a typed error", () => {
  const ai = (fields) => ({ _getType: () => "ai", content: "", ...fields });
  for (const fields of [{ tool_calls: "call" }, { tool_calls: [null] }, { invalid_tool_calls: {} }, { invalid_tool_calls: [5] }]) {
    assert.throws(() => fromLangChain(ai(fields)), typed);
  }
  assert.throws(() => fromLangChain({ _getType: () => "human", content: [{ type: "text", text: "hi", n: 1n }] }), typed);
});

test("LangChain: toLangChain of null, a string or an entry whose toolCalls are not an array of objects is a typed error", () => {
  for (const entry of [null, "hi", { role: "assistant", content: "", toolCalls: "call" }, { role: "assistant", content: "", toolCalls: [null] }]) {
    assert.throws(() => toLangChain(entry), typed);
  }
});

test("LangChain: a history with options that are not an object is a typed error when built", async () => {
  const memory = await open("lc-options");
  for (const options of [null, 5]) assert.throws(() => new AgentMemoryChatHistory(memory, options), typed);
});

test("LangChain: addMessages of an object, or of a batch with a bad message, rejects with a typed error and adds none", async () => {
  const memory = await open("lc-add-batch");
  const history = new AgentMemoryChatHistory(memory);
  await rejects(() => history.addMessages({}));
  await rejects(() => history.addMessages([new HumanMessage("hi"), null]));
  assert.deepEqual(await memory.sessionHistory(), []);
});

test("ai-sdk: wrapGenerate when the model's content is [null] rejects with a typed error", async () => {
  const middleware = memoryMiddleware(await open("ai-generate-null"));
  await rejects(() => middleware.wrapGenerate({ doGenerate: async () => ({ content: [null] }) }));
});

test("ai-sdk: transformParams() with no arguments, or without params, rejects with a typed error", async () => {
  const middleware = memoryMiddleware(await open("ai-transform-none"));
  for (const args of [undefined, {}, { params: null }]) await rejects(() => middleware.transformParams(args));
});

test("ai-sdk: wrapGenerate without doGenerate, or with a result that has no array of content, rejects with a typed error; the model's own error passes through", async () => {
  const middleware = memoryMiddleware(await open("ai-generate-shape"));
  for (const args of [undefined, {}, { doGenerate: 5 }]) await rejects(() => middleware.wrapGenerate(args));
  for (const result of [null, {}, { content: 5 }, { content: "hi" }]) {
    await rejects(() => middleware.wrapGenerate({ doGenerate: async () => result }));
  }
  const own = new Error("rate limited");
  await assert.rejects(middleware.wrapGenerate({ doGenerate: async () => { throw own; } }), (e) => e === own);
});

test("ai-sdk: wrapStream without doStream or a stream rejects with a typed error; a null stream part errors the stream with one", async () => {
  const middleware = memoryMiddleware(await open("ai-stream-shape"));
  for (const args of [undefined, {}, { doStream: 5 }]) await rejects(() => middleware.wrapStream(args));
  for (const result of [null, {}, { stream: 5 }]) await rejects(() => middleware.wrapStream({ doStream: async () => result }));
  const { stream } = await middleware.wrapStream({
    doStream: async () => ({ stream: new ReadableStream({ start(c) { c.enqueue(null); c.close(); } }) }),
  });
  await assert.rejects(async () => { for await (const _ of stream); }, typed);
});

test("ai-sdk: memoryMiddleware with options that are not an object is a typed error", async () => {
  const memory = await open("ai-options");
  for (const options of [null, 5]) assert.throws(() => memoryMiddleware(memory, options), typed);
});

test("ai-sdk: a tool result whose content output is not an array of parts is a typed error", () => {
  for (const value of [[null], {}]) {
    const part = { type: "tool-result", toolCallId: "call_1", toolName: "f", output: { type: "content", value } };
    assert.throws(() => fromModelMessage({ role: "tool", content: [part] }), typed);
  }
});

test("ai-sdk: a UI message part whose type is not a string is not a tool part", () => {
  const [first] = fromUIMessage({ role: "user", parts: [{ type: 5 }, { type: "text", text: "hi" }] });
  assert.equal(first.content, "hi");
  assert.equal(first.toolCalls, undefined);
});

test("ai-sdk: entries whose toolCalls are not an array of objects are a typed error", () => {
  for (const toolCalls of ["call", [null]]) {
    const entries = [{ role: "assistant", content: "", toolCalls }, { role: "tool", content: "18 °C", toolCallId: "call_1" }];
    assert.throws(() => toModelMessages(entries), typed);
    assert.throws(() => toUIMessages(entries), typed);
  }
});

test("ai-sdk: a stored joined message with a very long content array is joined without overflowing the stack", async () => {
  const memory = await open("ai-long-join");
  const part = { type: "tool-result", toolCallId: "call_1", toolName: "f", output: { type: "text", value: "" } };
  await memory.add({ role: "tool", content: "first", toolCallId: "call_1" });
  await memory.add({
    role: "tool", content: "rest", toolCallId: "call_1",
    metadata: { "aiSdk.joinsPrevious": "1", "aiSdk.message": JSON.stringify({ role: "tool", content: Array(300_000).fill(part) }) },
  });
  const messages = toModelMessages(await memory.sessionHistory());
  assert.equal(messages.length, 1);
  assert.equal(messages[0].content.length, 300_001);
});

test("openai-agents: a session without a Memory is a typed error when built", () => {
  for (const memory of [null, undefined, {}]) assert.throws(() => new AgentMemorySession(memory), typed);
});

test("openai-agents: toAgentItem of null or a non-object is a typed error", () => {
  for (const entry of [null, undefined, "hi", 5]) assert.throws(() => toAgentItem(entry), typed);
});

test("openai-agents: a session with options that are not an object, or a sessionId that is not a string, is a typed error when built", async () => {
  const memory = await open("agents-options");
  for (const options of [null, 5, { sessionId: 5 }]) assert.throws(() => new AgentMemorySession(memory, options), typed);
});

test("openai-agents: getItems with a limit that is not a number rejects with a typed error", async () => {
  const session = new AgentMemorySession(await open("agents-limit"));
  for (const limit of [Symbol("limit"), 1n, "2", null]) await rejects(() => session.getItems(limit));
});
