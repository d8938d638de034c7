// Four tabs of one origin on one namespace in real Chromium
// (scripts/many-tabs.mjs): writing shared and separate sessions and alike
// and different memories at once, then ending the shared session at once.
// `npm run bench:reliability` runs more rounds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { manyTabs } from "../../scripts/many-tabs.mjs";

test("four tabs at once: nothing lost, nothing twice, each message judged by one session end", { timeout: 300_000 }, async () => {
  const r = await manyTabs({ tabs: 4, rounds: 2, seed: 3 });
  assert.deepEqual(r.failures, []);
  assert.equal(r.rounds, 2);
  assert.equal(r.lost + r.duplicates + r.judgedTwice + r.owed + r.damaged, 0);
});

test("four Node instances on one adapter at once: nothing lost, nothing twice, each message judged once", async () => {
  const { manyInstances } = await import("../../scripts/many-instances.mjs");
  const r = await manyInstances({ instances: 4, rounds: 3, seed: 3 });
  assert.deepEqual(r.failures, []);
  assert.equal(r.rounds, 3);
  assert.equal(r.lost + r.duplicates + r.judgedTwice + r.owed, 0);
});
