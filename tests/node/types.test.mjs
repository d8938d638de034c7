// The package's declarations in a strict TypeScript project with DOM types
// and no @types/node (tests/types): the app compiles, and each misuse in
// misuse.ts is a type error (an unused @ts-expect-error fails the build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const root = fileURLToPath(new URL("../..", import.meta.url));

test("tsc --strict accepts the app and rejects every misuse", () => {
  const tsc = join(root, "node_modules/.bin/tsc");
  try {
    execFileSync(tsc, ["-p", "tests/types/tsconfig.json"], { cwd: root, encoding: "utf8" });
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`);
  }
});

test("the framework adapters' declarations fit the frameworks' own types (ai, @langchain/core, @openai/agents)", () => {
  const tsc = join(root, "node_modules/.bin/tsc");
  try {
    execFileSync(tsc, ["-p", "tests/types/tsconfig.integrations.json"], { cwd: root, encoding: "utf8" });
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`);
  }
});
