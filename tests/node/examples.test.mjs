// examples/node and examples/deno installed from the packed tarball and run
// as their comments say, each run a new process on the same store: the
// package loads with no init (Node ESM and CJS, Deno), what one run stores the
// next reads back, and a fact from one session reaches the next request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { get_encoding } from "tiktoken";
import { installExample, packTarball, root } from "../../scripts/example.mjs";

const tarball = packTarball();
const json = (out) => JSON.parse(out.trim().split("\n").pop());

/** Adds two turns, ends the session, asks: in three runs of `run`. */
function chatAcrossRuns(run) {
  assert.equal(run("I live in Lisbon since last spring.").content, "I live in Lisbon since last spring.");
  run("Which museum should I visit first?");
  const ended = run("--end");
  assert.equal(ended.judge, "rules");
  assert.ok(ended.added >= 1, JSON.stringify(ended));
  const asked = run("--ask", "Where do I live?");
  const sent = asked.messages.map((m) => m.content).join("\n");
  assert.match(sent, /Lisbon/, "the fact from the ended session reaches the request");
  assert.equal(asked.messages.at(-1).content, "Where do I live?");
  return asked;
}

test("examples/node from the tarball: ESM across runs on a JSON file, and CommonJS", () => {
  const app = installExample("node", tarball);
  const env = { ...process.env, MEMORY_FILE: join(app, "memory.json") };
  const asked = chatAcrossRuns((...args) => json(execFileSync("node", ["chat.mjs", ...args], { cwd: app, env, encoding: "utf8" })));
  assert.equal(asked.tokenizer, "o200k");

  const text = "Hello, world! 我喜欢用 Rust 写代码";
  const out = json(execFileSync("node", ["count.cjs", text], { cwd: app, encoding: "utf8" }));
  const enc = get_encoding("o200k_base");
  assert.deepEqual(out, { tokens: enc.encode(text).length, recalled: "Prefers Rust for command-line tools" });
  enc.free();
});

test("examples/deno from the tarball: type-checks, Deno KV across processes, no init, no permission for the package, the command line its comment gives", () => {
  const app = installExample("deno", tarball);
  const deno = join(root, "node_modules/.bin/deno");
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(tmpdir(), "agent-memory-deno") };
  execFileSync(deno, ["check", "--quiet", "--unstable-kv", "chat.ts"], { cwd: app, env });
  // The command line of the example's comment, as written there.
  const line = /^\/\/\s+deno run (.*) chat\.ts memory\.db "I live in Lisbon\."$/m.exec(readFileSync(join(app, "chat.ts"), "utf8"));
  assert.ok(line, "chat.ts gives its command line");
  const flags = line[1].split(" ");
  const asked = chatAcrossRuns((...args) =>
    json(execFileSync(deno, ["run", "--quiet", ...flags, "chat.ts", "memory.db", ...args], { cwd: app, env, encoding: "utf8" })));
  assert.equal(asked.tokenizer, "o200k");
  // Without the read permission for the packs: a typed error that names the flag.
  const denied = 'import { loadTokenizer } from "agent-memory"; try { await loadTokenizer("o200k"); console.log("{}"); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }';
  writeFileSync(join(app, "denied.mjs"), denied);
  const err = json(execFileSync(deno, ["run", "--quiet", "denied.mjs"], { cwd: app, env, encoding: "utf8" }));
  assert.equal(err.code, "TOKENIZER_PACK");
  assert.match(err.message, /--allow-read/);
  // Code shared with browsers calls init(): here it answers with the instance the entry made.
  const shared = 'import init, { version } from "agent-memory"; const w = await init(); console.log(JSON.stringify({ memory: w.memory instanceof WebAssembly.Memory, version: version() }))';
  assert.deepEqual(json(execFileSync(deno, ["eval", "--quiet", shared], { cwd: app, env, encoding: "utf8" })), { memory: true, version: JSON.parse(readFileSync(join(root, "pkg/package.json"), "utf8")).version });
});
