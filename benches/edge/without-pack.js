// The smallest Worker with memory: the package and no tokenizer pack (counts
// are estimates). Its bundle size is bench:edge's "worker" figure.
import { Memory } from "agent-memory";

export default {
  async fetch(request) {
    const memory = await Memory.open({ namespace: "user", sessionId: "chat" });
    await memory.add({ role: "user", content: await request.text() });
    return Response.json(await memory.buildContext({}));
  },
};
