// Serves a folder on 127.0.0.1. Usage: node scripts/serve.mjs DIR [PORT]
import { startServer } from "./static-server.mjs";

const { url } = await startServer(process.argv[2] ?? "www", Number(process.argv[3] ?? process.env.PORT ?? 8080));
console.log(`agent-memory demo: ${url}`);
