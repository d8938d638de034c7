// The demo chat app (www/) driven as a person would, in headless Chromium:
// chat in English and Chinese, end the session, reload, find the facts in
// the memory panel and in the next turn's context, undo a supersede,
// search with explain, export -> purge -> import, a second tab seeing the
// first one's memories, keyboard-only use, and an axe-core accessibility
// check; the offline model answering from the whole context it is sent,
// in the same session and in a new one, saying which memory it used; the
// inspector's turns and an ended session's marker surviving a reload, each
// recalled memory explained in a sentence, a favicon (no 404), and the
// session buttons on one line; and two browser profiles as two devices
// syncing through examples/cloudflare's relay in wrangler dev (a wrong
// token's 401 in the status, a passphrase sealing what travels).
// Screenshots go to a temporary folder, or to docs/screenshots with
// UPDATE_SCREENSHOTS=1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../../scripts/static-server.mjs";
import { launchChromium } from "../../scripts/chromium.mjs";
import { installExample } from "../../scripts/example.mjs";
import { startWorker } from "../../scripts/wrangler.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const shots = process.env.UPDATE_SCREENSHOTS ? join(root, "docs/screenshots") : mkdtempSync(join(tmpdir(), "demo-shots-"));
let server, base, browser;

before(async () => {
  // The page as `scripts/demo.sh` serves it: www/ with the built package in www/pkg.
  const site = mkdtempSync(join(tmpdir(), "demo-site-"));
  cpSync(join(root, "www"), site, { recursive: true, filter: (p) => !p.includes(`${join(root, "www", "pkg")}`) });
  cpSync(join(root, "pkg"), join(site, "pkg"), { recursive: true });
  ({ server, url: base } = await startServer(site, 0));
  browser = await launchChromium();
  mkdirSync(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

// What went wrong while a page loaded and ran: failed requests (a missing
// favicon is a 404) and console errors.
const problems = new WeakMap();

async function open(context, viewport = { width: 1280, height: 860 }) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  page.on("dialog", (d) => d.accept());
  const seen = [];
  problems.set(page, seen);
  page.on("response", (r) => { if (r.status() >= 400) seen.push(`${r.status()} ${r.url()}`); });
  page.on("requestfailed", (r) => seen.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
  page.on("console", (m) => { if (m.type() === "error") seen.push(`console: ${m.text()}`); });
  await page.goto(base);
  await page.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 60_000 });
  return page;
}

/** Sends a message and waits for the reply. */
async function say(page, text) {
  const before = await page.locator("#log li").count();
  await page.fill("#input", text);
  await page.press("#input", "Enter");
  await page.waitForFunction((n) => document.querySelectorAll("#log li").length >= n + 2, before, { timeout: 30_000 });
}

async function progress(page, pattern) {
  await page.waitForFunction((p) => new RegExp(p).test(document.getElementById("progress").textContent), pattern.source, { timeout: 30_000 });
  return page.textContent("#progress");
}

/** axe-core's serious and critical violations on the page as it is. */
async function seriousViolations(page) {
  await page.addScriptTag({ path: join(root, "node_modules/axe-core/axe.min.js") });
  const results = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
  return results.violations.filter((v) => ["serious", "critical"].includes(v.impact)).map((v) => `${v.id}: ${v.nodes.length}`);
}

/** "Compress now" and "End session": on one line, each label on one line. */
async function actionsOnOneLine(page) {
  const [compress, end, single] = await Promise.all(["#compress", "#end-session", "#new-session"].map((s) => page.locator(s).boundingBox()));
  assert.ok(Math.abs(compress.y - end.y) < 1, `the buttons' tops: ${compress.y} and ${end.y}`);
  for (const b of [compress, end]) assert.ok(b.height < single.height * 1.3, `a button of ${b.height}px against a one-line ${single.height}px`);
}

const memoryTexts = (page) => page.$$eval("#memory-list .memory > div:first-child", (l) => l.map((x) => x.textContent));

test("a person chats, ends the session, reloads, and the demo remembers", async () => {
  const context = await browser.newContext();
  const page = await open(context);
  const english = [
    "Hi! My name is Ada and I work as a nurse at the Lisbon general hospital.",
    "I live in Lisbon with my partner.",
    "I adopted a puppy named Rex last week, he is a beagle.",
    "I prefer tea over coffee in the morning.",
    "What do you think about the weather today?",
    "I'm training for a half marathon in October.",
    "My sister Ana is visiting next month.",
    "I play the violin in a small quartet on weekends.",
    "Thanks for listening!",
    "What is my dog's name?",
  ];
  for (const t of english) await say(page, t);
  // Asserted at the end: "dog" is said nowhere, so the answer waits on the
  // search bridging it to "puppy" and "beagle"; the rest does not.
  const dogReply = await page.locator("#log li").last().textContent();
  const chinese = ["我喜欢喝乌龙茶，每天早上都喝。", "我在学做川菜，周末练习麻婆豆腐。", "我对花粉过敏。", "我下个月要去云南大理旅行。", "你觉得呢？"];
  for (const t of chinese) await say(page, t);
  // The demo redacts: the address never reaches storage or the model.
  await say(page, "You can write to me at ada@example.com.");
  await page.screenshot({ path: join(shots, "chat.png") });

  // The inspector shows the exact budget of each turn.
  const inspector = await page.textContent("#context-view");
  assert.match(inspector, /Budget: \d+ of \d+ tokens \(o200k, exact\)/);

  await page.click("#end-session");
  const ended = await progress(page, /Session end:/);
  assert.match(ended, /Session end: \d+ added/);
  assert.ok(Number(/(\d+) added/.exec(ended)[1]) >= 8, ended);

  // Reload: the facts are in the memory panel and in the next turn's context.
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === "true");
  assert.equal(await page.locator("#log li").count(), 32, "the history survives the reload");
  assert.match(await page.textContent("#log"), /\[EMAIL\]/);
  const stored = await page.evaluate(async () => {
    const texts = [];
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((ok, fail) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
      for (const store of db.objectStoreNames) {
        const all = await new Promise((ok) => { const r = db.transaction(store).objectStore(store).getAll(); r.onsuccess = () => ok(r.result); });
        texts.push(...all.map((v) => JSON.stringify(v)));
      }
      db.close();
    }
    return texts;
  });
  assert.ok(stored.length > 30 && !stored.some((t) => t.includes("ada@example.com")), "the address was stored");
  await page.click("#tab-memory");
  const facts = await memoryTexts(page);
  assert.ok(facts.some((f) => /User's name is Ada/.test(f)), JSON.stringify(facts));
  assert.ok(facts.some((f) => /乌龙茶/.test(f)), JSON.stringify(facts));
  assert.match(await page.textContent("#last-end"), /judged by <?b?>?rules|judged by llm/);
  await page.screenshot({ path: join(shots, "memory.png") });
  await page.click("#tab-context");
  await say(page, "Which hospital do I work at?");
  const context2 = await page.textContent("#context-view");
  assert.match(context2, /Long-term memory: [1-9]\d*/, "the block carries memories now");
  assert.match(context2, /nurse at the Lisbon general hospital/);
  await page.screenshot({ path: join(shots, "inspector.png") });

  // A supersede, then undo.
  await say(page, "I now live in Porto with my partner.");
  await page.click("#end-session");
  await progress(page, /Session end:/);
  await page.click("#tab-memory");
  let texts = await memoryTexts(page);
  assert.ok(texts.some((t) => /Porto/.test(t)) && !texts.some((t) => /lives in Lisbon/.test(t)), JSON.stringify(texts));
  assert.match(await page.locator(".memory", { hasText: "Porto" }).first().textContent(), /state since \d{4}-\d{2}-\d{2}/, "a state says since when");
  await page.locator(".memory", { hasText: "Porto" }).getByRole("button", { name: "Undo" }).click();
  await page.waitForFunction(() => /lives in Lisbon/.test(document.getElementById("memory-list").textContent));
  texts = await memoryTexts(page);
  assert.ok(!texts.some((t) => /Porto/.test(t)), "undo restored Lisbon and expired Porto");

  // Search with explain.
  await page.fill("#search-input", "puppy");
  await page.click("#search-form button");
  await page.waitForSelector("#search-results table");
  assert.match(await page.textContent("#search-results"), /Rex/);
  assert.match(await page.textContent("#search-results table thead"), /coverage/);

  // Export -> purge -> import.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
  const exported = JSON.parse(readFileSync(await download.path(), "utf8"));
  assert.equal(exported.format, "agent-memory");
  const count = (await memoryTexts(page)).length;
  await page.click("#purge");
  await progress(page, /Purged/);
  assert.equal((await memoryTexts(page)).length, 0);
  await page.setInputFiles("#import", await download.path());
  await progress(page, /Imported/);
  assert.equal((await memoryTexts(page)).length, count);

  await page.click("#tab-dashboard");
  await page.waitForSelector("#dashboard svg");
  assert.match(await page.textContent("#dashboard"), /Memories by kind/);
  assert.match(await page.textContent("#dashboard"), /buildContext: median/);
  await page.screenshot({ path: join(shots, "dashboard.png") });

  // A phone.
  const phone = await open(context, { width: 390, height: 844 });
  await phone.screenshot({ path: join(shots, "phone.png"), fullPage: true });
  await context.close();
  assert.match(dogReply, /Rex/, "the reply recalls what was said (\"dog\" bridged to \"puppy\", \"beagle\")");
});

test("the offline model answers from the whole context, in this session and the next, and says which memory", async (t) => {
  const context = await browser.newContext();
  const page = await open(context);
  const last = () => page.locator("#log li.assistant").last().textContent();
  const ask = async (text) => { await say(page, text); return last(); };
  try {
    await say(page, "I have a golden retriever called Biscuit");
    await say(page, "My favourite food is dumplings.");
    await say(page, "我对花粉过敏。");
    const unknown = await ask("What car do I drive?");
    const allergy = await ask("我对什么过敏？");
    const dog = await ask("What's my dog's name?");
    const retriever = await ask("What is my golden retriever called?");

    await page.click("#end-session");
    assert.match(await progress(page, /Session end:/), /Session end: [1-9]\d* added/);
    await page.click("#new-session");
    await page.waitForFunction(() => document.querySelectorAll("#session-select option").length === 2);
    assert.equal(await page.locator("#log li").count(), 0, "a new session starts empty");
    const allergyNext = await ask("我对什么过敏？");
    const dogNext = await ask("What's my dog's name?");
    const retrieverNext = await ask("What is my golden retriever called?");
    const sent = (await page.textContent("#context-view")).replace(/\s+/g, " ");

    await t.test("a question nothing in the context answers gets no unrelated fact", () => {
      assert.match(unknown, /don't know/);
      assert.doesNotMatch(unknown, /Biscuit|dumplings|花粉/);
    });
    await t.test("a Chinese question is answered in Chinese, quoting the memory it used", () => {
      assert.match(allergy, /我记得：“我对花粉过敏。”——来自你在本次对话中说过的话/);
      assert.match(allergyNext, /花粉/);
      assert.match(allergyNext, /来自长期记忆中的用户档案|来自 \d{4}-\d{2}-\d{2} 的对话/);
    });
    await t.test("the next session's context carries the fact the reply has to come from", () => {
      assert.match(sent, /<memory> User profile: (- [^<]*)?- User has a golden retriever called Biscuit [^<]*<\/memory>/);
    });
    await t.test("a question in the fact's own words is answered from the window, then from long-term memory", () => {
      assert.match(retriever, /I remember: "I have a golden retriever called Biscuit" \(from what you said earlier in this chat\)/);
      assert.match(retrieverNext, /I remember: "(User has|I have) a golden retriever called Biscuit" \((from your profile in long-term memory|from our conversation on \d{4}-\d{2}-\d{2})\)/);
    });
    // "dog" is said nowhere: these wait on the library's search bridging it
    // to "golden retriever" (the model ranks the context with that search).
    await t.test("\"What's my dog's name?\" is answered with Biscuit in the same session", () => {
      assert.match(dog, /Biscuit/);
      assert.match(dog, /golden retriever called Biscuit"? \(from what you said earlier in this chat\)/, "it says which memory it used");
      assert.doesNotMatch(dog, /dumplings/);
    });
    await t.test("\"What's my dog's name?\" is answered with Biscuit in a new session", () => {
      assert.match(dogNext, /Biscuit/);
      assert.match(dogNext, /golden retriever called Biscuit"? \((from your profile in long-term memory|from our conversation on \d{4}-\d{2}-\d{2})\)/, "it says which memory it used");
      assert.doesNotMatch(dogNext, /dumplings/);
    });
  } finally {
    await context.close();
  }
});

test("a second tab sees the first one's new memories without a reload", async () => {
  const context = await browser.newContext();
  const a = await open(context);
  const b = await open(context);
  await b.click("#tab-memory");
  await say(a, "I keep three beehives on my roof in Lyon.");
  await a.click("#end-session");
  await progress(a, /Session end:/);
  await b.waitForFunction(() => /beehives/.test(document.getElementById("memory-list").textContent), null, { timeout: 15_000 });
  await context.close();
});

test("sessions: new, switch, delete; keyboard only; no accessibility violations", async () => {
  const context = await browser.newContext();
  const page = await open(context);
  // Keyboard only: Tab to the message box, type, Enter; arrows move between panels.
  await page.focus("#session-select");
  for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement.id)) !== "input"; i++) await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "input", "the message box is reachable by Tab");
  await page.keyboard.type("I collect vintage fountain pens.");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll("#log li").length >= 2);
  await page.focus("#tab-context");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.evaluate(() => document.activeElement.id), "tab-memory");
  assert.equal(await page.isVisible("#panel-memory"), true);

  await page.click("#new-session");
  await page.waitForFunction(() => document.querySelectorAll("#session-select option").length === 2);
  assert.equal(await page.locator("#log li").count(), 0, "a new session starts empty");
  await say(page, "This is the second chat.");
  await page.selectOption("#session-select", "chat-1");
  await page.waitForFunction(() => /fountain pens/.test(document.getElementById("log").textContent));
  await page.click("#delete-session");
  await progress(page, /Deleted session chat-1/);
  assert.equal(await page.locator("#session-select option").count(), 1);
  assert.match(await page.textContent("#log"), /second chat/);

  assert.deepEqual(await seriousViolations(page), []);
  await context.close();
});

test("the inspector and an ended session survive a reload; recalls read as sentences; a favicon; the actions on one line", async () => {
  const context = await browser.newContext();
  const page = await open(context);
  try {
    assert.match(await page.getAttribute('link[rel="icon"]', "href"), /^data:image\/svg\+xml,/);
    await say(page, "I have a golden retriever called Biscuit");
    await say(page, "What's my dog's name?");
    assert.equal(await page.locator("#turn-select option").count(), 2);
    // Each recalled memory in words, from its `explain` and the analyzer;
    // the numbers still there, folded.
    const biscuit = page.locator("#context-view .recalled li", { hasText: "golden retriever called Biscuit" }).first();
    const why = (await biscuit.locator(".why").textContent()).replace(/\s+/g, " ");
    assert.match(why, /Matched “dog” through “retriever” \(both about pets\)/, why);
    assert.match(why, /about \d+% of what the question asks/, why);
    assert.match(why, /Something you said in this chat, written (just|\d+ \w+) before this turn\./, why);
    assert.match(await biscuit.locator("details").textContent(), /score\s*\d\.\d{3}.*bm25\s*\d+\.\d\d.*coverage/s);
    const inspected = await page.textContent("#context-view");

    assert.equal(await page.isVisible("#session-state"), false, "a session in progress has no marker");
    await page.click("#end-session");
    await progress(page, /Session end:/);
    const marker = /Session ended .*its memories were extracted/;
    assert.match(await page.textContent("#session-state"), marker);
    assert.match(await page.textContent("#session-select option:checked"), /\(ended\)$/);
    // The status is showing: the two buttons stay on one line, wide and narrow.
    await actionsOnOneLine(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await actionsOnOneLine(page);
    await page.setViewportSize({ width: 1280, height: 860 });

    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 60_000 });
    assert.equal(await page.locator("#turn-select option").count(), 2, "the inspector's turns survive the reload");
    assert.equal(await page.textContent("#context-view"), inspected, "the last turn's inspector, as it was");
    await page.selectOption("#turn-select", "0");
    assert.match(await page.textContent("#context-view"), /Budget: \d+ of \d+ tokens/);
    assert.match(await page.textContent("#context-view"), /I have a golden retriever called Biscuit/);
    assert.equal(await page.isVisible("#session-state"), true, "the ended marker survives the reload");
    assert.match(await page.textContent("#session-state"), marker);
    assert.match(await page.textContent("#session-select option:checked"), /\(ended\)$/);
    assert.deepEqual(await seriousViolations(page), []);

    // Talking again continues the session: the marker says so.
    await say(page, "I also have a cat.");
    assert.match(await page.textContent("#session-state"), /then continued/);
    assert.match(await page.textContent("#session-select option:checked"), /\(ended, then continued\)$/);
    assert.equal(await page.locator("#turn-select option").count(), 3);
    assert.deepEqual(problems.get(page), [], "no failed request (a favicon included) and no console error");
  } finally {
    await context.close();
  }
});

test("settings switch the demo to an OpenAI-compatible endpoint, with embeddings", async () => {
  const { startLlmServer } = await import("../../scripts/llm-server.mjs");
  const llm = await startLlmServer();
  const context = await browser.newContext();
  await context.addInitScript((settings) => {
    localStorage.setItem("agent-memory-demo/settings", JSON.stringify(settings));
  }, { llmUrl: llm.endpoint, llmModel: "scripted-1", embedUrl: llm.embeddingsEndpoint, embedModel: "scripted-embed" });
  try {
    const page = await open(context);
    assert.match(await page.textContent("#model-name"), /Model: scripted-1/);
    await say(page, "I adopted a puppy named Rex last week.");
    await say(page, "I now prefer green tea in the morning.");
    const chat = llm.requests.filter((r) => r.body.messages && !r.body.response_format);
    assert.ok(chat.length >= 2, "the replies came from the endpoint");
    assert.equal(chat[0].body.model, "scripted-1");
    assert.match(chat[0].body.messages[0].content, /You are a helpful assistant/);
    await page.click("#end-session");
    assert.match(await progress(page, /Session end:/), /\(llm\)/, "the endpoint judged");
    const embedded = llm.requests.filter((r) => r.body.input);
    assert.ok(embedded.length >= 1 && embedded.every((r) => r.body.model === "scripted-embed"), "memories were embedded");
    // "dog" shares no word with the memory: the scripted vectors find it.
    await page.click("#tab-memory");
    await page.fill("#search-input", "my dog");
    await page.click("#search-form button");
    await page.waitForSelector("#search-results table");
    assert.match(await page.textContent("#search-results"), /puppy named Rex/);
  } finally {
    await context.close();
    await llm.close();
  }
});

// The relay's token check (examples/cloudflare): the user id and its HMAC under SYNC_SECRET.
const secret = randomBytes(16).toString("hex");
const token = (user) => `${user}.${createHmac("sha256", secret).update(user).digest("hex")}`;

/** Saves the Settings dialog's Sync section, as a person would (no reload). */
async function setSync(page, { url, token, passphrase = "" }) {
  await page.click("#open-settings");
  await page.fill("#sync-url", url);
  await page.fill("#sync-token", token);
  await page.fill("#sync-passphrase", passphrase);
  await page.click("#save-settings");
}

/** Waits for the sync status to match; its text. */
async function syncStatus(page, pattern) {
  await page.waitForFunction((p) => new RegExp(p).test(document.getElementById("sync-status").textContent), pattern.source, { timeout: 30_000 });
  return page.textContent("#sync-status");
}

/** Waits for the status's counts to reach `least` ({ sent, received }); its text. */
async function syncedAtLeast(page, least) {
  await page.waitForFunction(({ sent = 0, received = 0 }) => {
    const counts = /(\d+) sent, (\d+) received/.exec(document.getElementById("sync-status").textContent);
    return counts && Number(counts[1]) >= sent && Number(counts[2]) >= received;
  }, least, { timeout: 30_000 });
  return page.textContent("#sync-status");
}
const sentSoFar = async (page) => Number(/(\d+) sent/.exec(await page.textContent("#sync-status"))[1]);
const logHas = (page, text) => page.waitForFunction((t) => document.getElementById("log").textContent.includes(t), text, { timeout: 30_000 });

test("two browser profiles are two devices through the relay: memories and Chat 1 travel both ways, a chat started on one is listed on the other; a wrong token is a 401 in the status; a passphrase seals", { timeout: 300_000 }, async (t) => {
  const app = installExample("cloudflare");
  const worker = await startWorker(app, mkdtempSync(join(tmpdir(), "relay-")), { SYNC_SECRET: secret, SYNC_ORIGINS: new URL(base).origin });
  const relay = `${worker.url}/sync`;
  const contexts = [];
  // A context of its own for each: separate storage, as another browser profile has.
  const device = async () => {
    const context = await browser.newContext();
    contexts.push(context);
    return open(context);
  };
  try {
    await t.test("a device syncs what it remembers, and a second one sees it without a reload", async () => {
      const a = await device();
      assert.equal(await a.textContent("#sync-status"), "Sync off");
      assert.equal(await a.isVisible("#sync-now"), false, "no relay, no Sync now");
      await a.click("#open-settings");
      assert.match(await a.textContent("#settings"), /another browser profile.*second device/s);
      assert.deepEqual(await seriousViolations(a), [], "the Settings dialog with its Sync section");
      await a.click("#settings button[value=cancel]");
      await setSync(a, { url: relay, token: token("dana") });
      await syncStatus(a, /^Synced at .+: \d+ sent, \d+ received$/);
      await say(a, "I have a golden retriever called Biscuit");
      await a.click("#end-session");
      await progress(a, /Session end: [1-9]\d* added/);
      await a.click("#sync-now");
      await progress(a, /^Synced: \d+ sent, \d+ received\.$/);
      // The two messages and the memory at least.
      await syncedAtLeast(a, { sent: 3 });

      const b = await device();
      assert.equal(await b.textContent("#sync-status"), "Sync off");
      await b.click("#tab-memory");
      await b.evaluate(() => { window.sameDocument = true; });
      await setSync(b, { url: relay, token: token("dana") });
      await b.waitForFunction(() => /golden retriever called Biscuit/.test(document.getElementById("memory-list").textContent), null, { timeout: 30_000 });
      await logHas(b, "I have a golden retriever called Biscuit");
      assert.equal(await b.evaluate(() => window.sameDocument), true, "no reload");
      await syncedAtLeast(b, { received: 3 });
      await b.screenshot({ path: join(shots, "second-device.png") });

      // B talks; A's Sync now brings it.
      const before = await sentSoFar(b);
      await say(b, "My cat is called Tom.");
      await b.click("#sync-now");
      await syncedAtLeast(b, { sent: before + 2 });
      await a.click("#sync-now");
      await logHas(a, "My cat is called Tom.");
      await syncedAtLeast(a, { received: 2 });

      // A chat A starts joins B's list, titled by its first message (B never knew its id).
      await a.click("#new-session");
      await a.waitForFunction(() => document.querySelectorAll("#session-select option").length === 2);
      await say(a, "Planning a trip to Porto in October.");
      // Both sync every 5 s: B's list gains it within a few rounds.
      await a.click("#sync-now");
      await b.waitForFunction(() => [...document.querySelectorAll("#session-select option")].some((o) => o.textContent === "Planning a trip to Porto in Oc"), null, { timeout: 30_000 });
      const porto = await b.evaluate(() => [...document.querySelectorAll("#session-select option")].find((o) => /Porto/.test(o.textContent)).value);
      await b.selectOption("#session-select", porto);
      await logHas(b, "Planning a trip to Porto in October.");
      assert.doesNotMatch(await b.textContent("#log"), /cat is called Tom/, "the other chat's messages stay in it");
      assert.deepEqual(await seriousViolations(b), []);
      for (const page of [a, b]) assert.deepEqual(problems.get(page), [], "no failed request and no console error");
    });

    await t.test("a wrong token: the relay's 401 in the status, no console error, the chat goes on", async () => {
      const c = await device();
      await setSync(c, { url: relay, token: `dana.${"0".repeat(64)}` });
      assert.match(await syncStatus(c, /^Sync failed at /), /401.*not authorized to sync/);
      await c.click("#sync-now");
      assert.match(await progress(c, /SYNC_TRANSPORT/), /401/);
      await say(c, "Still here.");
      // Chromium logs each 4xx response itself, whatever the page does with it.
      const refused = [`401 ${relay}`, "console: Failed to load resource: the server responded with a status of 401 (Unauthorized)"];
      assert.deepEqual(problems.get(c).filter((p) => !refused.includes(p)), [], "nothing but the relay's refusals");
    });

    await t.test("with a passphrase what travels is sealed: a device without it rejects it, with it reads it", async () => {
      const passphrase = "correct horse battery staple";
      const d = await device();
      await setSync(d, { url: relay, token: token("erin"), passphrase });
      await syncStatus(d, /^Synced at /);
      await say(d, "I play the cello on Sundays.");
      await d.click("#sync-now");
      await syncedAtLeast(d, { sent: 2 });
      const e = await device();
      await setSync(e, { url: relay, token: token("erin") });
      assert.match(await syncStatus(e, /rejected/), /0 received, [1-9]\d* rejected \(another passphrase\?\)/);
      assert.doesNotMatch(await e.textContent("#log"), /cello/);
      await setSync(e, { url: relay, token: token("erin"), passphrase });
      await logHas(e, "I play the cello on Sundays.");
      for (const page of [d, e]) assert.deepEqual(problems.get(page), []);
    });
  } finally {
    for (const context of contexts) await context.close();
    await worker.stop();
  }
});
