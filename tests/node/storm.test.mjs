// LLM fault storms against the local OpenAI-compatible server
// (scripts/fault-storm.mjs): half the requests fail in one of nine ways
// during compression and session end; after the faults stop, a restarted
// instance has every message, nothing owed or pending, and the preference
// remembered once. `npm run bench:reliability` runs more rounds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FAULTS, faultStorm } from "../../scripts/fault-storm.mjs";

test("fault storms during compression and session end lose nothing and recover", { timeout: 120_000 }, async () => {
  const r = await faultStorm({ rounds: 10, faultRate: 0.5, seed: 5 });
  assert.deepEqual(r.failures, []);
  assert.equal(r.recovered, 10);
  assert.equal(r.lost + r.duplicates, 0);
  const injected = FAULTS.filter((f) => r.injected[f] > 0);
  assert.ok(injected.length >= 6, `faults injected: ${JSON.stringify(r.injected)}`);
});
