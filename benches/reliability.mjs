// npm run --silent bench:reliability
//
// Crash consistency in real Chromium (scripts/crash-trial.mjs), TRIALS
// trials (default 200): a page writes messages, single and batched memories
// and session ends to IndexedDB and reports each write once acknowledged; at
// a random moment (50-1,550 ms) the page is closed or the browser process
// SIGKILLed; a new browser on the same profile reopens the namespace. Counted:
// acknowledged writes, lost ones, duplicates, damaged records, work left
// owed. Trials run in SETS (default 4) with seeds 1..SETS, for a spread.
// Then many tabs (scripts/many-tabs.mjs): ROUNDS rounds (default 25) of TABS
// (default 4) pages writing shared and separate sessions and alike and
// different memories at once, then ending the shared session at once.
// Then the same rounds with N Node instances on one storage adapter
// (scripts/many-instances.mjs, INSTANCE_ROUNDS, default 100).
// Then LLM fault storms (scripts/fault-storm.mjs): STORMS rounds (default
// 100) of 30 turns with compression and session end while half the model
// requests fail in one of nine ways, then recovery on a restarted instance.
// Then the bad-input matrix (scripts/bad-inputs.mjs) BAD_REPEATS times
// (default 10), the adversarial pass (scripts/attacks.mjs: one row per class
// of attack, each refusal repeated ATTACK_REPEATS times, default 100,000),
// and the fuzz targets (scripts/fuzz.mjs), FUZZ_CASES cases each (default
// 100,000). STAGES (default "crash,tabs,instances,storm,bad,attacks,fuzz")
// runs a part.
// Last line: one JSON object of the stages run.
import { execFileSync } from "node:child_process";
import { crashTrials } from "../scripts/crash-trial.mjs";
import { manyTabs } from "../scripts/many-tabs.mjs";
import { faultStorm } from "../scripts/fault-storm.mjs";
import { manyInstances } from "../scripts/many-instances.mjs";
import { fuzz } from "../scripts/fuzz.mjs";
import { badInputMatrix } from "../scripts/bad-inputs.mjs";
import { attackPass } from "../scripts/attacks.mjs";
import { machine } from "./stats.mjs";

const TRIALS = Number(process.env.TRIALS ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 25);
const TABS = Number(process.env.TABS ?? 4);
const STORMS = Number(process.env.STORMS ?? 100);
const INSTANCE_ROUNDS = Number(process.env.INSTANCE_ROUNDS ?? 100);
const SETS = Number(process.env.SETS ?? 4);
const FUZZ_CASES = Number(process.env.FUZZ_CASES ?? 100_000);
const BAD_REPEATS = Number(process.env.BAD_REPEATS ?? 10);
const ATTACK_REPEATS = Number(process.env.ATTACK_REPEATS ?? 100_000);
const STAGES = new Set((process.env.STAGES ?? "crash,tabs,instances,storm,bad,attacks,fuzz").split(","));
const started = performance.now();
const sets = [];
for (let s = 1; STAGES.has("crash") && s <= SETS; s++) {
  const r = await crashTrials({ trials: Math.ceil(TRIALS / SETS), seed: s });
  const acked = r.acknowledged.add + r.acknowledged.remember + r.acknowledged.endSession;
  sets.push({ seed: s, ...r, acked });
  process.stderr.write(`set ${s}: ${r.trials} trials, ${acked} acknowledged, lost ${r.lost}\n`);
}
const tabs = STAGES.has("tabs") ? await manyTabs({ tabs: TABS, rounds: ROUNDS, seed: 1 }) : null;
const instances = STAGES.has("instances") ? await manyInstances({ instances: TABS, rounds: INSTANCE_ROUNDS, seed: 1 }) : null;
const storms = STAGES.has("storm") ? await faultStorm({ rounds: STORMS, faultRate: 0.5, seed: 1 }) : null;
const bad = [];
for (let i = 0; STAGES.has("bad") && i < BAD_REPEATS; i++) bad.push(await badInputMatrix());
const attacks = STAGES.has("attacks") ? await attackPass({ repeats: ATTACK_REPEATS }) : null;
const fuzzed = STAGES.has("fuzz") ? fuzz({ cases: FUZZ_CASES }) : null;
const sum = (f) => sets.reduce((n, s) => n + f(s), 0);
const chromium = execFileSync(process.env.CHROMIUM ?? "/usr/bin/chromium", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
console.log(`bench:reliability on ${machine()}, ${chromium}; ` +
  `stages ${[...STAGES].join(", ")}; ${((performance.now() - started) / 1000).toFixed(0)} s`);
const figures = {};
if (sets.length) {
  console.table(sets.map((s) => ({
    seed: s.seed, trials: s.trials, "page closed": s.byKill.closePage, "browser killed": s.byKill.killBrowser,
    "acked adds": s.acknowledged.add, "acked memories": s.acknowledged.remember, "acked session ends": s.acknowledged.endSession,
    lost: s.lost, duplicates: s.duplicates, damaged: s.damaged, owed: s.owed,
  })));
  const failures = sets.flatMap((s) => s.failures.map((f) => ({ seed: s.seed, ...f })));
  if (failures.length) console.log("failures:", JSON.stringify(failures));
  const perTrial = sets.map((s) => s.acked / s.trials).sort((a, b) => a - b);
  console.log(`acknowledged writes per trial, by set: median ${perTrial[Math.floor(perTrial.length / 2)].toFixed(1)} (${perTrial[0].toFixed(1)}-${perTrial.at(-1).toFixed(1)})`);
  Object.assign(figures, {
    crash_trials: sum((s) => s.trials),
    crash_lost: sum((s) => s.lost),
    page_closed: sum((s) => s.byKill.closePage),
    browser_killed: sum((s) => s.byKill.killBrowser),
    acknowledged_writes: sum((s) => s.acked),
    duplicates: sum((s) => s.duplicates),
    damaged: sum((s) => s.damaged),
    owed: sum((s) => s.owed),
  });
}
if (tabs) {
  console.table([{ rounds: tabs.rounds, tabs: tabs.tabs, "messages written": tabs.messages, "memories remembered": tabs.memories,
    lost: tabs.lost, duplicates: tabs.duplicates, "judged twice": tabs.judgedTwice, owed: tabs.owed, damaged: tabs.damaged }]);
  if (tabs.failures.length) console.log("many-tabs failures:", JSON.stringify(tabs.failures));
  Object.assign(figures, { tab_rounds: tabs.rounds, tab_ops: tabs.messages + tabs.memories, tab_lost: tabs.lost,
    tab_duplicates: tabs.duplicates, tab_judged_twice: tabs.judgedTwice });
}
if (instances) {
  console.table([{ rounds: instances.rounds, "Node instances": instances.instances, "messages written": instances.messages,
    "memories remembered": instances.memories, lost: instances.lost, duplicates: instances.duplicates,
    "judged twice": instances.judgedTwice, owed: instances.owed }]);
  if (instances.failures.length) console.log("many-instances failures:", JSON.stringify(instances.failures));
  Object.assign(figures, { instance_rounds: instances.rounds, instance_lost: instances.lost,
    instance_duplicates: instances.duplicates, instance_judged_twice: instances.judgedTwice });
}
if (storms) {
  const injected = Object.values(storms.injected).reduce((a, b) => a + b, 0);
  console.table([{ rounds: storms.rounds, "model requests": storms.requests, "faults injected": injected, ...storms.injected,
    recovered: storms.recovered, lost: storms.lost, duplicates: storms.duplicates }]);
  if (storms.failures.length) console.log("storm failures:", JSON.stringify(storms.failures));
  Object.assign(figures, { llm_rounds: storms.rounds, llm_faults: injected, llm_recovered: storms.recovered, llm_lost: storms.lost });
}
if (bad.length) {
  const calls = bad.reduce((n, b) => n + b.calls, 0);
  const problems = bad.flatMap((b) => b.problems);
  console.table([{ "matrix runs": bad.length, "calls per run": bad[0].calls, "parameters": bad[0].params, "bad calls": calls,
    "untyped, unlisted or breaking": problems.length }]);
  for (const p of problems.slice(0, 20)) console.log(`bad input: ${p}`);
  Object.assign(figures, { bad_inputs: calls, bad_input_crashes: problems.length });
}
if (attacks) {
  console.table(attacks.rows.map(({ failures, ...row }) => row));
  for (const r of attacks.rows) for (const f of r.failures) console.log(`attack ${r.class}: ${f}`);
  for (const c of attacks.crashes) console.log(`attack crash: ${c}`);
  console.log(`refusals repeated: ${attacks.refusals.calls} calls, ${attacks.refusals.untyped} untyped, instance healthy: ${attacks.refusals.healthy}`);
  Object.assign(figures, attacks.figures, {
    lost: (figures.crash_lost ?? 0) + (figures.tab_lost ?? 0) + (figures.instance_lost ?? 0) + (figures.llm_lost ?? 0) + attacks.figures.attack_lost,
    crashes: (figures.bad_input_crashes ?? 0) + attacks.figures.attack_crashes,
    untyped: attacks.figures.attack_untyped,
  });
}
if (fuzzed) {
  console.table(fuzzed.map((t) => ({ target: t.target, "property tests": t.tests.length, executions: t.executions,
    seconds: Number(t.seconds.toFixed(1)), findings: t.findings.length })));
  for (const t of fuzzed) for (const f of t.findings) console.log(`finding in ${t.target} (${f.test}):\n${f.output}`);
  Object.assign(figures, { fuzz_execs: fuzzed.reduce((n, t) => n + t.executions, 0),
    fuzz_findings_open: fuzzed.reduce((n, t) => n + t.findings.length, 0) });
}
console.log(JSON.stringify(figures));
