// A strict TypeScript app with DOM types and no @types/node: the package's
// declarations must compile here.
import init, { Memory, loadTokenizer, TokenBudget, SearchIndex, estimateTokens, type Hit } from "../../pkg/index.js";
import { mapAdapter } from "../../pkg/adapters/map.js";
import { httpTransport } from "../../pkg/sync/http.js";
import { syncRelayRoute } from "../../pkg/sync/durable-object.js";

/** A device syncing through the relay; the Worker's route in front of it. */
export async function syncOnce(memory: Memory, token: () => Promise<string>): Promise<number> {
  const report = await memory.sync(httpTransport("https://chat.example.com/sync", { headers: async () => ({ authorization: `Bearer ${await token()}` }) }));
  const route = syncRelayRoute<{ SECRET: string }>({ binding: "SYNC_RELAY", authorize: (request, env) => (request.headers.get("x-user") === env.SECRET ? "u" : null) });
  const cors = syncRelayRoute<{ ORIGINS: string }>({ binding: "SYNC_RELAY", authorize: () => "u", cors: { origins: async (origin, env) => env.ORIGINS.split(",").includes(origin) } });
  syncRelayRoute({ binding: "SYNC_RELAY", authorize: () => "u", cors: { origins: ["https://app.example.com"] } });
  const res: Response = await route(new Request("https://chat.example.com/sync"), { SECRET: "s" });
  await cors(new Request("https://chat.example.com/sync"), { ORIGINS: "" });
  return report.received + res.status;
}

export async function turn(): Promise<Hit[]> {
  await init();
  const memory = await Memory.open({ namespace: "u", sessionId: "s", store: mapAdapter(), pinnedProfile: 3 });
  memory.setTokenizer(await loadTokenizer("o200k"));
  await memory.add({ role: "user", content: "I prefer Rust", timestamp: Date.now() });
  const { messages, report } = await memory.buildContext({ query: "language?", system: "Be brief." });
  const total: number = report.total + messages.length + estimateTokens("x");
  new TokenBudget({ contextWindow: 8192 }).recordUsage(total, 1);
  new SearchIndex().search("x", { topK: 3 });
  const r = await memory.remember({ content: "Prefers Rust" });
  if (r.outcome === "superseded" && r.change === "number") console.log(r.superseded);
  return memory.search("Rust", { scopes: ["user"] });
}
