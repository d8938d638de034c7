// examples/ai-sdk, examples/langchain and examples/openai-agents installed
// from the packed tarball with their framework from the registry, each run
// as its comment says against the local OpenAI-compatible server: a turn
// per process on one memory file, a session end with the model, and the
// fact it extracted reaching the next session's request. The AI SDK one
// also as a browser page built by Vite and run in headless Chromium.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { installExample, packTarball, root } from "../../scripts/example.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { startServer } from "../../scripts/static-server.mjs";
import { launchChromium, runPage } from "../../scripts/chromium.mjs";

let server;
before(async () => { server = await startLlmServer(); });
after(() => server.close());
const tarball = packTarball();
const apps = {};

for (const name of ["ai-sdk", "langchain", "openai-agents"]) {
  test(`examples/${name} from the tarball: turns across runs, a session end, recall in the next session`, async () => {
    const app = (apps[name] = installExample(name, tarball));
    const env = {
      ...process.env, MEMORY_FILE: join(app, "memory.json"),
      OPENAI_BASE_URL: server.endpoint.replace(/\/chat\/completions$/, ""), OPENAI_API_KEY: "local", OPENAI_MODEL: "scripted",
    };
    // The server runs in this process: the example must run beside it, not block it.
    const run = async (...args) => JSON.parse((await promisify(execFile)("node", ["chat.mjs", ...args], { cwd: app, env })).stdout.trim().split("\n").pop());
    const first = await run("I live in Lisbon.");
    assert.ok(first.reply.length > 0, JSON.stringify(first));
    assert.equal(server.requests.at(-1).body.stream, true, "the turn was streamed");
    await run("Which museum should I visit first?");
    const sent = server.requests.at(-1).body.messages;
    assert.ok(sent.some((m) => m.content === "I live in Lisbon."), "the earlier turn, read back from the file, is in the next request");
    const ended = await run("--end");
    assert.equal(ended.judge, "llm");
    assert.ok(ended.added >= 1, JSON.stringify(ended));
    await run("--session", "tuesday", "Where do I live?");
    const next = server.requests.at(-1).body.messages;
    assert.match(next[0].content, /User lives in Lisbon/, "the fact from the ended session reaches the new session's request");
    assert.ok(!next.some((m) => m.content === "I live in Lisbon."), "a new session: the old turns are not resent");
    assert.equal(next.at(-1).content, "Where do I live?");
  });
}

test("examples/ai-sdk as a page built by Vite, in Chromium: streamed, a tool call, IndexedDB, recall in the next session", async () => {
  const app = apps["ai-sdk"] ?? installExample("ai-sdk", tarball);
  execFileSync(join(root, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], { cwd: app });
  const { server: pages, url } = await startServer(join(app, "dist"), 0);
  const browser = await launchChromium();
  try {
    const base = server.endpoint.replace(/\/chat\/completions$/, "");
    const r = await runPage(browser, `${url}?base=${encodeURIComponent(base)}`, "__result", 60_000);
    assert.equal(r.error, undefined, r.error);
    assert.ok(r.streamed.length > 0);
    assert.equal(r.toolAnswer, "The tool says: 21 °C in Lisbon");
    assert.deepEqual(r.roles, ["user", "assistant", "user", "assistant", "tool", "assistant"]);
    assert.equal(r.judge, "llm");
    assert.ok(r.added >= 1);
    const sent = server.requests.at(-1).body.messages;
    assert.match(sent[0].content, /^Be brief\.[\s\S]*User lives in Lisbon/, "the fact reached the next session's request");
    assert.equal(sent.at(-1).content, "Where do I live?");
  } finally {
    await browser.close();
    pages.close();
  }
});
