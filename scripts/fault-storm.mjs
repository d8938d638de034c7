// LLM fault storms, for tests/node/storm.test.mjs and benches/reliability.mjs.
// One round: a Memory on a storage adapter reaches the local OpenAI-compatible
// server (scripts/llm-server.mjs) while a share of its requests fail at
// random: 429 with Retry-After, 500, a hang past the timeout, a dropped
// connection, a body cut mid-JSON, an HTML page, invalid JSON, empty content,
// wrong types. 30 turns with background compression, then session end. Then
// the faults stop and a new instance opens the same store (a restarted
// worker): every message must be there, owed work completed, nothing left
// pending, and the stated preference remembered once (or, where the judge's
// answer was the wrong-typed one, its one usable item instead).
import { Memory } from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";
import { startLlmServer } from "./llm-server.mjs";
import { seededRandom } from "./random.mjs";

export const FAULTS = ["429", "500", "hang", "reset", "truncated", "garbage", "invalid-json", "empty", "wrong-types"];

const PREFERENCE = "I prefer Rust for writing code.";
const FACT = "User prefers Rust for writing code";

/** `rounds` storms; resolves to { rounds, requests, injected: {fault: n}, recovered, judgedFromWrongTypes, lost, duplicates, failures }. */
export async function faultStorm({ rounds = 1, faultRate = 0.5, seed = 1 }) {
  const rand = seededRandom(seed);
  const server = await startLlmServer();
  const totals = { rounds: 0, requests: 0, injected: Object.fromEntries(FAULTS.map((f) => [f, 0])), recovered: 0, judgedFromWrongTypes: 0, lost: 0, duplicates: 0, failures: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      const store = mapAdapter();
      const base = { namespace: `storm-${seed}-${r}`, sessionId: "chat", store, maxTokens: 600, retainRecentRounds: 3 };
      const llm = { endpoint: server.endpoint, model: "scripted", timeoutMs: 250, maxRetries: 2, backoffMs: 5 };
      const planned = Array.from({ length: 400 }, () => (rand() < faultRate ? FAULTS[Math.floor(rand() * FAULTS.length)] : undefined));
      server.faults.splice(0, server.faults.length, ...planned);
      const before = server.requests.length;
      const m = await Memory.open({ ...base, llm });
      const said = [];
      for (let i = 0; i < 30; i++) {
        const user = i === 7 ? PREFERENCE : `Can you explain topic ${i} of round ${r} briefly?`;
        said.push(user, `Topic ${i} is about item ${i}.`);
        await m.add({ role: "user", content: user });
        await m.add({ role: "assistant", content: said.at(-1) });
      }
      await m.idle();
      await m.endSession().catch(() => {});
      await m.idle();
      const used = planned.length - server.faults.length;
      for (const f of planned.slice(0, used)) if (f) totals.injected[f]++;

      // Recovery: the faults stop; a new instance (a restarted worker) resumes owed work.
      server.faults.length = 0;
      const again = await Memory.open({ ...base, llm });
      await again.idle();
      if ((await again.pendingWork()).length) await again.endSession();
      if (again.pendingCompression().length) await again.compress();
      const history = (await again.sessionHistory()).map((e) => e.content);
      const stored = (await again.memories()).map((e) => e.content);
      const facts = stored.filter((c) => c === FACT);
      const round = {
        lost: said.filter((t) => !history.includes(t)).length,
        duplicates: history.length - new Set(history).size + Math.max(0, facts.length - 1),
        owed: (await again.pendingWork()).length,
        pending: again.pendingCompression().length,
        // A wrong-typed answer with one usable item ("wrong-types") is an
        // answer: the judge keeps its usable item, and the message is judged.
        remembered: facts.length === 1 || stored.includes("User likes wrong types"),
      };
      if (facts.length === 0 && stored.includes("User likes wrong types")) totals.judgedFromWrongTypes++;
      totals.rounds++;
      totals.requests += server.requests.length - before;
      totals.lost += round.lost;
      totals.duplicates += round.duplicates;
      if (!round.lost && !round.duplicates && !round.owed && !round.pending && round.remembered) totals.recovered++;
      else totals.failures.push({ round: r, ...round, stored });
    }
  } finally {
    await server.close();
  }
  return totals;
}
