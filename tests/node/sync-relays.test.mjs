// Relay to relay with real parts: the Durable Object relay of
// examples/cloudflare under `wrangler dev` (real workerd), and a SyncRelay on
// Deno KV in the real Deno binary (tests/deno/relay.mjs), a device syncing
// with each. The relays sync with each other, sealed items as they are, so
// each device sees the other's memories and forgets; neither relay holds a
// plaintext.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as am from "../../pkg/node.js";
import { httpTransport } from "../../pkg/sync/http.js";
import { installExample, root } from "../../scripts/example.mjs";
import { startWorker } from "../../scripts/wrangler.mjs";
import { mapAdapter } from "./map-adapter.mjs";

const deno = join(root, "node_modules/.bin/deno");
const secret = randomBytes(16).toString("hex");
const token = `alice.${createHmac("sha256", secret).update("alice").digest("hex")}`;

test("a Durable Object relay and a Deno KV relay sync with each other: a device on each gets the other's memories and forgets, no plaintext at either", { timeout: 300_000 }, async () => {
  const app = installExample("cloudflare");
  const worker = await startWorker(app, mkdtempSync(join(tmpdir(), "relay-")), { SYNC_SECRET: secret });
  try {
    const url = `${worker.url}/sync`;
    const kvPath = join(mkdtempSync(join(tmpdir(), "kv-relay-")), "relay.db");
    const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(tmpdir(), "agent-memory-deno") };
    const inDeno = async (phase) => {
      const args = ["run", "--quiet", "--allow-read", "--allow-write", "--allow-net", "--unstable-kv", "tests/deno/relay.mjs", kvPath, url, token, phase];
      const { stdout } = await promisify(execFile)(deno, args, { cwd: root, env });
      return JSON.parse(stdout.trim().split("\n").pop());
    };
    const key = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(7), "AES-GCM", false, ["encrypt", "decrypt"]);
    const store = mapAdapter();
    const laptop = await am.Memory.open({ namespace: "alice", sessionId: "node", store, encryption: { key } });
    const toDurableObject = httpTransport(url, { headers: { authorization: `Bearer ${token}` } });
    const dog = await laptop.remember({ content: "Has a dog named Rex" });
    await laptop.sync(toDurableObject);

    const written = await inDeno("write");
    assert.deepEqual(written.relays, { sent: 1, received: 1 }, "the KV relay sends the Deno device's fact and takes the laptop's");
    await laptop.sync(toDurableObject);
    assert.deepEqual((await laptop.memories()).map((e) => e.content).sort(), ["Has a dog named Rex", "Lives in Lisbon"]);

    await laptop.forget(dog.entry.id);
    await laptop.sync(toDurableObject);
    const read = await inDeno("read");
    assert.ok(read.relays.received >= 1, JSON.stringify(read.relays));
    assert.deepEqual(read.texts, ["Lives in Lisbon"], "the forget crossed both relays");
    assert.ok(read.relayValues.length > 0 && !/Rex|Lisbon/.test(read.relayValues + Buffer.from(read.relayValues, "base64").toString("latin1")),
      "the KV relay holds ciphertext and erasures only");
    laptop.free();
  } finally {
    await worker.stop();
  }
});
