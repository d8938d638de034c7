// Many tabs on one namespace in real Chromium, for tests/node/tabs.test.mjs
// and benches/reliability.mjs. TABS pages of one browser (one origin, so one
// IndexedDB and Web Locks across them) each write, all at once, 25 messages
// into a shared session and 25 into their own, 10 memories every tab
// remembers alike and 10 of their own; then all end the shared session at
// once. A fresh page then checks: every message once, the alike memories
// once, every tab's own memories, each shared message judged by exactly one
// session end, nothing owed, nothing damaged.
import { launchChromium } from "./chromium.mjs";
import { startServer } from "./static-server.mjs";

const root = new URL("..", import.meta.url).pathname;

/** `rounds` rounds of `tabs` tabs; resolves to totals { rounds, messages, memories, lost, duplicates, judgedTwice, owed, damaged, failures }. */
export async function manyTabs({ tabs = 4, rounds = 1, seed = 1 }) {
  const { server, url } = await startServer(root, 0);
  const browser = await launchChromium();
  const totals = { rounds: 0, tabs, messages: 0, memories: 0, lost: 0, duplicates: 0, judgedTwice: 0, owed: 0, damaged: 0, failures: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      const ns = `tabs-${seed}-${r}-${Date.now()}`;
      const context = await browser.newContext();
      const pages = await Promise.all(Array.from({ length: tabs + 1 }, () => context.newPage()));
      await Promise.all(pages.map(async (p, i) => {
        await p.goto(`${url}tests/browser/tabs.html?ns=${ns}&tab=${i}&seed=${seed + r}`);
        await p.waitForFunction(() => window.__ready, null, { polling: 20 });
      }));
      const writers = pages.slice(0, tabs);
      await Promise.all(writers.map((p) => p.evaluate(() => window.__write())));
      const reports = await Promise.all(writers.map((p) => p.evaluate(() => window.__end())));
      const found = await pages[tabs].evaluate((n) => window.__check(n), tabs);
      await context.close();

      const expectMessages = 25 * tabs * 2;
      const all = Object.values(found.sessions).flat();
      const lostMessages = found.sessions.shared.length < 25 * tabs ? 25 * tabs - new Set(found.sessions.shared).size : 0;
      const lostOwn = Object.entries(found.sessions).filter(([k]) => k !== "shared").reduce((n, [, v]) => n + Math.max(0, 25 - new Set(v).size), 0);
      // Alike memories once each, every tab's own: 10 + 10 per tab, plus facts the session ends extracted.
      const remembered = 10 + 10 * tabs;
      const judged = reports.reduce((n, rep) => n + rep.newMessages, 0);
      const round = {
        lost: lostMessages + lostOwn + Math.max(0, remembered - new Set(found.memories).size),
        duplicates: all.length - new Set(all).size + found.memories.length - new Set(found.memories).size,
        judgedTwice: Math.max(0, judged - 25 * tabs),
        owed: found.owed,
        damaged: found.damaged,
      };
      totals.rounds++;
      totals.messages += expectMessages;
      totals.memories += remembered;
      for (const k of ["lost", "duplicates", "judgedTwice", "owed", "damaged"]) totals[k] += round[k];
      if (judged !== 25 * tabs) round.judged = judged;
      if (Object.values(round).some((v) => v)) totals.failures.push({ round: r, ...round });
    }
  } finally {
    await browser.close();
    server.close();
  }
  return totals;
}
