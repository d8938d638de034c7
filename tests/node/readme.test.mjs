// Every JavaScript or TypeScript block of the README and of docs/ is marked
// just above it: `<!-- example: node; given: a, b; swap: "x" -> y -->` runs
// it in Node as written, importing "agent-memory" from the built package,
// with only the names it declares under `given` defined before it and only
// the literals it declares under `swap` replaced (a browser's "indexeddb" by
// "memory", a remote model by the local test server); `<!-- fragment: why
// -->` marks the lines of a larger app that the tests run elsewhere. A block
// with no mark, a name or swap the harness does not know, or an example that
// stops running fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startLlmServer, scriptedEmbedding } from "../../scripts/llm-server.mjs";

const root = new URL("../..", import.meta.url).pathname;
const LANGS = new Set(["js", "javascript", "mjs", "ts", "typescript"]);

/** Every fenced JS/TS block of a Markdown file, with the mark above it. */
export function blocks(file) {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    // A fence may be indented (a block inside a list item): its lines lose that indent.
    const fence = /^(\s*)```(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    assert.ok(end > i, `${file}:${i + 1}: a fence that is never closed`);
    if (LANGS.has(fence[2])) {
      let above = i - 1;
      while (above >= 0 && lines[above].trim() === "") above--;
      const mark = /^<!--\s*(example|fragment):\s*(.*?)\s*-->$/.exec((lines[above] ?? "").trim());
      const code = lines.slice(i + 1, end).map((l) => l.slice(fence[1].length)).join("\n") + "\n";
      found.push({ where: `${file}:${i + 1}`, mark, code });
    }
    i = end;
  }
  return found;
}

/** The example's declared names and swaps, from `node; given: a, b; swap: "x" -> y, u -> v`. */
function parse(spec) {
  const parts = Object.fromEntries(spec.split(";").map((p) => p.trim()).filter(Boolean).map((p) => {
    const at = p.indexOf(":");
    return at < 0 ? [p, ""] : [p.slice(0, at).trim(), p.slice(at + 1).trim()];
  }));
  const given = parts.given ? parts.given.split(",").map((g) => g.trim()) : [];
  const swap = parts.swap ? parts.swap.split(",").map((w) => w.split("->").map((x) => x.trim())) : [];
  return { runtime: Object.keys(parts)[0], given, swap };
}

const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const all = docs.flatMap(blocks);

test("every JavaScript and TypeScript block in the README and docs/ is run or marked as a fragment", () => {
  assert.ok(all.length >= 10, `${all.length} blocks found`);
  for (const b of all) {
    assert.ok(b.mark, `${b.where}: no <!-- example: ... --> or <!-- fragment: ... --> mark above the block`);
    if (b.mark[1] === "fragment") assert.ok(b.mark[2].length > 10, `${b.where}: a fragment says why`);
    else assert.equal(parse(b.mark[2]).runtime, "node", `${b.where}: examples run in node`);
  }
});

// What a declared name stands for, and what a declared swap puts in place.
const GIVEN = {
  longText: `"The quick brown fox jumps over the lazy dog. ".repeat(2000)`,
  memoryBlock: `Array.from({ length: 400 }, (_, i) => "- memory line " + i).join("\\n")`,
  token: `"sk-test"`,
  adapter: `(await import("agent-memory/adapters/map")).mapAdapter()`,
  // A sync transport to an in-process relay, as a fetch to a relay route would be.
  relay: `await (async () => { const { SyncRelay } = await import("agent-memory"); const { mapAdapter } = await import("agent-memory/adapters/map"); const r = await SyncRelay.open({ store: mapAdapter(), namespace: "user-42" }); return (request) => r.exchange(request); })()`,
  myQueryVector: `${JSON.stringify(scriptedEmbedding("which pet do I have"))}`,
};

const execNode = promisify(execFile);

/** Runs a block in a folder whose node_modules holds the built package; returns its last stdout line. */
async function run(b, server, epilogue = "") {
  const { given, swap } = parse(b.mark[2]);
  let code = b.code;
  // A swap puts in a quoted literal as written, or a local server by name.
  const servers = { "model server": server.endpoint, "embeddings server": server.embeddingsEndpoint };
  for (const [from, to] of swap) {
    const quoted = /^"[^"]*"$/.test(to);
    assert.ok(quoted || to in servers, `${b.where}: the harness has no server "${to}"`);
    assert.ok(code.includes(from), `${b.where}: the swapped ${from} is not in the block`);
    code = code.replaceAll(from, quoted ? to : servers[to]);
  }
  for (const name of given) assert.ok(name in GIVEN, `${b.where}: the harness does not give "${name}"`);
  // Imports first (an import is hoisted anyway), then the given names, then the rest.
  const lines = code.split("\n");
  const imports = [];
  while (lines.length && /^(import |$)/.test(lines[0])) imports.push(lines.shift());
  const prelude = given.map((name) => `const ${name} = ${GIVEN[name]};`).join("\n");
  const dir = mkdtempSync(join(tmpdir(), "readme-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(join(root, "pkg"), join(dir, "node_modules", "agent-memory"), "dir");
  const file = join(dir, "example.mjs");
  writeFileSync(file, `${imports.join("\n")}\n${prelude}\n${lines.join("\n")}\n${epilogue}`);
  try {
    const { stdout } = await execNode("node", [file], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    return stdout.trim().split("\n").pop();
  } catch (err) {
    assert.fail(`${b.where} does not run as written: ${err.stderr || err.message}`);
  }
}

test("every example of the README and docs/ runs as written", async () => {
  const server = await startLlmServer();
  try {
    for (const b of all.filter((b) => b.mark?.[1] === "example")) await run(b, server);
  } finally {
    server.close();
  }
});

// The README's flow, add -> buildContext({ query }) -> add(reply), keeps
// every message of the turn, the question included.
test("the README's chat turn keeps the question, and what it shows is what happens", async () => {
  const b = all.find((b) => b.code.includes("Which language should we use?"));
  const server = await startLlmServer();
  try {
    const out = JSON.parse(await run(b, server, `
console.log(JSON.stringify({
  history: (await memory.sessionHistory()).map((e) => [e.role, e.content]),
  last: messages.at(-1),
  sent: report.messagesSent,
  current: (await memory.memories()).map((e) => e.content),
}));`));
    assert.deepEqual(out.history, [
      ["user", "I prefer Rust for systems code."],
      ["user", "Which language should we use?"],
      ["assistant", "Rust, as you prefer."],
    ]);
    assert.deepEqual(out.last, { role: "user", content: "Which language should we use?" });
    assert.equal(out.sent, 2);
    assert.ok(out.current.includes("Now prefers Zig") && !out.current.includes("Prefers Rust for systems code"), JSON.stringify(out.current));
  } finally {
    server.close();
  }
});

test("the README names the framework versions the tests install", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const dev = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies;
  for (const name of ["ai", "@ai-sdk/openai", "@langchain/core", "@langchain/openai", "@openai/agents"]) {
    assert.ok(readme.includes(`\`${name}@${dev[name]}\``), `the README says ${name}@${dev[name]}`);
  }
  const engines = JSON.parse(readFileSync(join(root, "js/package.json"), "utf8")).engines;
  assert.equal(engines?.node, ">=20.19");
  assert.ok(readme.includes("Node needs 20.19 or newer"));
});
