// A browser app built by Vite on the npm package: no asset imports and no
// configuration; Vite emits the wasm and the packs the package points at.
import init, { Memory, loadTokenizer } from "agent-memory";

async function main() {
  await init();
  const o200k = await loadTokenizer("o200k");
  const memory = await Memory.open({ namespace: "vite-example", sessionId: "chat-1", store: "indexeddb" });
  memory.setTokenizer(o200k);
  await memory.remember({ content: "Prefers Rust for systems code" });
  await memory.add({ role: "user", content: "Which language should I use for firmware?" });
  const { report } = await memory.buildContext({ query: "Which language for firmware?" });
  const [hit] = await memory.search("Rust systems code", { scopes: ["user"] });
  return { tokens: o200k.count("Hello, world! 我喜欢用 Rust 写代码"), tokenizer: report.tokenizer, recalled: hit?.text };
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
