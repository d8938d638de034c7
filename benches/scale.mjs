// npm run --silent bench:scale
//
// What a write, a turn, a search and an open cost as the namespace grows,
// through the public API on the shipped Map adapter (Node): for each size of
// SIZES (default 1,000 / 10,000 / 100,000) distinct memories, plus as many
// past turns, one `remember` of a new distinct text (median and max of 11),
// one `buildContext` with recall, one `search`, an open of the namespace
// until its first search answers, and the bytes stored. Beside it, like for
// like on the same texts: MiniSearch (a JS full-text index held in memory,
// no storage) adding one document and searching. Goals (the op-log issue):
// remember median <= 5 ms and max <= 50 ms at 100,000; buildContext <= 5 ms
// at 10,000 and <= 20 ms at 100,000. Last line: one JSON object of the figures.
import MiniSearch from "minisearch";
import * as am from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";
import { machine, spread } from "./stats.mjs";
import { mixedCorpus } from "./corpus.mjs";

const SIZES = (process.env.SIZES ?? "1000,10000,100000").split(",").map(Number);
const TIMED = 11;

// Distinct memory-sized texts: 8-20 words drawn (seeded) from a mixed
// corpus, with a serial so dedup never relates two of them.
const vocab = [...new Set(mixedCorpus(300_000, 23).toLowerCase().match(/[\p{L}']{3,}/gu))];
let seed = 777;
const rand = (n) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const text = (i) => `${Array.from({ length: 8 + rand(13) }, () => vocab[rand(vocab.length)]).join(" ")} ${i.toString(36)}`;
const time = async (f) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};
const progress = (s) => process.stderr.write(`${s}\n`);

const rows = [];
const figures = {};
for (const n of SIZES) {
  const store = mapAdapter();
  const m = await am.Memory.open({ namespace: "scale", sessionId: "past", store });
  const filled = performance.now();
  for (let i = 0; i < n; i += 1000) {
    await m.rememberMany(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ content: text(i + k) })));
  }
  for (let i = 0; i < n; i++) await m.add({ role: i % 2 ? "assistant" : "user", content: text(n + i) });
  await m.idle();
  progress(`${n}: filled in ${((performance.now() - filled) / 1000).toFixed(0)} s`);
  const chat = await am.Memory.open({ namespace: "scale", sessionId: "now", store });
  const remember = [], context = [], search = [];
  for (let i = 0; i < TIMED; i++) {
    remember.push(await time(() => chat.remember({ content: text(3 * n + i) })));
    const query = text(i * 7).split(" ").slice(0, 4).join(" ");
    context.push(await time(() => chat.buildContext({ query })));
    search.push(await time(() => chat.search(query)));
  }
  const opens = [];
  for (let i = 0; i < 3; i++) {
    opens.push(await time(async () => {
      const again = await am.Memory.open({ namespace: "scale", sessionId: "now", store });
      await again.search("first answer");
      again.free();
    }));
  }
  let bytes = 0;
  for (const [k, v] of store.map) bytes += k.length + v.length;
  m.free();
  chat.free();

  const mini = new MiniSearch({ fields: ["text"], storeFields: [] });
  mini.addAll(Array.from({ length: 2 * n }, (_, i) => ({ id: i, text: text(i) })));
  const miniAdd = [], miniSearch = [];
  for (let i = 0; i < TIMED; i++) {
    miniAdd.push(await time(() => mini.add({ id: 2 * n + i, text: text(3 * n + i) })));
    miniSearch.push(await time(() => mini.search(text(i * 7).split(" ").slice(0, 4).join(" "))));
  }

  const r = spread(remember), c = spread(context), s = spread(search), o = spread(opens);
  rows.push({ memories: n, "remember median": r.median, "remember max": r.max, buildContext: c.median,
    search: s.median, open: o.median, "MB stored": bytes / 1e6,
    "MiniSearch add": spread(miniAdd).median, "MiniSearch search": spread(miniSearch).median });
  Object.assign(figures, {
    [`remember_median_ms_${n}`]: +r.median.toFixed(2), [`remember_max_ms_${n}`]: +r.max.toFixed(2),
    [`build_context_ms_${n}`]: +c.median.toFixed(2), [`search_ms_${n}`]: +s.median.toFixed(2),
    [`open_ms_${n}`]: +o.median.toFixed(1), [`bytes_${n}`]: bytes,
  });
}
console.log(`bench:scale on ${machine()}: medians of ${TIMED} (open: of 3), ms; the Map adapter, distinct texts and as many past turns`);
console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "number" && k !== "memories" ? +v.toFixed(2) : v]))));
console.log(JSON.stringify(figures));
