// A scripted `llm` hook for tests, in Node and in pages: the judge keeps
// each new user message as a memory citing it ("User said: …"); any other
// request gets a summary that quotes what the user said (so a test can
// check that a summary quoting deleted text goes with it).

/** `({ messages, json }) => string`, as `Memory.open({ llm })` takes it. */
export async function judgeHook({ messages, json }) {
  const prompt = messages.at(-1).content;
  const lines = prompt.split("\n");
  if (!json) {
    const said = lines.filter((l) => l.includes("[user]: ")).map((l) => l.split("[user]: ")[1]);
    return `Summary: ${said.join(" ")}`;
  }
  const memories = lines.filter((l) => l.startsWith("[[NEW]]") && l.includes("[user]"))
    .map((l) => ({ content: `User said: ${l.split("[user]: ")[1]}`, category: "profile", sources: [Number(l.match(/#(\d+)/)[1])] }));
  return JSON.stringify({ memories });
}
