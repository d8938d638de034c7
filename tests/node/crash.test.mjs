// Crash consistency in real Chromium (scripts/crash-trial.mjs): a page
// writing messages, memories and session ends is closed or its browser
// killed at a random moment; the reopened namespace holds every acknowledged
// write, no damaged record, no duplicate, and no work left owed. A handful of
// trials here; `npm run bench:reliability` runs hundreds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { crashTrials } from "../../scripts/crash-trial.mjs";

test("pages closed and browsers killed mid-write lose no acknowledged write", { timeout: 300_000 }, async () => {
  const r = await crashTrials({ trials: 6, seed: 7 });
  assert.deepEqual(r.failures, []);
  assert.equal(r.trials, 6);
  assert.ok(r.byKill.closePage > 0 && r.byKill.killBrowser > 0, JSON.stringify(r.byKill));
  assert.ok(r.acknowledged.add > 0 && r.acknowledged.remember > 0, JSON.stringify(r.acknowledged));
  assert.equal(r.lost + r.duplicates + r.damaged + r.owed, 0);
});
