// Calls on a freed object never reach the wasm. After `free()` (or `using`)
// the generated glue passes a null pointer, and the Rust side throws from
// inside its own frame; repeated, that leaks the wasm shadow stack until
// every call fails. So each method of the classes first checks its object
// (and any of these objects among its arguments) and answers with an
// AgentMemoryError "FREED": a rejected promise for async methods, a throw
// from JavaScript for the others.
import { Memory, SearchIndex, TokenBudget, Tokenizer } from "./agent_memory.js";

const ASYNC = {
  Memory: new Set([
    "add", "compress", "endSession", "idle", "pendingWork", "buildContext", "sessionHistory",
    "commitSummary", "remember", "rememberMany", "supersede", "search", "memories", "history",
    "undo", "forget", "forgetScope", "purge", "exportMemories", "importMemories", "stats",
  ]),
};

const CLASSES = [Memory, SearchIndex, TokenBudget, Tokenizer];

function freedError(className) {
  const err = new Error(`this ${className} was freed; open or create a new one`);
  err.name = "AgentMemoryError";
  err.code = "FREED";
  return err;
}

const isFreed = (value) => CLASSES.some((C) => value instanceof C) && value.__wbg_ptr === 0;

for (const C of CLASSES) {
  const asyncMethods = ASYNC[C.name] ?? new Set();
  for (const name of Object.getOwnPropertyNames(C.prototype)) {
    if (name === "constructor" || name === "free" || name === "__destroy_into_raw") continue;
    const d = Object.getOwnPropertyDescriptor(C.prototype, name);
    if (typeof d.value === "function") {
      const original = d.value;
      const isAsync = asyncMethods.has(name);
      d.value = function (...args) {
        if (this.__wbg_ptr === 0 || args.some(isFreed)) {
          const err = freedError(this.__wbg_ptr === 0 ? C.name : "argument");
          if (isAsync) return Promise.reject(err);
          throw err;
        }
        return original.apply(this, args);
      };
      Object.defineProperty(C.prototype, name, d);
    } else if (typeof d.get === "function") {
      const getter = d.get;
      d.get = function () {
        if (this.__wbg_ptr === 0) throw freedError(C.name);
        return getter.call(this);
      };
      Object.defineProperty(C.prototype, name, d);
    }
  }
}
