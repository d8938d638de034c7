// The README's chat-turn example, run as pasted (its import pointed at the
// built package): it must run without a name left undefined, and the flow
// it shows must keep every message of the turn, the question included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";

const root = new URL("../..", import.meta.url).pathname;

/** The first ```js block after `heading` in the README. */
function example(heading) {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `the README has "${heading}"`);
  const open = readme.indexOf("```js\n", at) + 6;
  return readme.slice(open, readme.indexOf("```\n", open));
}

test("the README's chat turn runs as pasted and keeps the question", () => {
  const code = example("A chat turn with working and long-term memory");
  const pkg = pathToFileURL(join(root, "pkg/node.js")).href;
  const script = code.replace(/from "agent-memory"/, `from ${JSON.stringify(pkg)}`) + `
console.log(JSON.stringify({
  history: (await memory.sessionHistory()).map((e) => [e.role, e.content]),
  last: messages.at(-1),
  sent: report.messagesSent,
  current: (await memory.memories()).map((e) => e.content),
}));
`;
  const file = join(mkdtempSync(join(tmpdir(), "readme-")), "turn.mjs");
  writeFileSync(file, script);
  const out = JSON.parse(execFileSync("node", [file], { encoding: "utf8" }).trim().split("\n").pop());
  assert.deepEqual(out.history, [
    ["user", "I prefer Rust for systems code."],
    ["user", "Which language should we use?"],
    ["assistant", "Rust, as you prefer."],
  ]);
  assert.deepEqual(out.last, { role: "user", content: "Which language should we use?" });
  assert.equal(out.sent, 2);
  assert.ok(out.current.includes("Now prefers Zig") && !out.current.includes("Prefers Rust for systems code"), JSON.stringify(out.current));
});
