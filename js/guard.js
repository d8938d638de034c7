// Misuse answered in JavaScript, before the wasm is entered.
//
// - A call before `init()` (web, Deno, workerd entries) would reach a wasm
//   instance that does not exist yet: it gets an AgentMemoryError
//   "NOT_INITIALIZED" instead of "Cannot read properties of undefined".
// - A revoked Proxy as an argument throws on any touch (even `instanceof`):
//   it gets "INVALID_INPUT" before anything reads it.
// - A call on a freed object (after `free()` or `using`) would pass a null
//   pointer, and the Rust side throws from inside its own frame; repeated,
//   that leaks the wasm shadow stack until every call fails. It gets "FREED".
//
// Async methods answer with a rejected promise, the others with a throw
// from JavaScript. The classes and functions the entries export are the
// guarded ones below.
import * as raw from "./agent_memory.js";

let ready = false;

/** Called by the entries once the wasm is instantiated. */
export function markReady() {
  ready = true;
}

/** Whether the wasm is instantiated (an entry may have done it on import). */
export const isReady = () => ready;

/**
 * The methods (instance and static) and functions whose declared return is a
 * Promise: they answer misuse with a rejected promise. tests/node/freed.test.mjs
 * checks this list against the generated declarations, both ways.
 */
export const ASYNC = {
  Memory: new Set([
    "open", "deleteNamespace", "popMessage", "clearSession",
    "add", "addNew", "compress", "endSession", "idle", "pendingWork", "sessions", "buildContext", "sentEntries", "sessionHistory",
    "commitSummary", "remember", "rememberMany", "supersede", "search", "memories", "history",
    "undo", "forget", "forgetScope", "purge", "exportMemories", "importMemories", "stats", "derivedFrom", "deleteSession",
    "sync", "close",
  ]),
  SyncRelay: new Set(["open", "exchange", "sync"]),
  functions: new Set(["checkStorageAdapter"]),
};

/** A typed error, as the wasm side makes them. */
export function error(code, message, cause) {
  const err = new Error(message, cause === undefined ? undefined : { cause });
  err.name = "AgentMemoryError";
  err.code = code;
  return err;
}

const notReady = () =>
  error("NOT_INITIALIZED", "agent-memory is not initialized: call `await init()` (or `initSync({ module })`) first");

const RAW_CLASSES = [raw.Memory, raw.SearchIndex, raw.TokenBudget, raw.Tokenizer, raw.SyncRelay];
const isFreed = (value) => RAW_CLASSES.some((C) => value instanceof C) && value.__wbg_ptr === 0;
/** A revoked Proxy throws on every touch, `instanceof` included. */
export const isRevoked = (value) => {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  try {
    Reflect.getPrototypeOf(value);
    return false;
  } catch {
    return true;
  }
};

/** `fn` with the checks in front; `owner` names the freed object in messages. */
function guarded(fn, isAsync, owner) {
  return function (...args) {
    let err = null;
    if (!ready) err = notReady();
    else if (owner && this?.__wbg_ptr === 0) err = error("FREED", `this ${owner} was freed; open or create a new one`);
    else if (args.some(isRevoked)) err = error("INVALID_INPUT", "an argument is a revoked Proxy");
    else if (args.some(isFreed)) err = error("FREED", "an argument was freed; create a new one");
    if (!err) {
      try {
        return fn.apply(this, args);
      } catch (thrown) {
        // The generated glue checks class arguments before entering the
        // wasm ("expected instance of Tokenizer"): a plain Error, made typed.
        err = thrown?.name === "AgentMemoryError" ? thrown : error("INVALID_INPUT", String(thrown?.message ?? thrown));
      }
    }
    if (isAsync) return Promise.reject(err);
    throw err;
  };
}

for (const C of RAW_CLASSES) {
  const asyncNames = ASYNC[C.name] ?? new Set();
  for (const [target, owner] of [[C.prototype, C.name], [C, null]]) {
    for (const name of Object.getOwnPropertyNames(target)) {
      if (["constructor", "free", "__destroy_into_raw", "__wrap", "prototype", "length", "name"].includes(name)) continue;
      const d = Object.getOwnPropertyDescriptor(target, name);
      if (typeof d.value === "function") {
        d.value = guarded(d.value, asyncNames.has(name), owner);
      } else if (typeof d.get === "function") {
        d.get = guarded(d.get, false, owner);
      } else {
        continue;
      }
      Object.defineProperty(target, name, d);
    }
  }
}

/** A class whose `new` is checked too (its instances stay instances of the original). */
const constructible = (C) =>
  new Proxy(C, {
    construct(target, args, newTarget) {
      if (!ready) throw notReady();
      if (args.some(isRevoked)) throw error("INVALID_INPUT", "an argument is a revoked Proxy");
      return Reflect.construct(target, args, newTarget);
    },
  });

export const Memory = raw.Memory;
export const Tokenizer = raw.Tokenizer;
export const SyncRelay = raw.SyncRelay;
export const SearchIndex = constructible(raw.SearchIndex);
export const TokenBudget = constructible(raw.TokenBudget);
const fn = (name) => guarded(raw[name], ASYNC.functions.has(name), null);
export const checkStorageAdapter = fn("checkStorageAdapter");
export const createEntry = fn("createEntry");
export const estimateTokens = fn("estimateTokens");
export const extractMemories = fn("extractMemories");
export const readPrompt = fn("readPrompt");
export const version = fn("version");
