// The offline work of a device in the sync tests, the same in Node
// (tests/node/sync-relay.test.mjs) and in Chromium (tests/browser/sync.html):
// plain ES module, no Node built-ins.
import { seededRandom } from "../../scripts/random.mjs";

const WORDS = ("amber basil cedar dune ember fjord garnet harbor indigo juniper kelp lantern meadow nutmeg opal pepper quartz " +
  "raven saffron thistle umber violet willow yarrow zephyr anchor bramble copper dahlia falcon glacier hazel iris jasmine " +
  "kestrel lilac marble nettle orchid pebble quince russet sorrel tundra walnut").split(" ");

// Each tag's texts draw on words of its own: a device's remember never
// takes another device's text for an older version of its own (which would
// supersede it), so what each device did offline is what the sync must keep.
const VOCAB = { base: WORDS.slice(0, 15), laptop: WORDS.slice(15, 30), phone: WORDS.slice(30) };

/** A text no other text of the run says. */
export const text = (rand, tag) =>
  `${tag} ${Array.from({ length: 5 }, () => VOCAB[tag][Math.floor(rand() * VOCAB[tag].length)]).join(" ")} ${Math.floor(rand() * 1e9).toString(36)}`;

/** The export (every entry, history too, in id order; not its time), its entries by id, and the valid ones' ids. */
export async function view(m) {
  const { exportedAt, ...doc } = await m.exportMemories(null);
  if (!(exportedAt > 0)) throw new Error("an export without its time");
  doc.entries.sort((x, y) => (x.id < y.id ? -1 : 1));
  const entries = new Map(doc.entries.map((e) => [e.id, e]));
  return { doc, entries, valid: new Set((await m.memories(null)).map((e) => e.id)) };
}

/** `n` base memories; their ids in order. */
export async function remembered(m, seed, n) {
  const rand = seededRandom(seed);
  const ids = [];
  for (let i = 0; i < n; i++) ids.push((await m.remember({ content: text(rand, "base") })).entry.id);
  return ids;
}

/**
 * `n` changes made offline by the device `tag`: remember, supersede, undo
 * (of a supersede) and forget, on its own memories and the base ones of
 * index parity `parity`; a forget takes, `cross` of the time, one of the
 * other parity's (which the other device may be changing meanwhile).
 * Gives the entries a forget erased ([id, text]) and the texts written.
 */
export async function offlineChanges(m, { seed, tag, n, base, parity, cross = 0 }) {
  const rand = seededRandom(seed);
  const ofBase = (p) => (valid) => valid.filter((e) => e.content.startsWith(tag) || base.indexOf(e.id) % 2 === p);
  const pool = ofBase(parity);
  const gone = new Map();
  const texts = [];
  const undoable = [];
  const pick = (list) => list[Math.floor(rand() * list.length)];
  for (let i = 0; i < n; i++) {
    const valid = await m.memories(null);
    const mine = pool(valid);
    const r = rand();
    if (r < 0.4 || mine.length === 0) {
      const content = text(rand, tag);
      texts.push(content);
      await m.remember({ content });
    } else if (r < 0.65) {
      const content = text(rand, tag);
      texts.push(content);
      undoable.push((await m.supersede({ content }, [pick(mine).id])).id);
    } else if (r < 0.8 && undoable.some((id) => valid.some((e) => e.id === id))) {
      await m.undo(pick(undoable.filter((u) => valid.some((e) => e.id === u))));
    } else {
      const before = (await view(m)).entries;
      const other = rand() < cross ? ofBase(1 - parity)(valid).filter((e) => !e.content.startsWith(tag)) : [];
      if (!(await m.forget(pick(other.length ? other : mine).id))) throw new Error("a forget of a held memory found nothing");
      const after = (await view(m)).entries;
      for (const [id, e] of before) if (!after.has(id)) gone.set(id, e.content);
    }
  }
  return { gone: [...gone], texts };
}
