// Shared by the framework adapters: what the memory would send, as the
// stored entries the adapters convert to their framework's messages.

/**
 * `{ system, entries }`: the request's system text (undefined when it has
 * none) and the stored entries of the history messages it sends, in order,
 * as the core decides them (`memory.sentEntries`).
 */
export const sentEntries = (memory, request) => memory.sentEntries(request);
