// agent-memory for Cloudflare Workers (workerd). Wrangler's bundler imports a
// `.wasm` as a compiled module, and workerd compiles no code at run time nor
// gives modules a URL to fetch from: so this entry instantiates the wasm on
// import, and `init()` is not needed (it does nothing).
import wasm from "./agent_memory_bg.wasm";
import { initSync } from "./index.js";

initSync({ module: wasm });

export * from "./index.js";
export { default } from "./index.js";
