// The 20-turn chat every framework adapter is tested with: a small context
// window the chat outgrows (so it is compressed on the way), replies
// streamed on even turns, and a restart on the same store before turn 11.
import assert from "node:assert/strict";

/** Budget options that 20 turns outgrow. */
export const SMALL_WINDOW = { budget: { contextWindow: 1200, reservedForSystem: 200, reservedForTools: 0, reservedForResponse: 200 } };

/**
 * Runs the chat: `start()` opens the memory and the framework's side of it
 * (`{ memory, ... }`), again for the restart; `turn(side, input, stream)`
 * runs one turn and resolves to the reply's text; `lastRequest()` is the
 * body the model server got last. Resolves to the memory after turn 20.
 */
export async function twentyTurns({ start, turn, lastRequest }) {
  let side = await start();
  for (let n = 1; n <= 20; n++) {
    if (n === 11) side = await start();
    const input = `Turn ${n}: I like topic number ${n} and want to talk about it at some length today.`;
    const stream = n % 2 === 0;
    const reply = await turn(side, input, stream);
    assert.ok(reply.length > 0, `turn ${n} has a reply`);
    const body = lastRequest();
    assert.equal(body.stream === true, stream, `turn ${n}: streamed only on even turns`);
    assert.equal(body.messages.at(-1).content, input, "the new message is sent last");
    assert.equal(body.messages.filter((m) => m.content === input).length, 1, "and once");
    const { report } = await side.memory.buildContext();
    assert.ok(report.total <= report.limit, `turn ${n}: ${report.total} of ${report.limit} tokens`);
    await side.memory.idle();
  }
  const history = await side.memory.sessionHistory();
  assert.equal(history.length, 40, "every message and reply stored once, across the restart, streamed replies included");
  assert.deepEqual(history.filter((m) => m.role === "user").map((m) => Number(/Turn (\d+)/.exec(m.content)[1])), Array.from({ length: 20 }, (_, i) => i + 1));
  assert.ok(history.filter((m) => m.role === "assistant").every((m) => m.content.length > 0));
  const sent = lastRequest().messages;
  assert.ok(sent.length < 40, `${sent.length} messages sent: the window did not hold them all`);
  assert.ok(sent.some((m) => m.role === "system" && /<summary>/.test(m.content)), "the summary stands in for the oldest turns");
  return side.memory;
}
