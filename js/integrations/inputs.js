// Shared by the framework adapters: checks of what a framework or an app
// hands in, so malformed input is INVALID_INPUT (the library's typed error)
// rather than a TypeError from deep inside a conversion.

import { error } from "../guard.js";

/** The checks of one adapter, its name in every message. */
export function inputs(adapter) {
  const invalid = (what, cause) => error("INVALID_INPUT", `agent-memory/${adapter}: ${what}`, cause);
  return {
    invalid,
    /** `value` if it is an array of objects (messages, items, tool calls): what a conversion reads fields of. */
    objects(value, what) {
      if (!isObjects(value)) throw invalid(`${what} must be an array of objects`);
      return value;
    },
    /** JSON text of a value. A value JSON cannot hold (a cycle, a BigInt) is bad input, not JSON.stringify's TypeError. */
    json(value) {
      try {
        return JSON.stringify(value);
      } catch (cause) {
        throw invalid(`a value JSON cannot hold: ${cause.message}`, cause);
      }
    },
    /** An options argument: omitted, or an object (destructuring null would be a TypeError). */
    optionsOf(options, who) {
      if (options === undefined) return {};
      if (options === null || typeof options !== "object") throw invalid(`${who}'s options must be an object`);
      return options;
    },
    /** The Memory a class is built on, checked when it is built: a wrong one would surface later, inside a call. */
    memoryOf(memory, who) {
      if (typeof memory?.buildContext !== "function") throw invalid(`${who} needs a Memory`);
      return memory;
    },
  };
}

/** Whether `value` is an array whose items are all objects. */
export const isObjects = (value) => Array.isArray(value) && value.every((v) => v !== null && typeof v === "object");
