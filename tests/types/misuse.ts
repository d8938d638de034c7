// Each line below must be a type error (checked by tsc through @ts-expect-error).
import { Memory, Tokenizer } from "../../pkg/index.js";
import { httpTransport } from "../../pkg/sync/http.js";
import { syncRelayRoute } from "../../pkg/sync/durable-object.js";

export async function misuse(memory: Memory, tok: Tokenizer): Promise<void> {
  // @ts-expect-error a query is a string
  await memory.search(42);
  // @ts-expect-error an export document is an object
  await memory.importMemories("not a document");
  // @ts-expect-error ids are strings
  await memory.supersede({ content: "x" }, [42]);
  // @ts-expect-error text is a string
  tok.count(5);
  // @ts-expect-error a misspelt option
  await Memory.open({ namespace: "u", sessionId: "s", storageTimeoutMS: 5 });
  // @ts-expect-error a misspelt option
  httpTransport("/sync", { header: {} });
  // @ts-expect-error authorize is required
  syncRelayRoute({ binding: "SYNC_RELAY" });
  // @ts-expect-error origins is a list or a check, not one string
  syncRelayRoute({ binding: "SYNC_RELAY", authorize: () => "u", cors: { origins: "https://app.example.com" } });
}
