// agent-memory for Deno. A source-phase import gives the compiled `.wasm`
// module with no read permission and no fetch, so this entry instantiates it
// on import, and `init()` is not needed (it does nothing).
import source wasm from "./agent_memory_bg.wasm";
import { initSync } from "./index.js";

initSync({ module: wasm });

export * from "./index.js";
export { default } from "./index.js";
