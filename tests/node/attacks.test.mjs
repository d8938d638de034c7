// The adversarial pass (scripts/attacks.mjs) once, with 1,000 repeats of
// each refusal: every case typed or recovered, nothing lost, no crash, and a
// forgotten memory's records written back do not bring it back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { attackPass } from "../../scripts/attacks.mjs";

test("every attack of the adversarial pass is typed or recovered, and nothing acknowledged is lost", { timeout: 300_000 }, async () => {
  const { rows, figures, crashes } = await attackPass({ repeats: 1_000 });
  assert.deepEqual(rows.flatMap((r) => r.failures.map((f) => `${r.class}: ${f}`)), []);
  assert.deepEqual(crashes, []);
  assert.equal(figures.attack_untyped + figures.attack_lost + figures.attack_wrong + figures.attack_crashes, 0, JSON.stringify(figures));
  assert.ok(figures.refusal_healthy);
  assert.equal(figures.attack_replayed_open, 0, "a replayed record brought a forgotten memory back");
});
