// Imports of the component for a host in Node (`jco transpile
// --instantiation`, whose output reads them by interface name without
// version): the WASI 0.2 interfaces it imports through std (environment,
// exit, stdio, clocks, random) from jco's preview2 shim, and a `store` on a Map.
import { cli, clocks, io, random } from "@bytecodealliance/preview2-shim";

export const wasiImports = {
  "wasi:cli/environment": cli.environment,
  "wasi:cli/exit": cli.exit,
  "wasi:cli/stderr": cli.stderr,
  "wasi:cli/stdin": cli.stdin,
  "wasi:cli/stdout": cli.stdout,
  "wasi:cli/terminal-input": cli.terminalInput,
  "wasi:cli/terminal-output": cli.terminalOutput,
  "wasi:cli/terminal-stderr": cli.terminalStderr,
  "wasi:cli/terminal-stdin": cli.terminalStdin,
  "wasi:cli/terminal-stdout": cli.terminalStdout,
  "wasi:clocks/monotonic-clock": clocks.monotonicClock,
  "wasi:clocks/wall-clock": clocks.wallClock,
  "wasi:io/error": io.error,
  "wasi:io/poll": io.poll,
  "wasi:io/streams": io.streams,
  "wasi:random/insecure-seed": random.insecureSeed,
  "wasi:random/random": random.random,
};

/** The world's `store` on `kv`, a Map shared by every namespace. */
export const mapStore = (kv) => ({
  get: (key) => kv.get(key),
  putMany: (items) => { for (const [k, v] of items) kv.set(k, v); },
  deleteMany: (keys) => { for (const k of keys) kv.delete(k); },
  listPrefix: (prefix) => [...kv].filter(([k]) => k.startsWith(prefix)),
});
