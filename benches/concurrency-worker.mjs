// The dedicated Worker writer of `npm run bench:concurrency`, started by
// benches/concurrency-page.html: runs each posted command of
// benches/concurrency-work.mjs on IndexedDB and posts the answer back (same `id`).
import init, { Memory } from "/pkg/index.js";
import { writerAgent } from "/benches/concurrency-work.mjs";

const ready = init();
const agent = writerAgent(Memory, async () => ({ store: "indexeddb", close: async () => {} }));
let queue = Promise.resolve();
self.onmessage = ({ data }) => {
  queue = queue.then(async () => {
    await ready;
    self.postMessage({ id: data.id, ...(await agent(data)) });
  });
};
