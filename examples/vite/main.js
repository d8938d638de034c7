// A browser app built by Vite on the npm package: no asset imports and no
// configuration; Vite emits the wasm and the packs the package points at.
//
// With ?relay=<url>&token=<token> the page is one of a user's devices: it
// syncs its memory, chats included, through the relay of examples/cloudflare
// (whose SYNC_ORIGINS lets this page's origin in). A real app takes the URL
// from its configuration and the token from its sign-in.
import init, { Memory, loadTokenizer } from "agent-memory";
import { httpTransport } from "agent-memory/sync/http";

const params = new URLSearchParams(location.search);
const relay = params.get("relay") && httpTransport(params.get("relay"), { headers: { authorization: `Bearer ${params.get("token")}` } });
const SYNC = { sessions: true };
const said = async (memory) => (await memory.sessionHistory()).map((e) => e.content);

async function main() {
  await init();
  const o200k = await loadTokenizer("o200k");
  const memory = await Memory.open({ namespace: "vite-example", sessionId: "chat-1", store: "indexeddb" });
  memory.setTokenizer(o200k);
  // What the other devices wrote comes in first: a fact one of them already
  // remembered is then a duplicate here, not a second copy.
  const pulled = relay && (await memory.sync(relay, SYNC));
  const { outcome } = await memory.remember({ content: "Prefers Rust for systems code" });
  // The new message joins the session as its context is built.
  const { report } = await memory.buildContext({ query: "Which language should I use for firmware?" });
  const [hit] = await memory.search("Rust systems code", { scopes: ["user"] });
  const result = { tokens: o200k.count("Hello, world! 我喜欢用 Rust 写代码"), tokenizer: report.tokenizer, recalled: hit?.text };
  if (!relay) return result;
  const pushed = await memory.sync(relay, SYNC);
  chat(memory);
  return { ...result, remembered: outcome, received: pulled.received, sent: pushed.sent, said: await said(memory) };
}

/** The message box: each message is added, then synced; the log shows the chat as this device holds it. */
function chat(memory) {
  const form = document.getElementById("chat");
  form.hidden = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = document.getElementById("message");
    try {
      await memory.add({ role: "user", content: input.value });
      input.value = "";
      const { sent, received } = await memory.sync(relay, SYNC);
      show({ ...window.__result, sent, received, said: await said(memory), error: undefined });
    } catch (err) {
      // Offline, say: the message is kept here and goes with the next sync.
      show({ ...window.__result, said: await said(memory), error: `${err.code ?? ""} ${err.message}` });
    }
  });
}

function show(result) {
  document.getElementById("out").textContent = JSON.stringify(result, null, 2);
  window.__result = result;
}

main().then(show, (err) => show({ error: `${err.code ?? ""} ${err.message}` }));
