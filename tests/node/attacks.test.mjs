// The adversarial pass (scripts/attacks.mjs) once, with 1,000 repeats of
// each refusal: every case typed or recovered, nothing lost, no crash. The
// replay of a forgotten record is the one known open case (the op-log
// issue): it is counted, not hidden.
import { test } from "node:test";
import assert from "node:assert/strict";
import { attackPass } from "../../scripts/attacks.mjs";

test("every attack of the adversarial pass is typed or recovered, and nothing acknowledged is lost", { timeout: 300_000 }, async () => {
  const { rows, figures, crashes } = await attackPass({ repeats: 1_000 });
  assert.deepEqual(rows.flatMap((r) => r.failures.map((f) => `${r.class}: ${f}`)), []);
  assert.deepEqual(crashes, []);
  assert.equal(figures.attack_untyped + figures.attack_lost + figures.attack_wrong + figures.attack_crashes, 0, JSON.stringify(figures));
  assert.ok(figures.refusal_healthy);
  assert.ok(figures.attack_replayed_open <= 1, "a replay that newly succeeds");
});
