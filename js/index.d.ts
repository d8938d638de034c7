export * from "./agent_memory.js";
import { Tokenizer } from "./agent_memory.js";
export { default, initSync } from "./agent_memory.js";
export { default as init } from "./agent_memory.js";

/** A pack name shipped with the package, a URL or path, a fetch Response, or the pack bytes. */
export type TokenizerSource = "cl100k" | "o200k" | string | URL | Response | ArrayBuffer | Uint8Array;

/** An exact tokenizer (counts identical to tiktoken) built from a pack. */
export function loadTokenizer(source: TokenizerSource): Promise<Tokenizer>;
