// agent-memory/langchain against the real @langchain/core: the message
// history round-trips every message kind (tool calls included), survives a
// restart on the same store, runs under RunnableWithMessageHistory, and the
// retriever returns Documents with scores and explain; with ChatOpenAI on
// the local server: 20 turns streamed and not, a tool call, a restart, and a
// fact from a session end reaching the next request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnablePassthrough, RunnableWithMessageHistory } from "@langchain/core/runnables";
import { ChatOpenAI } from "@langchain/openai";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { SMALL_WINDOW, twentyTurns } from "./twenty-turns.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { AgentMemoryChatHistory, AgentMemoryRetriever } from "../../pkg/integrations/langchain.js";

const open = (store, sessionId = "lc") => am.Memory.open({ namespace: "lc", sessionId, store });

test("the chat history keeps every message kind, and a restart on the same store reads it back", async () => {
  const store = mapAdapter();
  const history = new AgentMemoryChatHistory(await open(store));
  const sent = [
    new SystemMessage("You are terse."),
    new HumanMessage("What's the weather in Lisbon?"),
    new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "weather", args: { city: "Lisbon" }, type: "tool_call" }] }),
    new ToolMessage({ content: "{\"temp\":21}", tool_call_id: "call_1" }),
    new AIMessage("21 °C and sunny."),
  ];
  await history.addMessages(sent);
  const shape = (messages) => messages.map((m) => ({ type: m._getType(), content: m.content, tool_calls: m.tool_calls?.map(({ id, name, args }) => ({ id, name, args })) ?? [], tool_call_id: m.tool_call_id }));
  assert.deepEqual(shape(await history.getMessages()), shape(sent));
  const restarted = new AgentMemoryChatHistory(await open(store));
  assert.deepEqual(shape(await restarted.getMessages()), shape(sent));
  await assert.rejects(history.addMessage(new ChatMessage("hi", "narrator")), (e) => e.code === "INVALID_INPUT");
  await restarted.clear();
  assert.deepEqual(await restarted.getMessages(), []);
  assert.deepEqual(await new AgentMemoryChatHistory(await open(store)).getMessages(), []);
});

test("RunnableWithMessageHistory stores each turn in the session, and the memory builds requests from it", async () => {
  const store = mapAdapter();
  const memory = await open(store, "chain");
  const model = new FakeListChatModel({ responses: ["Nice to meet you, Ada.", "You told me you live in Lisbon.", "Your name is Ada."] });
  const prompt = ChatPromptTemplate.fromMessages([["system", "You remember."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chain = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: async () => new AgentMemoryChatHistory(memory),
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
  const config = { configurable: { sessionId: "chain" } };
  for (const input of ["I am Ada and I live in Lisbon.", "Where do I live?", "What is my name?"]) {
    await chain.invoke({ input }, config);
  }
  const stored = (await memory.sessionHistory()).map((e) => `${e.role}: ${e.content}`);
  assert.deepEqual(stored, [
    "user: I am Ada and I live in Lisbon.", "assistant: Nice to meet you, Ada.",
    "user: Where do I live?", "assistant: You told me you live in Lisbon.",
    "user: What is my name?", "assistant: Your name is Ada.",
  ]);
  const ctx = await memory.buildContext({ query: "Anything else?" });
  assert.equal(ctx.messages.filter((m) => m.role !== "system").length, 7, "six turns and the new message");
});

test("the retriever returns facts and past turns as Documents with score, scope and explain", async () => {
  const store = mapAdapter();
  const memory = await open(store);
  await memory.remember({ content: "Allergic to penicillin" });
  await memory.remember({ content: "Plays the cello in a quartet" });
  const retriever = new AgentMemoryRetriever({ memory, topK: 3 });
  const docs = await retriever.invoke("is the user allergic to penicillin?");
  assert.equal(docs[0].pageContent, "Allergic to penicillin");
  assert.equal(docs[0].metadata.scope, "user");
  assert.equal(typeof docs[0].metadata.score, "number");
  assert.equal(typeof docs[0].metadata.explain.bm25, "number");
  assert.ok(docs.length <= 3);
  const scoped = new AgentMemoryRetriever({ memory, scopes: ["agent:none"] });
  assert.deepEqual(await scoped.invoke("penicillin"), []);
});

// The same adapters with the real OpenAI chat model of LangChain
// (@langchain/openai) pointed at the local OpenAI-compatible server.
let server;
before(async () => { server = await startLlmServer(); });
after(() => server.close());
const chatModel = () => new ChatOpenAI({ model: "scripted", apiKey: "local", maxRetries: 0, configuration: { baseURL: server.endpoint.replace(/\/chat\/completions$/, "") } });
const withLlm = (store, sessionId, extra = {}) => am.Memory.open({ namespace: "lc-openai", sessionId, store, llm: { endpoint: server.endpoint, model: "scripted" }, ...extra });
const lastRequest = () => server.requests.at(-1).body;

/** The chain a LangChain app writes: recalled memories in the system prompt, the history from the memory, ChatOpenAI. */
function memoryChain(memory) {
  const retriever = new AgentMemoryRetriever({ memory, topK: 3 });
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "You are helpful.\nWhat you know about the user:\n{memories}"],
    new MessagesPlaceholder("history"),
    ["human", "{input}"],
  ]);
  const recall = RunnablePassthrough.assign({ memories: async ({ input }) => (await retriever.invoke(input)).map((d) => d.pageContent).join("\n") });
  return new RunnableWithMessageHistory({
    runnable: recall.pipe(prompt).pipe(chatModel()),
    getMessageHistory: async () => new AgentMemoryChatHistory(memory, { window: true }),
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
}

test("ChatOpenAI: a 20-turn chat, streamed and not, across a restart; with window: true each request fits the memory's budget", async () => {
  const store = mapAdapter();
  const config = { configurable: { sessionId: "long" } };
  await twentyTurns({
    lastRequest,
    start: async () => {
      const memory = await withLlm(store, "long", SMALL_WINDOW);
      return { memory, chain: memoryChain(memory) };
    },
    turn: async ({ chain }, input, stream) => {
      if (!stream) return (await chain.invoke({ input }, config)).content;
      let reply = "";
      for await (const chunk of await chain.stream({ input }, config)) reply += chunk.content;
      return reply;
    },
  });
});

test("ChatOpenAI with a tool, streamed and not: the call and its result go through the history and back to the model", async () => {
  const memory = await withLlm(mapAdapter(), "tools");
  const history = new AgentMemoryChatHistory(memory);
  const model = chatModel().bindTools([{ type: "function", function: { name: "weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }]);
  for (const stream of [false, true]) {
    const ask = async (messages) => {
      if (!stream) return model.invoke(messages);
      let full;
      for await (const chunk of await model.stream(messages)) full = full ? full.concat(chunk) : chunk;
      return full;
    };
    await history.addMessage(new HumanMessage("What is the weather in Lisbon?"));
    const call = await ask(await history.getMessages());
    assert.equal(call.tool_calls[0].name, "weather");
    assert.deepEqual(call.tool_calls[0].args, { city: "Lisbon" });
    await history.addMessages([call, new ToolMessage({ content: "21 C and sunny", tool_call_id: call.tool_calls[0].id })]);
    const answer = await ask(await history.getMessages());
    assert.equal(answer.content, "The tool says: 21 C and sunny");
    const sent = lastRequest().messages;
    assert.deepEqual(sent.slice(-2).map((m) => m.role), ["assistant", "tool"]);
    assert.equal(sent.at(-1).tool_call_id, call.tool_calls[0].id);
    await history.addMessage(answer);
  }
  const stored = await memory.sessionHistory();
  assert.deepEqual(stored.map((m) => m.role), ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
  assert.equal(stored[5].toolCalls[0].name, "weather", "a streamed call is stored whole");
  assert.equal(stored[6].toolCallId, stored[5].toolCalls[0].id);
});

test("ChatOpenAI: what a session end extracted reaches the next session's request through the retriever", async () => {
  const store = mapAdapter();
  const first = await withLlm(store, "monday");
  for (const input of ["I live in Lisbon.", "Which museum should I visit?"]) {
    await memoryChain(first).invoke({ input }, { configurable: { sessionId: "monday" } });
  }
  assert.equal((await first.endSession()).judge, "llm");
  const next = await withLlm(store, "tuesday");
  await memoryChain(next).invoke({ input: "Where do I live?" }, { configurable: { sessionId: "tuesday" } });
  const sent = lastRequest().messages;
  assert.match(sent[0].content, /What you know about the user:\nUser lives in Lisbon/);
  assert.deepEqual(sent.slice(1).map((m) => m.content), ["Where do I live?"], "a new session: no earlier turns");
});
