// Two dated events are two memories; a new value of a single-valued state
// replaces the old one; both without a model. Before, the second hike
// "superseded" the first (a changed number), and "Lives in Porto" was kept
// beside "Lives in Lisbon": two current homes.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";

test("two dated events are both kept and both found; a new home supersedes the old one", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "e", sessionId: "s" });
  for (const content of ["Went hiking with Sam on 3 May 2023", "Went hiking with Sam on 10 May 2023",
    "Attended an LGBTQ support group on 7 May 2023", "Attended an LGBTQ support group on 20 July 2023"]) {
    assert.equal((await m.remember({ content })).outcome, "stored", content);
  }
  assert.equal((await m.search("When did I go hiking with Sam?")).filter((h) => /hiking/.test(h.text)).length, 2);
  assert.equal((await m.search("support group")).filter((h) => /support group/.test(h.text)).length, 2);
  await m.remember({ content: "Lives in Lisbon" });
  const moved = await m.remember({ content: "Lives in Porto" });
  assert.equal(moved.outcome, "superseded");
  await m.remember({ content: "Works as a nurse at St. Mary's" });
  assert.equal((await m.remember({ content: "Works as a doctor at St. Mary's" })).outcome, "superseded");
  const current = (await m.memories()).map((e) => e.content);
  assert.ok(current.includes("Lives in Porto") && !current.includes("Lives in Lisbon"), `${current}`);
  assert.ok(!current.some((c) => c.includes("nurse")), `${current}`);
  assert.equal((await m.history(moved.entry.id)).length, 2, "the old home stays in history");
  m.free();
});

test("memories and search answer as of a date; each memory says whether it is a state or an event", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "asof", sessionId: "s" });
  const may = Date.UTC(2023, 4, 8);
  await m.remember({ content: "Lives in Lisbon", timestamp: may });
  const hike = (await m.remember({ content: "Went hiking with Sam on 3 May 2023", timestamp: may })).entry;
  assert.equal(hike.temporal, "event");
  assert.equal(hike.validFrom, Date.UTC(2023, 4, 3));
  const moved = (await m.remember({ content: "Lives in Porto" })).entry;
  assert.equal(moved.temporal, "state");
  const june = Date.UTC(2023, 5, 1);
  assert.deepEqual((await m.memories({ asOf: june })).map((e) => e.content).sort(), ["Lives in Lisbon", "Went hiking with Sam on 3 May 2023"]);
  assert.deepEqual((await m.memories()).map((e) => e.content).sort(), ["Lives in Porto", "Went hiking with Sam on 3 May 2023"]);
  assert.deepEqual((await m.search("lives in", { asOf: june })).map((h) => h.text), ["Lives in Lisbon"]);
  assert.deepEqual((await m.search("lives in")).map((h) => h.text), ["Lives in Porto"]);
  for (const bad of [{ asOf: -1 }, { asOf: "june" }, { when: 1 }, "x"]) {
    await assert.rejects(m.memories(bad), (e) => e.code === "INVALID_INPUT", JSON.stringify(bad));
  }
  await assert.rejects(m.search("x", { asOf: 2 ** 60 }), (e) => e.code === "INVALID_INPUT");
  m.free();
});
