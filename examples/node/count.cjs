// The same package from CommonJS: exact token counts and a recall, in memory.
//
//   node count.cjs "text to count"
const { loadTokenizer, Memory } = require("agent-memory");

async function main() {
  const o200k = await loadTokenizer("o200k");
  const memory = await Memory.open({ namespace: "me", sessionId: "chat" });
  await memory.remember({ content: "Prefers Rust for command-line tools" });
  const [hit] = await memory.search("Rust command-line");
  return { tokens: o200k.count(process.argv[2] ?? ""), recalled: hit?.text };
}

main().then((r) => console.log(JSON.stringify(r)), (err) => {
  console.error(`${err.code}: ${err.message}`);
  process.exitCode = 1;
});
