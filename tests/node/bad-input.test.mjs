// Every bad input at the JS boundary (scripts/bad-inputs.mjs): a typed
// error or a documented acceptance, and a working instance afterwards. The
// test writes the matrix into docs/reliability.md, between its markers, so
// the table is what ran.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { badInputMatrix, markdown, MARK_END, MARK_START } from "../../scripts/bad-inputs.mjs";

test("every bad input at the JS boundary is a typed error or a documented acceptance", { timeout: 600_000 }, async () => {
  const { rows, problems, params } = await badInputMatrix();
  assert.deepEqual(problems, []);
  assert.equal(rows.length, params);

  const doc = new URL("../../docs/reliability.md", import.meta.url);
  const text = readFileSync(doc, "utf8");
  const [start, end] = [text.indexOf(MARK_START), text.indexOf(MARK_END)];
  assert.ok(start >= 0 && end > start, "docs/reliability.md has the matrix markers");
  const next = `${text.slice(0, start + MARK_START.length)}\n${markdown(rows)}\n${text.slice(end)}`;
  if (next !== text) writeFileSync(doc, next);
});
