// What the store tests share: a child Node process that runs a module and
// answers in JSON, writers that add and remember at once, and the check that
// every acknowledged write is there exactly once.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";

export const nodeEntry = new URL("../../pkg/node.js", import.meta.url).href;

/** Runs `code` (an ES module) in a new Node process; resolves to its stdout's last line, parsed as JSON. */
export function node(code, { cwd, env = {} } = {}) {
  const childEnv = { ...process.env, ...env };
  delete childEnv.NODE_TEST_CONTEXT;
  return new Promise((ok, fail) => {
    execFile(process.execPath, ["--input-type=module", "-e", code], { cwd, env: childEnv, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return fail(new Error(`child failed: ${err.message}\n${stderr}`));
      try {
        ok(JSON.parse(stdout.trim().split("\n").pop()));
      } catch {
        fail(new Error(`child printed no JSON: ${stdout}\n${stderr}`));
      }
    });
  });
}

/** Syllable words no dedup rule relates. */
export const FACT_CODE = `
  const SYL = "ba be bi bo bu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu".split(" ");
  const word = () => Array.from({ length: 3 }, () => SYL[Math.floor(Math.random() * SYL.length)]).join("");
  const fact = () => [word(), word(), word(), word(), word()].join(" ");
`;

/**
 * A writer process: opens the shared namespace with `storeCode` (an expression,
 * after `imports`), then from `at` on adds `n` messages and remembers `n` facts,
 * two calls in flight at a time; prints what was acknowledged.
 */
export const writerChild = ({ imports, storeCode, closeCode = "", id, n, at }) => `
  import { Memory } from ${JSON.stringify(nodeEntry)};
  ${imports}
  ${FACT_CODE}
  const store = ${storeCode};
  const memory = await Memory.open({ namespace: "shared", sessionId: "chat", store });
  await new Promise((ok) => setTimeout(ok, Math.max(0, ${at} - Date.now())));
  const added = [], remembered = [], errors = [];
  for (let i = 0; i < ${n}; i++) {
    const text = "writer ${id} message " + i;
    const f = fact();
    const [a, r] = await Promise.allSettled([memory.add({ role: "user", content: text }), memory.remember({ content: f })]);
    if (a.status === "fulfilled") added.push(text); else errors.push(String(a.reason?.message ?? a.reason));
    if (r.status === "fulfilled") remembered.push(f); else errors.push(String(r.reason?.message ?? r.reason));
  }
  await memory.idle();
  memory.free();
  ${closeCode}
  console.log(JSON.stringify({ added, remembered, errors }));
`;

/** Every acknowledged write of `results` found exactly once in `memories` / `history`, and nothing twice. */
export function assertExactlyOnce(results, memories, history) {
  const count = (list) => list.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map());
  const [mem, hist] = [count(memories), count(history)];
  const acked = { added: results.flatMap((r) => r.added), remembered: results.flatMap((r) => r.remembered) };
  const lost = [...acked.added.filter((t) => !hist.has(t)), ...acked.remembered.filter((f) => !mem.has(f))];
  const duplicated = [...[...hist].filter(([, c]) => c > 1), ...[...mem].filter(([, c]) => c > 1)];
  assert.deepEqual({ lost, duplicated }, { lost: [], duplicated: [] });
  return acked;
}
