// `wrangler dev` on 127.0.0.1 (local workerd, nothing deployed), for the
// tests and benchmarks that need a Worker running.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { root } from "./example.mjs";

/** A TCP port free on 127.0.0.1 now. */
export const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/**
 * Starts `wrangler dev` in `cwd`, keeping Durable Object storage in
 * `persistTo` (a restart with the same folder finds it), on `port` (default:
 * a free one; a restart may take its predecessor's); resolves once it
 * serves, to { url, port, stop }.
 */
export async function startWorker(cwd, persistTo, vars = {}, port) {
  port ??= await freePort();
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persistTo, "--log-level", "warn"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn(join(root, "node_modules/.bin/wrangler"), args,
    { cwd, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" }, detached: true, stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(`${url}/`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const exited = new Promise((ok) => child.once("exit", ok));
  // Stopping twice (a test's finally after a stop of its own) is one stop.
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGTERM");
    return exited;
  };
  return { url, port, stop };
}
