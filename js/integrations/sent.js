// Shared by the framework adapters: what the memory would send, as the
// stored entries the adapters convert to their framework's messages.

/**
 * `{ system, entries }`: the request's system text (undefined when it has
 * none) and the stored entries of the history messages it sends, in order.
 * The live messages are read after the request is built, which catches up
 * with other writers of the session, so every sent id is among them.
 */
export async function sentEntries(memory, request) {
  const { messages, report } = await memory.buildContext(request);
  const byId = new Map(memory.messages().map((m) => [m.id, m]));
  const system = messages.length > report.sentIds.length ? messages[0].content : undefined;
  return { system, entries: report.sentIds.map((id) => byId.get(id)) };
}
