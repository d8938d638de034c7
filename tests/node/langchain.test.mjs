// agent-memory/langchain against the real @langchain/core: the message
// history round-trips every message kind (tool calls included), survives a
// restart on the same store, runs under RunnableWithMessageHistory, and the
// retriever returns Documents with scores and explain.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
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
