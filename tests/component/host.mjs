// The component in Node through `jco transpile`: WASI from jco's preview2
// shim, a host-side key-value store (a Map), the scripted model called in
// process (a component's import is synchronous), and the scenario
// tests/component/scenario.json describes. Prints one JSON object of what it
// saw, the same fields as host.py; tests/node/component.test.mjs checks both.
//
//   node host.mjs <folder of the transpiled component> <o200k pack>
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mapStore, wasiImports } from "./imports.mjs";
import { promptTokens, scriptedModel } from "../../scripts/llm-server.mjs";

const [dir, pack] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(new URL("scenario.json", import.meta.url), "utf8"));
const { instantiate } = await import(join(dir, "agent-memory.js"));

// The host's store: one Map for every namespace, kept across restarts.
const kv = new Map();
let modelCalls = 0;
const failedCalls = [];
const held = new Set();
const lockCounts = { acquired: 0, released: 0 };
// Keyed by interface name without version, as jco's output reads them.
const imports = {
  "agent-memory:core/store": mapStore(kv),
  // One instance at a time here: a name asked for while held would be a second holder (a bug).
  "agent-memory:core/locks": {
    acquire: (name) => {
      if (held.has(name)) throw `${name} is already held`;
      held.add(name);
      lockCounts.acquired++;
    },
    release: (name) => {
      held.delete(name);
      lockCounts.released++;
    },
  },
  "agent-memory:core/llm": {
    complete: ({ messages }) => {
      // The first answer is a 503: the core, not the host, decides from the
      // status alone that it is worth retrying, and sends that request again.
      const sent = JSON.stringify(messages.map(({ role, content }) => ({ role, content })));
      if (failedCalls.length === 0) {
        failedCalls.push(sent);
        throw { message: "overloaded", status: 503, retryAfterMs: 0 };
      }
      if (sent === failedCalls[0]) failedCalls.push(sent);
      modelCalls++;
      const content = scriptedModel({ messages });
      return { content, usage: { promptTokens: promptTokens(messages), completionTokens: 0 } };
    },
  },
  "agent-memory:core/embedder": {
    embed: () => { throw "no embedder in this host"; },
  },
  ...wasiImports,
};

/** One instance of the component: a process of the host, restarted by making another. */
const start = async () => (await instantiate((path) => WebAssembly.compile(readFileSync(join(dir, path))), imports)).api;

function openMemory(api, sessionId) {
  const memory = api.Memory.open({ namespace: scenario.namespace, sessionId, useLlm: true, maxTokens: scenario.maxTokens });
  const tokenizer = api.Tokenizer.fromPack(readFileSync(pack));
  memory.setTokenizer(tokenizer);
  return { memory, tokenizer };
}

const message = (role, content) => ({ role, content, toolCalls: [], metadata: [] });

const first = await start();
const { memory } = openMemory(first, "monday");
for (const [user, assistant] of scenario.turns) {
  memory.add(message("user", user));
  memory.add(message("assistant", assistant));
}
const usage = memory.usage();
const built = memory.buildContext({ system: "Be brief." });
const ended = memory.endSession();
const history = memory.sessionHistory();

// A record damaged while no instance ran; then a restart: a new instance of
// the component on the same store.
kv.set(`${scenario.namespace}/lt/entry/damaged`, "{not json");
const second = await start();
const { memory: memory2, tokenizer } = openMemory(second, "tuesday");
const asked = memory2.buildContext({ query: scenario.question, system: "Be brief." });
const hits = memory2.search("Lisbon", 3);
let badNamespace = null;
try {
  second.Memory.open({ namespace: "../escape", sessionId: "s", useLlm: false });
} catch (e) {
  badNamespace = `${e.payload.code}: ${e.payload.message}`;
}
// The same bad calls 100,000 times: each a typed error, never a trap, and
// the instance works after them.
const typed = { badNamespace: 0, badImport: 0, badPack: 0 };
const count = (name, f) => { try { f(); } catch (e) { if (e.payload?.code === "invalid-input" || e.payload?.code === "tokenizer-pack") typed[name]++; } };
for (let i = 0; i < 100_000; i++) {
  count("badNamespace", () => second.Memory.open({ namespace: "", sessionId: "s", useLlm: false }));
  count("badImport", () => memory2.importMemories("{not json"));
  count("badPack", () => second.Tokenizer.fromPack(new Uint8Array([1, 2, 3])));
}
typed.worksAfter = memory2.search("Lisbon", 1)[0]?.text;

// Import detects a sealed document as the npm package does: this world
// takes no key, so it is a typed `decryption` error, not a malformed plain
// document; a plain export imports back unchanged.
let sealedImport = null;
try {
  memory2.importMemories(JSON.stringify(scenario.sealedExport));
} catch (e) {
  sealedImport = `${e.payload.code}: ${e.payload.message}`;
}
const reimported = memory2.importMemories(memory2.exportMemories());

console.log(JSON.stringify({
  tokenizer: tokenizer.id(),
  count: tokenizer.count(scenario.countText),
  historyLength: history.length,
  tokensBeforeEnd: Number(usage.tokens),
  summarySent: built.report.summary,
  messagesSent: built.report.messagesSent,
  judge: ended.judge,
  added: ended.added,
  modelCalls,
  retriedAfter503: failedCalls.length === 2,
  system: asked.messages[0].content,
  last: asked.messages.at(-1).content,
  hits: hits.map((h) => h.text),
  badNamespace,
  keys: kv.size,
  damaged: JSON.parse(memory2.stats()).damaged.map((d) => d.key),
  locks: { ...lockCounts, heldAtEnd: held.size },
  sealedImport,
  reimported: { ...reimported },
  typedErrors: typed,
}));
