// Many Node instances on one storage adapter (the workers or sub-agents of
// one process), for tests/node/tabs.test.mjs and benches/reliability.mjs: the
// same round as scripts/many-tabs.mjs, with the in-process lock in place of
// Web Locks. Each instance writes, all at once, 25 messages into a shared
// session and 25 into its own, 10 memories every instance remembers alike and
// 10 of its own; then all end the shared session at once.
import { Memory } from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";
import { seededRandom } from "./random.mjs";

const SYLLABLES = "ka lo mi ne ru sa ti vo be da fe gu ho ji ku la mo pi re so".split(" ");

/** `rounds` rounds of `instances` instances; resolves to { rounds, messages, memories, lost, duplicates, judgedTwice, owed, failures }. */
export async function manyInstances({ instances = 4, rounds = 1, seed = 1 }) {
  const rand = seededRandom(seed);
  const word = () => Array.from({ length: 2 + Math.floor(rand() * 2) }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join("");
  const text = () => Array.from({ length: 8 + Math.floor(rand() * 6) }, word).join(" ");
  const totals = { rounds: 0, instances, messages: 0, memories: 0, lost: 0, duplicates: 0, judgedTwice: 0, owed: 0, failures: [] };
  for (let r = 0; r < rounds; r++) {
    const store = mapAdapter();
    const open = (sessionId) => Memory.open({ namespace: "team", sessionId, store });
    const alike = Array.from({ length: 10 }, text);
    const plans = Array.from({ length: instances }, (_, i) => ({
      shared: Array.from({ length: 25 }, () => `I like ${text()}`),
      own: Array.from({ length: 25 }, () => `I like ${text()}`),
      remember: Array.from({ length: 10 }, text),
      i,
    }));
    await Promise.all(plans.map(async (p) => {
      const [shared, own] = await Promise.all([open("shared"), open(`own-${p.i}`)]);
      await Promise.all([
        ...p.shared.map((content) => shared.add({ content })),
        ...p.own.map((content) => own.add({ content })),
        ...alike.map((content) => shared.remember({ content })),
        ...p.remember.map((content) => own.remember({ content })),
      ]);
    }));
    const enders = await Promise.all(plans.map(() => open("shared")));
    const reports = await Promise.all(enders.map((m) => m.endSession()));
    const reader = await open("shared");
    await reader.idle();
    const shared = (await reader.sessionHistory()).map((e) => e.content);
    const owns = await Promise.all(plans.map(async (p) => (await (await open(`own-${p.i}`)).sessionHistory()).map((e) => e.content)));
    const memories = (await reader.memories()).map((e) => e.content);
    const all = [...shared, ...owns.flat()];
    const expected = [...plans.flatMap((p) => [...p.shared, ...p.own])];
    const expectedMemories = [...alike, ...plans.flatMap((p) => p.remember)];
    const judged = reports.reduce((n, rep) => n + rep.newMessages, 0);
    const round = {
      lost: expected.filter((t) => !all.includes(t)).length + expectedMemories.filter((t) => !memories.includes(t)).length,
      duplicates: all.length - new Set(all).size + memories.length - new Set(memories).size,
      judgedTwice: Math.max(0, judged - 25 * instances),
      owed: (await reader.pendingWork()).length,
    };
    totals.rounds++;
    totals.messages += expected.length;
    totals.memories += expectedMemories.length;
    for (const k of ["lost", "duplicates", "judgedTwice", "owed"]) totals[k] += round[k];
    if (Object.values(round).some((v) => v)) totals.failures.push({ round: r, ...round, judged });
  }
  return totals;
}
