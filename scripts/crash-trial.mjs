// Crash trials in real Chromium, for tests/node/crash.test.mjs (a handful)
// and benches/reliability.mjs (hundreds). One trial: a page writes to
// IndexedDB (messages, single and batched memories, session ends) and
// reports each write once its promise resolved; at a random moment the page
// is closed (IndexedDB aborts its open transactions) or the browser process
// is killed with SIGKILL; a new browser on the same profile reopens the
// namespace. Every acknowledged write must be there, no record damaged, no
// message twice, and no work left owed once the reopened memory is idle.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { launchChromiumIn, runPage, CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.mjs";
import { startServer } from "./static-server.mjs";
import { seededRandom } from "./random.mjs";

const root = new URL("..", import.meta.url).pathname;

/** Chromium as a child process on `profile`, driven over CDP: { browser, kill }. */
async function launchKillable(profile) {
  // Its own process group: Chromium's renderers and its storage service are
  // children of the browser process and outlive it when only that one is
  // killed. A relaunch on the profile while the old storage service still
  // held its IndexedDB files once opened an empty namespace (a CI run, seed
  // 7): the harness's fault, not the page's, and no crash a user has (the OS
  // or a crash takes every process). So each stop takes the whole group and
  // waits until none of it is left.
  const child = spawn(CHROMIUM_PATH, [...CHROMIUM_ARGS, "--headless=new", "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"],
    { stdio: ["ignore", "ignore", "pipe"], detached: true });
  const ws = await new Promise((ok, fail) => {
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      const m = /DevTools listening on (ws:\S+)/.exec(err);
      if (m) ok(m[1]);
    });
    child.once("exit", () => fail(new Error(`chromium exited: ${err}`)));
  });
  const browser = await chromium.connectOverCDP(ws);
  const exited = new Promise((ok) => child.once("exit", ok));
  const stopGroup = async (signal) => {
    const alive = () => {
      try {
        process.kill(-child.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      process.kill(-child.pid, signal);
    } catch {}
    await exited;
    // A zombie whose reaper never comes counts as alive: 10 s at most.
    for (let waited = 0; alive() && waited < 10_000; waited += 20) {
      if (waited === 5_000) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    browser,
    kill: () => stopGroup("SIGKILL"),
    close: async () => {
      await browser.close().catch(() => {});
      await stopGroup("SIGTERM");
    },
  };
}

/**
 * Runs `trials` trials; resolves to the totals:
 * { trials, byKill, acknowledged, lost, duplicates, damaged, owed, failures }.
 */
export async function crashTrials({ trials, seed = 1, onTrial = () => {} }) {
  const rand = seededRandom(seed);
  const profile = mkdtempSync(join(tmpdir(), "crash-profile-"));
  const { server, url } = await startServer(root, 0);
  const totals = { trials: 0, byKill: { closePage: 0, killBrowser: 0 }, acknowledged: { add: 0, remember: 0, endSession: 0 },
    lost: 0, duplicates: 0, damaged: 0, owed: 0, failures: [] };
  try {
    for (let t = 0; t < trials; t++) {
      const ns = `crash-${seed}-${t}`;
      const how = rand() < 0.5 ? "closePage" : "killBrowser";
      const acked = { add: [], remember: [], endSession: [] };
      const chrome = await launchKillable(profile);
      const page = await (chrome.browser.contexts()[0] ?? (await chrome.browser.newContext())).newPage();
      await page.exposeFunction("ack", (kind, id) => {
        acked[kind].push(id);
      });
      await page.goto(`${url}tests/browser/crash.html?phase=write&ns=${ns}&seed=${t + 1}`);
      await page.waitForFunction(() => window.__ready || window.__result, null, { polling: 20, timeout: 60_000 });
      await new Promise((r) => setTimeout(r, 50 + rand() * 1500));
      const writeError = await page.evaluate(() => window.__result?.error).catch(() => undefined);
      if (how === "closePage") {
        await page.close();
        await chrome.close();
      } else {
        await chrome.kill();
      }
      const context = await launchChromiumIn(profile);
      let found;
      try {
        found = await runPage(context, `${url}tests/browser/crash.html?phase=check&ns=${ns}`, "__result", 120_000);
      } finally {
        await context.close();
      }
      totals.trials++;
      totals.byKill[how]++;
      for (const k of Object.keys(acked)) totals.acknowledged[k] += acked[k].length;
      const trial = { trial: t, how, acked: acked.add.length + acked.remember.length + acked.endSession.length };
      if (writeError) totals.failures.push({ ...trial, error: `write: ${writeError}` });
      if (found.error) {
        totals.failures.push({ ...trial, error: found.error });
      } else {
        const messages = new Set(found.messages);
        const memories = new Set(found.memories);
        const lost = acked.add.filter((id) => !messages.has(id)).length + acked.remember.filter((id) => !memories.has(id)).length;
        totals.lost += lost;
        totals.duplicates += found.messages.length - messages.size + found.memories.length - memories.size;
        totals.damaged += found.damaged.length;
        totals.owed += found.owed;
        if (lost || found.damaged.length || found.owed) totals.failures.push({ ...trial, lost, damaged: found.damaged, owed: found.owedRecords });
      }
      onTrial(trial, totals);
    }
  } finally {
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return totals;
}
