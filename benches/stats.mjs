// Figures over runs, and the machine they ran on: shared by the benchmarks,
// which print the spread of every timed figure, not only its median.
import os from "node:os";

export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** `{ min, median, max, runs }` of `xs`. */
export function spread(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[s.length >> 1], max: s.at(-1), runs: s.length };
}

/** "median (min-max)", `digits` decimals (numbers of 100 and more: whole, grouped). */
export function showSpread(xs, digits = 1) {
  const { min, median: m, max } = spread(xs);
  const f = (x) => (Math.abs(x) >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(digits));
  return `${f(m)} (${f(min)}-${f(max)})`;
}

/** The CPU, its cores and the Node version, for a benchmark's first line. */
export const machine = () => `${os.cpus()[0]?.model ?? "cpu"} x ${os.cpus().length}, Node ${process.version}`;
