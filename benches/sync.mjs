// npm run --silent bench:sync
//
// What a sync costs against what differs, through the public API (Node, the
// Map adapter): a device holding N (default 10,000) memories and a relay
// (SyncRelay) holding the same, then each side changed apart by DIFF_PCTS
// (0.1%, 1%, 10%) of N operations in all: on the device, half remembers new
// and supersedes; on the relay, another device's half (remembers new and
// forgets). Timed: `memory.sync` until the device and the relay hold the
// same operations, through an in-process transport calling the relay's
// `exchange` (the bytes counted are the frames both ways). Beside it, the
// naive full upload measured the same way: the device's every operation
// sent to an empty relay; and a sync's cost once nothing differs. Each
// figure over RUNS runs on fresh copies of the same stores. Counted, not assumed: entries the device should hold and
// lacks after the sync (lost) and forgotten ones it holds (resurrected).
// Goals at 1% (issue #39): bytes <= 5% of the full upload, converge <= 2 s.
// Then a long lineage: one memory restated LINEAGE times (default 2,000)
// with a number changed, which dedup makes versions of one memory, on one
// device, told one at a time and in four batches: a new device's download
// of it, beside LINEAGE distinct memories downloaded the same way (like for
// like: as many operations), and its forget reaching the device that wrote
// it (every version must go: a version left is counted resurrected).
// Last line: one JSON object of the 1% figures and the lineage's.
import * as am from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";
import { machine, median, showSpread } from "./stats.mjs";
import { mixedCorpus } from "./corpus.mjs";

const N = Number(process.env.N ?? 10_000);
const LINEAGE = Number(process.env.LINEAGE ?? 2_000);
const DIFF_PCTS = (process.env.DIFF_PCTS ?? "0.1,1,10").split(",").map(Number);
const RUNS = Number(process.env.RUNS ?? 5);
const progress = (s) => process.stderr.write(`${s}\n`);

// Distinct memory-sized texts (as bench:scale makes them): a serial keeps
// dedup from relating two of them.
const vocab = [...new Set(mixedCorpus(300_000, 39).toLowerCase().match(/[\p{L}']{3,}/gu))];
let seed = 39;
const rand = (n) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
let serial = 0;
const text = () => `${Array.from({ length: 8 + rand(13) }, () => vocab[rand(vocab.length)]).join(" ")} ${(serial++).toString(36)}`;

const open = (store) => am.Memory.open({ namespace: "bench", sessionId: "s", store });
const relayOn = (store) => am.SyncRelay.open({ store, namespace: "bench" });
const copy = (store) => mapAdapter(new Map(store.map));
/** A transport to `relay` that counts the bytes of both frames of each exchange. */
function counted(relay) {
  const t = async (request) => {
    const answer = await relay.exchange(request);
    t.bytes += request.length + answer.length;
    return answer;
  };
  t.bytes = 0;
  return t;
}
const ids = async (m) => new Set((await m.exportMemories(null)).entries.map((e) => e.id));

progress(`filling a device with ${N.toLocaleString("en-US")} memories`);
const baseStore = mapAdapter();
const base = await open(baseStore);
for (let i = 0; i < N; i += 1000) await base.rememberMany(Array.from({ length: Math.min(1000, N - i) }, () => ({ content: text() })));
const baseIds = [...(await ids(base))];

// The naive full upload: every operation of the device to an empty relay.
const full = { bytes: [], ms: [] };
for (let r = 0; r < RUNS; r++) {
  const relay = await relayOn(mapAdapter());
  const t = counted(relay);
  const start = performance.now();
  const report = await base.sync(t);
  full.ms.push(performance.now() - start);
  full.bytes.push(t.bytes);
  if (report.sent !== N) throw new Error(`the full upload sent ${report.sent} of ${N}`);
  relay.free();
}
const relayStore = mapAdapter();
const seeded = await relayOn(relayStore);
await base.sync((request) => seeded.exchange(request));
seeded.free();

const rows = [];
let json;
for (const pct of DIFF_PCTS) {
  const differ = Math.max(2, Math.round((N * pct) / 100));
  progress(`${pct}%: ${differ} operations apart`);
  // The other device: the base from the relay, then its half, synced to the relay.
  const other = await open(mapAdapter());
  const relayAt = copy(relayStore);
  const relay = await relayOn(relayAt);
  await other.sync((request) => relay.exchange(request));
  const forgotten = new Set();
  for (let i = 0; i < differ / 2; i++) {
    if (i % 4 === 3) {
      const id = baseIds[2 * i + 1];
      await other.forget(id);
      forgotten.add(id);
    } else await other.remember({ content: text() });
  }
  await other.sync((request) => relay.exchange(request));
  // This device: its half, on other memories of the base.
  const deviceStore = copy(baseStore);
  const device = await open(deviceStore);
  for (let i = 0; i < differ / 2; i++) {
    if (i % 3 === 2) await device.supersede({ content: text() }, [baseIds[2 * i]]);
    else await device.remember({ content: text() });
  }
  await device.idle();
  // Expected after the sync: every entry either side held, less the
  // forgotten; valid those valid on each side holding them (a side that did
  // not change a memory holds it as it was).
  const sides = [];
  for (const m of [device, other]) sides.push({ held: await ids(m), valid: new Set((await m.memories(null)).map((e) => e.id)) });
  const expected = [...new Set(sides.flatMap((s) => [...s.held]))].filter((id) => !forgotten.has(id));
  const expectedValid = expected.filter((id) => sides.every((s) => !s.held.has(id) || s.valid.has(id)));
  device.free();
  other.free();
  relay.free();

  const runs = { bytes: [], ms: [], rounds: [], idle: [], lost: 0, resurrected: 0 };
  for (let r = 0; r < RUNS; r++) {
    const m = await open(copy(deviceStore));
    const peer = await relayOn(copy(relayAt));
    const t = counted(peer);
    const start = performance.now();
    const report = await m.sync(t);
    runs.ms.push(performance.now() - start);
    runs.bytes.push(t.bytes);
    runs.rounds.push(report.rounds);
    const held = await ids(m);
    const valid = new Set((await m.memories(null)).map((e) => e.id));
    runs.lost += expected.filter((id) => !held.has(id)).length + expectedValid.filter((id) => !valid.has(id)).length;
    runs.resurrected += [...forgotten].filter((id) => held.has(id)).length;
    // Converged: a second sync finds nothing to move either way (timed: a
    // sync's cost when nothing differs).
    const before = performance.now();
    const again = await m.sync((request) => peer.exchange(request));
    runs.idle.push(performance.now() - before);
    if (again.sent || again.received) throw new Error(`not converged: ${JSON.stringify(again)}`);
    m.free();
    peer.free();
  }
  rows.push({ "diff %": pct, "ops apart": differ, bytes: showSpread(runs.bytes, 0), "% of full": ((100 * median(runs.bytes)) / median(full.bytes)).toFixed(2),
    "converge ms": showSpread(runs.ms), rounds: median(runs.rounds), "then in sync ms": showSpread(runs.idle), lost: runs.lost, resurrected: runs.resurrected });
  if (pct === 1) {
    json = { diff_pct: 1, converge_ms: +median(runs.ms).toFixed(1), bytes: median(runs.bytes), bytes_full: median(full.bytes), lost: runs.lost, resurrected: runs.resurrected };
  }
}
rows.push({ "diff %": "full upload", "ops apart": N, bytes: showSpread(full.bytes, 0), "% of full": "100.00", "converge ms": showSpread(full.ms), rounds: "", "then in sync ms": "", lost: "", resurrected: "" });
console.log(`bench:sync on ${machine()}: ${N.toLocaleString("en-US")} memories a side, median (min-max) of ${RUNS} runs; in-process transport to a SyncRelay on the Map adapter`);
console.table(rows);

progress(`a lineage of ${LINEAGE.toLocaleString("en-US")} versions, and as many distinct memories`);
/** A relay's store holding what `fill` writes on a device, and that device's store. */
async function written(fill) {
  const store = mapAdapter();
  const m = await open(store);
  const out = await fill(m);
  const relayStore = mapAdapter();
  const relay = await relayOn(relayStore);
  await m.sync((request) => relay.exchange(request));
  m.free();
  relay.free();
  return { store, relayStore, out };
}
/** One memory restated LINEAGE times with a number changed, which dedup makes versions of it. */
const lineageOf = (batch) => written(async (m) => {
  const said = (i) => ({ content: `Saved ${i} euros towards the trip to Porto this month` });
  for (let i = 0; i < LINEAGE; i += batch) {
    const n = Math.min(batch, LINEAGE - i);
    if (batch === 1) await m.remember(said(i));
    else await m.rememberMany(Array.from({ length: n }, (_, k) => said(i + k)));
  }
  const inForce = (await m.memories(null)).length;
  if (inForce !== 1) throw new Error(`the lineage is ${inForce} memories in force, not one`);
  return [...(await ids(m))];
});
// One at a time, as a person restates a fact; and in four batches, as an
// import brings them (a batch's near-copies are related to what is in force,
// not to each other: all of the first batch stay in force, and the next
// batch's first version replaces them all).
const lineages = [
  { what: "one at a time", held: await lineageOf(1), down: [], forget: [], resurrected: 0 },
  { what: "in four batches", held: await lineageOf(Math.ceil(LINEAGE / 4)), down: [], forget: [], resurrected: 0 },
];
const distinct = await written(async (m) => {
  for (let i = 0; i < LINEAGE; i += 1000) await m.rememberMany(Array.from({ length: Math.min(1000, LINEAGE - i) }, () => ({ content: text() })));
});
const distinctDown = [];
let distinctBytes = 0;
for (let r = 0; r < RUNS; r++) {
  for (const line of lineages) {
    const m = await open(mapAdapter());
    const peer = await relayOn(copy(line.held.relayStore));
    const start = performance.now();
    line.bytes = (await m.sync((request) => peer.exchange(request))).bytesReceived;
    line.down.push(performance.now() - start);
    // Forgotten here (the memory in force, with its history), then the
    // forget reaches the device that wrote the lineage.
    await m.forget((await m.memories(null))[0].id);
    await m.sync((request) => peer.exchange(request));
    const writer = await open(copy(line.held.store));
    const before = performance.now();
    await writer.sync((request) => peer.exchange(request));
    line.forget.push(performance.now() - before);
    const left = await ids(writer);
    line.resurrected += line.held.out.filter((id) => left.has(id)).length;
    writer.free();
    m.free();
    peer.free();
  }
  const m = await open(mapAdapter());
  const peer = await relayOn(copy(distinct.relayStore));
  const start = performance.now();
  distinctBytes = (await m.sync((request) => peer.exchange(request))).bytesReceived;
  distinctDown.push(performance.now() - start);
  m.free();
  peer.free();
}
const L = LINEAGE.toLocaleString("en-US");
console.table([
  ...lineages.flatMap((line) => [
    { what: `a new device downloads one memory's ${L} versions, told ${line.what} (ms)`, value: showSpread(line.down) },
    { what: "  bytes it receives", value: line.bytes.toLocaleString("en-US") },
    { what: "  the forget of it reaches the device that wrote it (ms)", value: showSpread(line.forget) },
    { what: "  versions left there (resurrected)", value: line.resurrected },
  ]),
  { what: `a new device downloads ${L} distinct memories (ms)`, value: showSpread(distinctDown) },
  { what: "  bytes it receives", value: distinctBytes.toLocaleString("en-US") },
]);
const [single, batched] = lineages;
console.log(JSON.stringify({ ...(json ?? {}), lineage: LINEAGE, lineage_download_ms: +median(single.down).toFixed(1),
  lineage_batched_download_ms: +median(batched.down).toFixed(1), distinct_download_ms: +median(distinctDown).toFixed(1),
  lineage_forget_ms: +median(single.forget).toFixed(1), lineage_batched_forget_ms: +median(batched.forget).toFixed(1),
  lineage_resurrected: single.resurrected + batched.resurrected, lineage_batched_bytes: batched.bytes }));
