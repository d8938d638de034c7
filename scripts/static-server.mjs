// A small static file server bound to 127.0.0.1, for the demo page, the
// browser benchmarks and the browser end-to-end tests.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json",
  ".amtk": "application/octet-stream", ".svg": "image/svg+xml",
};

/**
 * Serves `root` on 127.0.0.1:`port` (0 = any free port); resolves to { server, url }.
 * `routes` maps a path to a handler `(req, res) => void` that answers it instead of a file.
 */
export function startServer(root, port = 0, routes = new Map()) {
  const base = resolve(root);
  const server = createServer(async (req, res) => {
    const route = routes.get(new URL(req.url, "http://x").pathname);
    if (route) return route(req, res);
    try {
      const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
      let file = join(base, path);
      if (!file.startsWith(base)) throw new Error("outside root");
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  return new Promise((ok) => {
    server.listen(port, "127.0.0.1", () => ok({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}
