// The work of one writer in `npm run bench:concurrency` (benches/concurrency.mjs),
// shared by the Deno writer processes (benches/concurrency-writer.mjs), the
// Chromium pages (benches/concurrency-page.html) and the dedicated worker
// (benches/concurrency-worker.mjs). The caller passes the package's `Memory`
// and a `storeFor(where)` that resolves to { store, close }.
//
// A writer is driven by commands (plain objects, answered with plain objects):
//   { cmd: "open", where, namespace, writer, round }
//                                           open the shared session with a scripted `llm` hook
//   { cmd: "write", at }                    at time `at` (ms since the epoch), all at once:
//                                           MESSAGES messages, FACTS_PER_WRITER distinct facts,
//                                           the shared fact and this writer's value of the shared state
//   { cmd: "end", at }                      at time `at`, end the shared session
//   { cmd: "close" }                        settle background work, free, close the store
//   { cmd: "count", where, namespace }      a fresh instance reads what the store holds

export const NAMESPACE = "shared";
export const SESSION = "s";
export const MESSAGES = 5;
export const FACTS_PER_WRITER = 3;
/** Distinct facts, three per writer for up to 8 writers, that dedup never relates. */
export const FACTS = [
  "Plays the cello in a community orchestra", "Grew up near the harbour in Valparaiso", "Is allergic to shellfish",
  "Drives an old green Volvo estate", "Keeps bees on the allotment", "Reads Icelandic crime novels at night",
  "Learned to sail at fourteen", "Brews kombucha in the kitchen", "Volunteers at the animal shelter on Saturdays",
  "Collects vintage fountain pens", "Speaks fluent Portuguese", "Climbs at the bouldering gym twice a week",
  "Repairs mechanical watches as a hobby", "Studied marine biology at university", "Grows chillies on the balcony",
  "Runs a chess club for teenagers", "Paints watercolour landscapes", "Owns a vinyl collection of Brazilian jazz",
  "Works night shifts as a radiographer", "Bakes sourdough every Sunday", "Plays goalkeeper in a five-a-side team",
  "Translates Japanese manga for fun", "Restores antique bicycles", "Knits sweaters for friends",
];
export const SHARED_FACT = "Has a golden retriever called Biscuit";
/** The shared state: each writer its own value. */
export const stateFact = (writer) => `Has ${2 + writer} kids`;
export const isState = (content) => /^Has \d+ kids$/.test(content);
export const factsOf = (writer) => FACTS.slice(writer * FACTS_PER_WRITER, (writer + 1) * FACTS_PER_WRITER);
export const messageText = (round, writer, i) => `writer ${writer} round ${round} message ${i}`;

const until = (at) => new Promise((ok) => setTimeout(ok, Math.max(0, at - Date.now())));
const why = (e) => `${e?.code ?? e?.name ?? "Error"}: ${e?.message ?? e}`;

/**
 * A scripted model: answers every judge request with no memories (so session
 * end adds nothing and the counts stay about the writes above), and records the
 * text of every message it was asked to judge (the [[NEW]] lines).
 */
export function judgeRecorder() {
  const judged = [];
  const llm = async ({ messages, json }) => {
    const prompt = messages.at(-1).content;
    for (const line of prompt.split("\n")) {
      const m = /^\[\[NEW\]\] (?:#\d+ )?\[[^\]]+\]: (.*)$/.exec(line);
      if (m) judged.push(m[1]);
    }
    return json ? '{"memories": []}' : "Summary: the user counted messages.";
  };
  return { judged, llm };
}

/** A command handler for one writer (one process, page or worker). */
export function writerAgent(Memory, storeFor) {
  let state = null;
  const open = async ({ where, namespace = NAMESPACE, writer, round }) => {
    const { store, close } = await storeFor(where);
    const recorder = judgeRecorder();
    const memory = await Memory.open({
      namespace, sessionId: SESSION, store,
      llm: { complete: recorder.llm, maxRetries: 0, timeoutMs: 60_000 },
    });
    state = { memory, close, writer, round, recorder };
    return { opened: true };
  };
  const write = async ({ at }) => {
    const { memory, writer, round } = state;
    const texts = Array.from({ length: MESSAGES }, (_, i) => messageText(round, writer, i));
    const facts = factsOf(writer);
    const longTerm = [...facts, SHARED_FACT, stateFact(writer)];
    await until(at);
    const t0 = Date.now();
    const settled = await Promise.allSettled([
      ...texts.map((content) => memory.add({ role: "user", content })),
      ...longTerm.map((content) => memory.remember({ content })),
    ]);
    const ms = Date.now() - t0;
    const adds = settled.slice(0, texts.length);
    const remembers = settled.slice(texts.length);
    return {
      ms,
      added: texts.filter((_, i) => adds[i].status === "fulfilled"),
      addErrors: adds.filter((s) => s.status === "rejected").map((s) => why(s.reason)),
      acknowledged: longTerm.filter((_, i) => remembers[i].status === "fulfilled"),
      outcomes: remembers.map((s) => (s.status === "fulfilled" ? s.value.outcome : "refused")),
      refused: remembers.flatMap((s, i) => (s.status === "rejected" ? [{ content: longTerm[i], error: why(s.reason) }] : [])),
    };
  };
  const end = async ({ at }) => {
    await until(at);
    const t0 = Date.now();
    let report = null, error = null;
    try {
      report = await state.memory.endSession();
    } catch (e) {
      error = why(e);
    }
    return { ms: Date.now() - t0, report, error, judged: state.recorder.judged };
  };
  const close = async () => {
    const { memory, close } = state;
    state = null;
    try { await memory.idle(); } catch { /* counted by the fresh instance */ }
    memory.free();
    await close();
    return { closed: true };
  };
  const count = async ({ where, namespace = NAMESPACE }) => {
    const { store, close } = await storeFor(where);
    const memory = await Memory.open({ namespace, sessionId: SESSION, store });
    await memory.idle();
    const current = (await memory.memories()).map((e) => e.content);
    const history = (await memory.sessionHistory()).map((e) => e.content);
    const owed = (await memory.pendingWork()).length;
    const damaged = ((await memory.stats()).damaged ?? []).length;
    memory.free();
    await close();
    return { current, history, owed, damaged };
  };
  const commands = { open, write, end, close, count };
  return async (command) => {
    try {
      return await commands[command.cmd](command);
    } catch (e) {
      return { error: why(e), stack: String(e?.stack ?? "") };
    }
  };
}
