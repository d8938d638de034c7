// Headless Debian Chromium driven by playwright-core (no browser download),
// with the flags this sandbox needs: no background networking, no sandbox as root.
import { chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];
const OPTIONS = { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS };

export function launchChromium() {
  return chromium.launch(OPTIONS);
}

/** A browser context whose profile (and so its storage and quota) lives in `userDataDir`. */
export function launchChromiumIn(userDataDir) {
  return chromium.launchPersistentContext(userDataDir, OPTIONS);
}

/** Opens `url` in a fresh page and resolves to `window[name]` once the page sets it. */
export async function runPage(browser, url, name, timeoutMs = 300_000) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url);
  try {
    await page.waitForFunction((n) => window[n] !== undefined, name, { timeout: timeoutMs, polling: 100 });
  } catch (err) {
    throw new Error(`${url}: ${err.message}${errors.length ? `\npage errors:\n${errors.join("\n")}` : ""}`);
  }
  const value = await page.evaluate((n) => window[n], name);
  await page.close();
  return value;
}
