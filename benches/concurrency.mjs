// npm run --silent bench:concurrency
//
// Writers on one store at once, and what a fresh instance finds afterwards.
// Two parts (PARTS, default "deno,browser"):
//   deno     separate Deno processes (benches/concurrency-writer.mjs) on one
//            Deno KV file through the shipped adapter, as Deno Deploy isolates
//            share one KV;
//   browser  Chromium pages of one origin plus a dedicated Worker
//            (benches/concurrency-page.html, benches/concurrency-worker.mjs)
//            on one IndexedDB.
// For each number of writers in WRITERS (default "2,4,8"), ROUNDS rounds
// (default 20), each on a new store. In a round every writer, at one moment
// (benches/concurrency-work.mjs): adds 5 messages to the shared session,
// remembers 3 facts of its own, remembers one fact all share ("Has a golden
// retriever called Biscuit") and sets one shared state to its own value
// ("Has N kids"); then, at a second moment, all end the shared session, each
// with a scripted `llm` hook that records the messages it was asked to judge.
// Then a fresh instance reads the store. Counted:
//   refused        remember() calls rejected (never acknowledged)
//   lost           acknowledged remember()s whose fact is not current, plus
//                  acknowledged add()s missing from sessionHistory()
//   duplicated     rounds x facts where one fact is current more than once
//   forked_states  rounds where the shared state has more than one current version
//   judged_twice   judgements past the first of one message, over all
//                  writers' judge prompts
// The goal is 0 for each. Last line: one JSON object.
import { spawn, execFileSync } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { machine, median } from "./stats.mjs";
import { FACTS, FACTS_PER_WRITER, SHARED_FACT, factsOf, isState } from "./concurrency-work.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const WRITERS = (process.env.WRITERS ?? "2,4,8").split(",").map(Number);
const PARTS = (process.env.PARTS ?? "deno,browser").split(",").map((p) => p.trim());
const LEAD_MS = Number(process.env.LEAD_MS ?? 200); // how far ahead each "at once" moment is set
const maxWriters = FACTS.length / FACTS_PER_WRITER;
for (const w of WRITERS) {
  if (!Number.isInteger(w) || w < 2 || w > maxWriters) throw new Error(`WRITERS: each from 2 to ${maxWriters}, got ${w}`);
}
for (const p of PARTS) if (!["deno", "browser"].includes(p)) throw new Error(`PARTS: deno and/or browser, got ${p}`);
const WMAX = Math.max(...WRITERS);

/** What one round left behind, from the writers' answers and the fresh instance's count. */
function assess(writers, writes, ends, count) {
  const current = count.current;
  const history = new Set(count.history);
  const occurrences = (text) => current.filter((c) => c === text).length;
  const r = {
    refused: 0, lostFacts: 0, lostMessages: 0, duplicated: 0, forked: 0, judgedTwice: 0,
    unjudged: 0, owed: count.owed, damaged: count.damaged, errors: [], stateVersions: 0, ackedAdds: 0, ackedRemembers: 0,
  };
  for (let w = 0; w < writers; w++) {
    const out = writes[w];
    if (out.error) { r.errors.push(`writer ${w} write: ${out.error}`); continue; }
    r.refused += out.refused.length;
    r.ackedAdds += out.added.length;
    r.ackedRemembers += out.acknowledged.length;
    r.errors.push(...out.addErrors.map((e) => `writer ${w} add: ${e}`));
    for (const e of out.refused) r.errors.push(`writer ${w} remember: ${e.error}`);
    r.lostMessages += out.added.filter((t) => !history.has(t)).length;
    r.lostFacts += out.acknowledged.filter((f) => factsOf(w).includes(f) && !current.includes(f)).length;
  }
  const ok = writes.filter((o) => !o.error);
  if (ok.some((o) => o.acknowledged.includes(SHARED_FACT)) && !current.includes(SHARED_FACT)) r.lostFacts++;
  const states = current.filter(isState);
  r.stateVersions = states.length;
  const stateAcked = ok.some((o) => o.acknowledged.some(isState));
  if (stateAcked && states.length === 0) r.lostFacts++;
  for (const fact of [...FACTS.slice(0, writers * FACTS_PER_WRITER), SHARED_FACT]) r.duplicated += occurrences(fact) > 1 ? 1 : 0;
  r.forked = states.length > 1 ? 1 : 0;
  const judged = new Map();
  for (const [w, end] of ends.entries()) {
    if (end.error) r.errors.push(`writer ${w} endSession: ${end.error}`);
    for (const t of end.judged ?? []) judged.set(t, (judged.get(t) ?? 0) + 1);
  }
  for (const n of judged.values()) r.judgedTwice += n - 1;
  r.unjudged = count.history.filter((t) => !judged.has(t)).length;
  r.messagesStored = count.history.length;
  r.messagesDuplicated = count.history.length - history.size;
  r.writeMs = Math.max(...ok.map((o) => o.ms));
  r.endMs = Math.max(...ends.map((e) => e.ms ?? 0));
  r.outcomes = ok.flatMap((o) => o.outcomes);
  return r;
}

/** Totals of a setting's rounds. */
function total(part, writers, rounds) {
  const sum = (k) => rounds.reduce((n, r) => n + r[k], 0);
  const outcomes = {};
  for (const o of rounds.flatMap((r) => r.outcomes)) outcomes[o] = (outcomes[o] ?? 0) + 1;
  return {
    part, writers, rounds: rounds.length,
    refused: sum("refused"), lost: sum("lostFacts") + sum("lostMessages"), lostFacts: sum("lostFacts"), lostMessages: sum("lostMessages"),
    duplicated: sum("duplicated"), forked: sum("forked"), judgedTwice: sum("judgedTwice"), unjudged: sum("unjudged"),
    owed: sum("owed"), damaged: sum("damaged"), messagesDuplicated: sum("messagesDuplicated"),
    ackedAdds: sum("ackedAdds"), ackedRemembers: sum("ackedRemembers"),
    errors: rounds.flatMap((r) => r.errors), outcomes,
    writeMs: median(rounds.map((r) => r.writeMs)), endMs: median(rounds.map((r) => r.endMs)),
  };
}

/** One Deno writer process: `send(command)` resolves to its answer. */
function denoWriter() {
  const deno = join(root, "node_modules/.bin/deno");
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(tmpdir(), "agent-memory-deno") };
  const child = spawn(deno, ["run", "--quiet", "--allow-read", "--allow-write", "--unstable-kv", "benches/concurrency-writer.mjs"],
    { cwd: root, env, stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  let ready;
  const isReady = new Promise((ok) => { ready = ok; });
  let next = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    let msg;
    try { msg = JSON.parse(line); } catch { return; }
    if (msg.ready) return ready();
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
  });
  child.on("exit", (code) => {
    for (const ok of waiting.values()) ok({ error: `deno exited with ${code}` });
    waiting.clear();
  });
  return {
    ready: isReady,
    send: (command) => new Promise((ok) => {
      const id = ++next;
      waiting.set(id, ok);
      child.stdin.write(JSON.stringify({ ...command, id }) + "\n");
    }),
    quit: () => new Promise((ok) => { child.once("exit", ok); child.stdin.write('{"cmd":"quit"}\n'); }),
  };
}

async function denoPart() {
  const procs = Array.from({ length: WMAX + 1 }, denoWriter); // the last one only counts
  await Promise.all(procs.map((p) => p.ready));
  const counter = procs[WMAX];
  const dir = mkdtempSync(join(tmpdir(), "bench-concurrency-"));
  const settings = [];
  try {
    for (const writers of WRITERS) {
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const where = join(dir, `w${writers}-r${r}.db`);
        const ws = procs.slice(0, writers);
        const created = await counter.send({ cmd: "count", where }); // creates the KV file
        if (created.error) throw new Error(`deno create: ${created.error}`);
        const opened = await Promise.all(ws.map((p, w) => p.send({ cmd: "open", where, writer: w, round: r })));
        const bad = opened.find((o) => o.error);
        if (bad) throw new Error(`deno open: ${bad.error}`);
        let at = Date.now() + LEAD_MS;
        const writes = await Promise.all(ws.map((p) => p.send({ cmd: "write", at })));
        at = Date.now() + LEAD_MS;
        const ends = await Promise.all(ws.map((p) => p.send({ cmd: "end", at })));
        await Promise.all(ws.map((p) => p.send({ cmd: "close" })));
        const count = await counter.send({ cmd: "count", where });
        if (count.error) throw new Error(`deno count: ${count.error}`);
        rounds.push(assess(writers, writes, ends, count));
      }
      const t = total("deno", writers, rounds);
      settings.push(t);
      process.stderr.write(`deno, ${writers} writers: ${ROUNDS} rounds done\n`);
    }
  } finally {
    await Promise.all(procs.map((p) => p.quit()));
    rmSync(dir, { recursive: true, force: true });
  }
  return settings;
}

async function browserPart() {
  const { launchChromium } = await import("../scripts/chromium.mjs");
  const { startServer } = await import("../scripts/static-server.mjs");
  const { server, url } = await startServer(root, 0);
  const browser = await launchChromium();
  const pageErrors = [];
  const settings = [];
  try {
    const context = await browser.newContext();
    // WMAX - 1 writer pages; the last page hosts the dedicated Worker (the
    // last writer) and, between rounds, counts with a fresh instance.
    const pages = await Promise.all(Array.from({ length: WMAX }, () => context.newPage()));
    await Promise.all(pages.map(async (p, i) => {
      p.on("pageerror", (e) => pageErrors.push(`page ${i}: ${e.message}`));
      await p.goto(`${url}benches/concurrency-page.html`);
      await p.waitForFunction(() => window.__ready, null, { polling: 20, timeout: 60_000 });
    }));
    const host = pages[WMAX - 1];
    const onPage = (p) => (command) => p.evaluate((c) => window.__cmd(c), command);
    const inWorker = (command) => host.evaluate((c) => window.__worker(c), command);
    for (const writers of WRITERS) {
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const namespace = `writers-${writers}-${r}-${Date.now()}`;
        const ws = [...pages.slice(0, writers - 1).map(onPage), inWorker];
        const opened = await Promise.all(ws.map((send, w) => send({ cmd: "open", namespace, writer: w, round: r })));
        const bad = opened.find((o) => o.error);
        if (bad) throw new Error(`browser open: ${bad.error}`);
        let at = Date.now() + LEAD_MS;
        const writes = await Promise.all(ws.map((send) => send({ cmd: "write", at })));
        at = Date.now() + LEAD_MS;
        const ends = await Promise.all(ws.map((send) => send({ cmd: "end", at })));
        await Promise.all(ws.map((send) => send({ cmd: "close" })));
        const count = await onPage(host)({ cmd: "count", namespace });
        if (count.error) throw new Error(`browser count: ${count.error}`);
        rounds.push(assess(writers, writes, ends, count));
      }
      const t = total("browser", writers, rounds);
      settings.push(t);
      process.stderr.write(`browser, ${writers} writers (${writers - 1} pages + 1 worker): ${ROUNDS} rounds done\n`);
    }
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
  if (pageErrors.length) console.log("page errors:", JSON.stringify(pageErrors.slice(0, 10)));
  return settings;
}

const started = performance.now();
const settings = [];
if (PARTS.includes("deno")) settings.push(...(await denoPart()));
if (PARTS.includes("browser")) settings.push(...(await browserPart()));

const versions = [];
if (PARTS.includes("deno")) {
  versions.push(execFileSync(join(root, "node_modules/.bin/deno"), ["--version"], { encoding: "utf8" }).split("\n")[0].trim());
}
if (PARTS.includes("browser")) {
  const { CHROMIUM_PATH } = await import("../scripts/chromium.mjs");
  versions.push(execFileSync(CHROMIUM_PATH, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
}
console.log(`bench:concurrency on ${machine()}, ${versions.join(", ")}; ${ROUNDS} rounds per setting; ` +
  `${((performance.now() - started) / 1000).toFixed(0)} s`);
console.table(settings.map((s) => ({
  part: s.part, writers: s.writers, rounds: s.rounds, "acked adds": s.ackedAdds, "acked remembers": s.ackedRemembers, refused: s.refused,
  "lost facts": s.lostFacts, "lost messages": s.lostMessages, duplicated: s.duplicated, "forked states": s.forked,
  "judged twice": s.judgedTwice, unjudged: s.unjudged, "messages twice": s.messagesDuplicated, owed: s.owed, damaged: s.damaged,
  "write ms (median)": s.writeMs, "end ms (median)": s.endMs,
})));
for (const s of settings) {
  const outcomes = Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(", ");
  console.log(`${s.part}, ${s.writers} writers: remember outcomes ${outcomes}`);
  const kinds = {};
  for (const e of s.errors) {
    const k = e.replace(/^writer \d+ /, "").slice(0, 120);
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
  for (const [k, n] of Object.entries(kinds)) console.log(`  ${n} x ${k}`);
}
const sum = (k) => settings.reduce((n, s) => n + s[k], 0);
const bySetting = Object.fromEntries(settings.map((s) => [`${s.part}_${s.writers}`, {
  refused: s.refused, lost: s.lost, duplicated: s.duplicated, forked_states: s.forked, judged_twice: s.judgedTwice,
}]));
console.log(JSON.stringify({
  rounds: ROUNDS, writers_max: WMAX, refused: sum("refused"), lost: sum("lost"), duplicated: sum("duplicated"),
  forked_states: sum("forked"), judged_twice: sum("judgedTwice"),
  rounds_total: settings.reduce((n, s) => n + s.rounds, 0), lost_facts: sum("lostFacts"), lost_messages: sum("lostMessages"),
  unjudged: sum("unjudged"), owed: sum("owed"), damaged: sum("damaged"), by_setting: bySetting,
}));
