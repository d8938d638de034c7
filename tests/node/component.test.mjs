// The WebAssembly component (component/, wit/agent-memory.wit) in two real
// hosts running the same scenario (tests/component/scenario.json): wasmtime
// through its Python package, with the model behind the local
// OpenAI-compatible server, and Node through `jco transpile`, with the
// scripted model in process. A chat of 30 turns is compressed, the session
// end extracts a fact with the model, a record is damaged, and a new
// instance of the component on the same store skips it and recalls the fact; every lock the core took from the host was
// released. Built by the test command
// (`cargo build -p agent-memory-component --target wasm32-wasip2 --release`).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { get_encoding } from "tiktoken";
import { root } from "../../scripts/example.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";

const component = join(root, "target/wasm32-wasip2/release/agent_memory_component.wasm");
const pack = join(root, "pkg/packs/o200k.amtk");
const scenario = JSON.parse(readFileSync(join(root, "tests/component/scenario.json"), "utf8"));
const run = async (cmd, args) => JSON.parse((await promisify(execFile)(cmd, args, { cwd: root, maxBuffer: 1 << 24 })).stdout.trim().split("\n").pop());

let server;
before(async () => { server = await startLlmServer(); });
after(() => server.close());

/** What the scenario must show in any host. */
function checkScenario(out) {
  const enc = get_encoding("o200k_base");
  assert.equal(out.tokenizer, "o200k");
  assert.equal(out.count, enc.encode(scenario.countText).length, "a pack given as bytes counts exactly");
  enc.free();
  assert.equal(out.historyLength, 2 * scenario.turns.length, "every message of the 30 turns is kept in the session's history");
  assert.ok(out.tokensBeforeEnd <= scenario.maxTokens, `live messages ${out.tokensBeforeEnd} tokens, cap ${scenario.maxTokens}: the rest was compressed`);
  assert.ok(out.summarySent > 0, "the request carries the summary of what was compressed");
  assert.ok(out.messagesSent < 2 * scenario.turns.length);
  assert.equal(out.judge, "llm");
  assert.ok(out.added >= 1);
  assert.ok(out.modelCalls >= 2, "compression and the session end called the host's model");
  assert.equal(out.retriedAfter503, true, "a failure with status 503 is retried by the core with the same request");
  assert.match(out.system, /^Be brief\.[\s\S]*<memory>[\s\S]*User lives in Lisbon[\s\S]*<\/memory>/, "after a restart, the new session recalls the extracted fact");
  assert.equal(out.last, scenario.question);
  assert.equal(out.hits[0], "User lives in Lisbon");
  assert.match(out.badNamespace, /^invalid-input: namespace/, "bad input is a typed error of the world, not a trap");
  assert.deepEqual(out.damaged, ["lt/entry/damaged"], "a damaged record is skipped and reported; the restart still recalls");
  assert.ok(out.locks.acquired > 0, "writes took the host's namespace lock");
  assert.equal(out.locks.released, out.locks.acquired, "and released each");
  assert.equal(out.locks.heldAtEnd, 0);
  assert.match(out.sealedImport, /^decryption: a sealed export needs/, "a sealed document is told from a plain one, as in the npm package");
  assert.equal(out.reimported.added + out.reimported.updated, 0, "a plain export imports back unchanged");
  assert.ok(out.reimported.unchanged >= 1);
}

const outputs = {};

test("the component in wasmtime (Python): 30 turns compressed, a session end with the model, recall after a restart", async () => {
  assert.ok(existsSync(component), "build it: cargo build -p agent-memory-component --target wasm32-wasip2 --release");
  outputs.wasmtime = await run(join(root, "target/component-venv/bin/python"), ["tests/component/host.py", component, pack, server.endpoint]);
  checkScenario(outputs.wasmtime);
});

test("the component in Node through jco transpile: the same scenario, the same results; 300,000 bad calls stay typed errors", async () => {
  const out = mkdtempSync(join(tmpdir(), "agent-memory-jco-"));
  execFileSync(join(root, "node_modules/.bin/jco"), ["transpile", component, "-o", out, "--instantiation", "async", "--name", "agent-memory", "--quiet"], { cwd: root });
  outputs.jco = await run(process.execPath, ["tests/component/host.mjs", out, pack]);
  const { typedErrors, ...jco } = outputs.jco;
  checkScenario(jco);
  assert.deepEqual(typedErrors, { badNamespace: 100_000, badImport: 100_000, badPack: 100_000, worksAfter: "User lives in Lisbon" },
    "300,000 bad calls are typed errors, and the instance works after them");
  if (outputs.wasmtime) {
    // Same core, same scripted model: the same figures in both hosts.
    const same = ({ system, ...rest }) => ({ ...rest, system: system.replace(/\[\d{4}-\d{2}-\d{2}\]/g, "[date]") });
    assert.deepEqual(same(jco), same(outputs.wasmtime));
  }
});

test("nothing of the component enters the npm package", () => {
  const wasm = readFileSync(join(root, "pkg/agent_memory_bg.wasm"));
  for (const name of ["wit-bindgen", "cabi_realloc", "agent-memory:core/api"]) {
    assert.equal(wasm.includes(Buffer.from(name)), false, `${name} in the npm package's wasm`);
  }
  const manifest = JSON.parse(readFileSync(join(root, "pkg/package.json"), "utf8"));
  assert.ok(!manifest.files.some((f) => /component|wit/.test(f)));
});

test("examples/component/host.py, the README's host, runs as shown", async () => {
  const { stdout } = await promisify(execFile)(join(root, "target/component-venv/bin/python"), ["examples/component/host.py", component], { cwd: root });
  assert.match(stdout, /^Be brief\.[\s\S]*<memory>[\s\S]*- Prefers Rust for systems code[\s\S]*<\/memory>/);
});
