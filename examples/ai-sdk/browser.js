// The AI SDK in a browser page with its memory in IndexedDB: two turns (one
// streamed, one with a tool the SDK runs), a session end, and a second
// instance on the same store (another tab, or the page reloaded) whose new
// session recalls what the first one was told.
import init, { Memory } from "agent-memory";
import { memoryMiddleware } from "agent-memory/ai-sdk";
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";

const base = new URLSearchParams(location.search).get("base") ?? "http://127.0.0.1:8787/v1";
const openai = createOpenAI({ baseURL: base, apiKey: "browser" });
const open = (sessionId) => Memory.open({ namespace: "ai-sdk-page", sessionId, store: "indexeddb", llm: { endpoint: `${base}/chat/completions`, model: "scripted" } });
const chat = (memory) => wrapLanguageModel({ model: openai.chat("scripted"), middleware: memoryMiddleware(memory) });
const weather = tool({
  description: "The weather in a city",
  inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  execute: async ({ city }) => `21 °C in ${city}`,
});

async function main() {
  await init();
  const monday = await open("monday");
  let streamed = "";
  for await (const delta of streamText({ model: chat(monday), prompt: "I live in Lisbon." }).textStream) streamed += delta;
  const { text: toolAnswer } = await generateText({ model: chat(monday), prompt: "What is the weather in Lisbon?", tools: { weather }, stopWhen: stepCountIs(3) });
  const roles = (await monday.sessionHistory()).map((m) => m.role);
  const ended = await monday.endSession();
  const tuesday = await open("tuesday");
  const { text: answer } = await generateText({ model: chat(tuesday), system: "Be brief.", prompt: "Where do I live?" });
  return { streamed, toolAnswer, roles, judge: ended.judge, added: ended.added, answer };
}

main().then(
  (result) => {
    document.getElementById("out").textContent = JSON.stringify(result, null, 2);
    window.__result = result;
  },
  (err) => {
    document.getElementById("out").textContent = `${err.code ?? ""} ${err.message}`;
    window.__result = { error: `${err.code ?? ""} ${err.message}` };
  },
);
