// The demo chat app, built on the npm package as an app would use it: one
// `Memory` per open session on IndexedDB, exact o200k counts, the offline
// demo model (or any OpenAI-compatible endpoint) through the `llm` hook,
// panels for what was sent, what is remembered, and how it is going, and,
// with a relay set, every memory synced with the user's other devices.
import init, { Memory, loadTokenizer } from "./pkg/index.js";
import { httpTransport } from "./pkg/sync/http.js";
import { offlineModel, offlineReply } from "./offline-model.js";
import { bars, esc, line } from "./charts.js";
import { appendTurn, bound, deleteTurns, loadTurns } from "./turn-store.js";
import { numbers, whySentence } from "./why.js";

const NAMESPACE = "demo-user";
const SYSTEM = "You are a helpful assistant. Use what you remember about the user when it helps.";
const KEY = (name) => `agent-memory-demo/${name}`;
const $ = (id) => document.getElementById(id);

const saved = (name, fallback) => {
  try {
    return JSON.parse(localStorage.getItem(KEY(name))) ?? fallback;
  } catch {
    return fallback;
  }
};
const save = (name, value) => localStorage.setItem(KEY(name), JSON.stringify(value));

const state = {
  memory: null,
  tokenizer: null,
  sessions: saved("sessions", []),
  current: saved("current", null),
  settings: saved("settings", {}),
  turns: [], // what each turn sent, for the inspector (kept in IndexedDB per session)
  latency: { add: [], buildContext: [], search: [], endSession: [] },
  busy: false,
  transport: null, // to the relay, when one is set
  received: 0, // items the open memory's syncs received, as last rendered
};
// Between scheduled syncs: short, so a second device shows news within seconds.
const SYNC_INTERVAL_MS = 5000;
// The schedule has no hook: while a relay is set, its outcome is read this often.
const SYNC_POLL_MS = 2000;
// The sessions' messages too: Chat 1 goes on on another device.
const SYNC = { sessions: true };
const channel = "BroadcastChannel" in globalThis ? new BroadcastChannel("agent-memory-demo") : null;

async function timed(op, promise) {
  const t0 = performance.now();
  try {
    return await promise;
  } finally {
    state.latency[op].push(performance.now() - t0);
  }
}

function status(text) {
  $("progress").textContent = text;
}

// ---- the model ----

function llmOption() {
  const s = state.settings;
  if (!s.llmUrl) return offlineModel;
  return { endpoint: s.llmUrl, model: s.llmModel || "default", headers: s.llmKey ? { authorization: `Bearer ${s.llmKey}` } : {} };
}

function embedOptions() {
  const s = state.settings;
  return s.embedUrl ? { embed: { endpoint: s.embedUrl, model: s.embedModel || "default", headers: s.llmKey ? { authorization: `Bearer ${s.llmKey}` } : {} } } : {};
}

async function reply(text, messages) {
  const s = state.settings;
  if (!s.llmUrl) return offlineReply(text, messages);
  const res = await fetch(s.llmUrl, {
    method: "POST",
    headers: { "content-type": "application/json", ...(s.llmKey ? { authorization: `Bearer ${s.llmKey}` } : {}) },
    body: JSON.stringify({ model: s.llmModel || "default", messages }),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status} from the model`);
  return (await res.json()).choices?.[0]?.message?.content ?? "";
}

// ---- sync ----

/** `Memory.open`'s `sync`, and the transport "Sync now" uses. */
function syncOption() {
  const { syncUrl, syncToken } = state.settings;
  state.transport = syncUrl ? httpTransport(syncUrl, { headers: () => ({ authorization: `Bearer ${syncToken ?? ""}` }) }) : null;
  return state.transport ? { sync: { transport: state.transport, ...SYNC, intervalMs: SYNC_INTERVAL_MS } } : {};
}

let derived = { passphrase: null, key: null };

/** `encryption` from the passphrase, derived once per passphrase (PBKDF2 is slow on purpose). */
async function encryptionOption() {
  const passphrase = state.settings.syncPassphrase;
  if (!passphrase) return {};
  if (derived.passphrase !== passphrase) {
    const text = new TextEncoder();
    const base = await crypto.subtle.importKey("raw", text.encode(passphrase), "PBKDF2", false, ["deriveKey"]);
    // Every device derives the same key from the passphrase alone, so the
    // salt is fixed (this app's and namespace's) rather than random.
    const salt = text.encode(`agent-memory-demo/${NAMESPACE}`);
    const key = await crypto.subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt, iterations: 600_000 }, base, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    derived = { passphrase, key };
  }
  // What this browser stored before the passphrase was set is sealed too.
  return { encryption: { key: derived.key, migrate: true } };
}

const clock = (ms) => new Date(ms).toLocaleTimeString(undefined, { timeStyle: "short" });

function syncText(s) {
  if (!state.transport) return "Sync off";
  if (!s) return "Sync on: first sync…";
  const counts = `${s.sent} sent, ${s.received} received${s.rejected ? `, ${s.rejected} rejected (another passphrase?)` : ""}`;
  return s.lastError ? `Sync failed at ${clock(s.lastAt)} (${counts}): ${s.lastError}` : `Synced at ${clock(s.lastAt)}: ${counts}`;
}

/** The sync status; the log and the panels again when a sync brought something. */
async function refreshSync() {
  const m = state.memory;
  if (!m) return;
  try {
    const s = state.transport ? (await m.stats()).sync : undefined;
    if (m !== state.memory) return;
    const text = syncText(s);
    // Unchanged, the live region says nothing again.
    if ($("sync-status").textContent !== text) $("sync-status").textContent = text;
    if (s && s.received > state.received) {
      state.received = s.received;
      await mergeSessions(m);
      await renderLog();
      await refreshPanels();
      channel?.postMessage("changed");
    }
  } catch (err) {
    // Closed under the read: a session is opening, and renders itself.
    if (!["CLOSED", "FREED"].includes(err.code)) throw err;
  }
}

async function syncNow() {
  const r = await state.memory.sync(state.transport, SYNC);
  status(`Synced: ${r.sent} sent, ${r.received} received${r.rejected ? `, ${r.rejected} rejected` : ""}.`);
  await refreshSync();
}

let polling = null;

/** A read on the timer, unless the last one is still going: reads do not pile up on a slow store. */
function pollSync() {
  if (state.transport && !polling) polling = refreshSync().finally(() => { polling = null; });
}

// ---- sessions ----

async function openSession(id) {
  // The old session's messages go at once, not when the new one's are read:
  // nothing on screen belongs to a session that is no longer open.
  $("log").innerHTML = "";
  // Closed, not only freed: a syncing memory's schedule runs until closed.
  // None is open until the next one is (its open may fail: a wrong passphrase).
  const old = state.memory;
  state.memory = null;
  await old?.close();
  old?.free();
  state.received = 0;
  state.memory = await Memory.open({
    namespace: NAMESPACE,
    sessionId: id,
    store: "indexeddb",
    llm: llmOption(),
    ...embedOptions(),
    budget: { contextWindow: 8000 },
    // E-mail addresses, phone, card and IBAN numbers and API keys never
    // reach storage, the model or the embedder: placeholders do.
    redact: true,
    maxTokens: 700,
    retainRecentRounds: 2,
    ...syncOption(),
    ...(await encryptionOption()),
  });
  state.memory.setTokenizer(state.tokenizer);
  $("sync-now").hidden = !state.transport;
  state.current = id;
  state.turns = await loadTurns(id);
  save("current", id);
  $("model-name").textContent = `Model: ${state.settings.llmUrl ? state.settings.llmModel || state.settings.llmUrl : "offline demo model"} · tokenizer: ${state.tokenizer.id}`;
  renderSessions();
  renderSessionState();
  await renderLog();
  renderContext();
  await refreshPanels();
  await refreshSync();
}

const when = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
const endedLabel = (s) => (s.endedAt ? (s.continued ? "ended, then continued" : "ended") : "");

function renderSessions() {
  const select = $("session-select");
  select.innerHTML = state.sessions
    .map((s) => `<option value="${esc(s.id)}"${s.id === state.current ? " selected" : ""}>${esc(s.title)}${s.endedAt ? ` (${endedLabel(s)})` : ""}</option>`)
    .join("");
}

/** The marker of an ended session, above its messages. */
function renderSessionState() {
  const s = state.sessions.find((x) => x.id === state.current);
  const box = $("session-state");
  box.hidden = !s?.endedAt;
  box.classList.toggle("continued", Boolean(s?.continued));
  box.innerHTML = s?.endedAt
    ? s.continued
      ? `<b>Session ended</b> ${esc(when(s.endedAt))}, then continued: end it again to remember the newer messages.`
      : `<b>Session ended</b> ${esc(when(s.endedAt))}: its memories were extracted. Sending a message continues it.`
    : "";
}

function markSession(changes) {
  const s = state.sessions.find((x) => x.id === state.current);
  if (!s) return;
  Object.assign(s, changes);
  save("sessions", state.sessions);
  renderSessions();
  renderSessionState();
}

/**
 * The chats in storage join the list: one another device started (synced
 * with the sessions) titled by its first message; one deleted on another
 * device, or left empty here, leaves it (the open one stays).
 */
async function mergeSessions(m) {
  const stored = await m.sessions();
  if (m !== state.memory) return;
  const held = new Set(stored.map((s) => s.sessionId));
  const kept = state.sessions.filter((s) => s.id === state.current || held.has(s.id));
  const known = new Set(kept.map((s) => s.id));
  const arrived = stored.filter((s) => !known.has(s.sessionId)).reverse();
  kept.push(...arrived.map((s) => ({ id: s.sessionId, title: s.preview?.slice(0, 30) || s.sessionId })));
  if (kept.length === state.sessions.length && arrived.length === 0) return;
  state.sessions = kept;
  save("sessions", kept);
  renderSessions();
}

// Unique across devices: two that sync never start one chat each under one id.
const chatId = () => `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

async function newSession() {
  const n = state.sessions.length + 1;
  const session = { id: chatId(), title: `Chat ${n}` };
  state.sessions.push(session);
  save("sessions", state.sessions);
  await openSession(session.id);
}

async function deleteSession() {
  const gone = state.current;
  if (!confirm("Delete this session's messages? Long-term memories drawn from it stay.")) return;
  const rest = state.sessions.filter((s) => s.id !== gone);
  if (!rest.length) rest.push({ id: chatId(), title: "New chat" });
  state.sessions = rest;
  save("sessions", rest);
  await openSession(rest[0].id);
  await deleteTurns(gone);
  const n = await state.memory.deleteSession(gone);
  status(`Deleted session ${gone} (${n} records).`);
}

// ---- chat ----

async function renderLog() {
  const history = await state.memory.sessionHistory();
  $("log").innerHTML = history
    .filter((e) => e.role === "user" || e.role === "assistant")
    .map((e) => `<li class="${e.role}"><span class="visually-hidden">${e.role}: </span>${esc(e.content)}</li>`)
    .join("");
  $("log").scrollTop = $("log").scrollHeight;
}

async function send(text) {
  const m = state.memory;
  // The message as stored, redacted: the inspector and the title keep
  // nothing the library did not.
  const said = (await timed("add", m.add({ role: "user", content: text }))).content;
  const at = Date.now();
  const session = state.sessions.find((s) => s.id === state.current);
  if (session && /^(Chat \d+|New chat)$/.test(session.title)) session.title = said.slice(0, 30);
  if (session?.endedAt) session.continued = true;
  markSession({});
  const ctx = await timed("buildContext", m.buildContext({ query: text, system: SYSTEM }));
  const recalled = await timed("search", m.search(text, { topK: 6 }));
  const answer = await reply(text, ctx.messages);
  await m.add({ role: "assistant", content: answer });
  const turn = { n: (state.turns.at(-1)?.n ?? state.turns.length) + 1, at, text: said, report: ctx.report, messages: ctx.messages, recalled };
  state.turns = bound([...state.turns, turn]);
  const sessionId = state.current;
  // Another tab on this session appends to the same list: show what is stored.
  await appendTurn(sessionId, turn).then((stored) => { if (state.current === sessionId && stored.length) state.turns = stored; }, () => {});
  await renderLog();
  renderContext(state.turns.length - 1);
  await refreshPanels();
  await refreshSync();
  channel?.postMessage("changed");
}

// ---- context inspector ----

const SECTIONS = [
  ["system", "System", "--system"],
  ["tools", "Tools", "--tools"],
  ["longTerm", "Long-term memory", "--longterm"],
  ["summary", "Summary", "--summary"],
  ["recentWindow", "Recent window", "--window"],
  ["free", "Free", "--free"],
];

function renderContext(index = state.turns.length - 1) {
  const select = $("turn-select");
  select.innerHTML = state.turns.map((t, i) => `<option value="${i}"${i === index ? " selected" : ""}>${t.n ?? i + 1}. ${esc(t.text.slice(0, 40))}</option>`).join("");
  const turn = state.turns[index];
  if (!turn) {
    $("context-view").innerHTML = `<p class="hint">Send a message: each turn shows what was sent to the model.</p>`;
    return;
  }
  const r = turn.report;
  const part = (key) => (key === "recentWindow" ? r.recentWindow + r.query : r[key]);
  const whole = SECTIONS.reduce((n, [k]) => n + part(k), 0) || 1;
  const bar = SECTIONS.map(([k, label, color]) => `<span style="width:${(part(k) / whole) * 100}%;background:var(${color})" title="${label}: ${part(k)} tokens"></span>`).join("");
  const legend = SECTIONS.map(([k, label, color]) => `<li><i style="background:var(${color})"></i>${label}: ${part(k)}</li>`).join("");
  const sent = turn.messages.map((msg) => `<div class="sent"><b>${esc(msg.role)}</b>\n${esc(msg.content ?? "")}</div>`).join("");
  const recalled = turn.recalled.length
    ? `<ol class="recalled">${turn.recalled
        .map((h) => `<li><q>${esc(h.text)}</q><p class="why">${esc(whySentence(h, turn, state.current))}</p><details><summary>The numbers</summary><dl>${numbers(h)
          .map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`)
          .join("")}</dl></details></li>`)
        .join("")}</ol>`
    : `<p class="hint">Nothing recalled for this turn.</p>`;
  $("context-view").innerHTML = `
    <h3>Budget: ${r.total} of ${r.limit} tokens (${esc(r.tokenizer)}, exact)</h3>
    <div class="bar" role="img" aria-label="Token budget by section">${bar}</div>
    <ul class="legend">${legend}</ul>
    <p class="status">${r.messagesSent} of ${r.messagesInHistory} messages sent${r.longTermError ? ` · long-term: ${esc(r.longTermError)}` : ""}</p>
    <h3>Recalled, and why</h3>${recalled}
    <h3>Messages sent</h3>${sent}`;
}

// ---- memory panel ----

const day = (ms) => new Date(ms).toISOString().slice(0, 10);

async function renderMemories() {
  const m = state.memory;
  const memories = await m.memories();
  const groups = new Map();
  for (const e of memories) {
    const name = e.scope === "user" ? "User profile" : `Agent ${e.scope.slice(6)}`;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(e);
  }
  // A state holds until a newer value replaces it; an event happened once.
  const truth = (e) => (e.temporal === "event" ? `event on ${day(e.validFrom ?? e.timestamp)}` : `state since ${day(e.validFrom ?? e.timestamp)}`);
  const item = (e) => `
    <div class="memory" data-id="${esc(e.id)}">
      <div>${esc(e.content)}</div>
      <div class="meta">${esc(e.metadata.category ?? e.kind)} · ${truth(e)} · importance ${e.importance.toFixed(2)} · ${e.sources?.length ?? 0} source message(s)${e.metadata.supersedes ? " · replaces an older version" : ""}</div>
      <div class="row">
        <button type="button" data-action="history">History</button>
        ${e.metadata.supersedes ? `<button type="button" data-action="undo">Undo</button>` : ""}
        <button type="button" data-action="forget">Forget</button>
      </div>
      <div class="history" hidden></div>
    </div>`;
  const summary = state.turns.at(-1)?.messages[0]?.content.split("Summary of the earlier conversation:")[1];
  $("memory-list").innerHTML =
    (memories.length ? [...groups].map(([name, list]) => `<h3>${esc(name)} (${list.length})</h3>${list.map(item).join("")}`).join("") : `<p class="hint">No long-term memories yet: chat, then end the session.</p>`) +
    (summary ? `<h3>Session summary</h3><div class="memory">${esc(summary.trim())}</div>` : "");
  const last = saved("last-end", null);
  $("last-end").innerHTML = last
    ? `<p class="status">Last session end (${esc(last.session)}): judged by <b>${esc(last.judge)}</b>, ${last.added} added, ${last.superseded} superseded, ${last.skipped} skipped${last.errors.length ? `; ${esc(last.errors.join("; "))}` : ""}.</p>`
    : "";
}

async function onMemoryAction(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const box = button.closest(".memory");
  const id = box.dataset.id;
  const m = state.memory;
  if (button.dataset.action === "history") {
    const list = box.querySelector(".history");
    const versions = await m.history(id);
    list.innerHTML = versions.map((v) => `<div>${v.validTo ? "✗" : "✓"} ${esc(v.content)} <span class="meta">(${day(v.validFrom ?? v.timestamp)} to ${v.validTo ? day(v.validTo) : "now"})</span></div>`).join("");
    list.hidden = !list.hidden;
    return;
  }
  if (button.dataset.action === "undo") await m.undo(id);
  if (button.dataset.action === "forget") await m.forget(id);
  await refreshPanels();
  channel?.postMessage("changed");
}

async function search(query) {
  const hits = await timed("search", state.memory.search(query, { topK: 10 }));
  $("search-results").innerHTML = hits.length
    ? `<table><caption>Results for “${esc(query)}”</caption><thead><tr><th>source</th><th>text</th><th>score</th><th>bm25</th><th>coverage</th><th>weight</th></tr></thead><tbody>${hits
        .map((h) => `<tr><td>${esc(h.source ?? "")}</td><td>${esc(h.text)}</td><td>${h.score.toFixed(3)}</td><td>${h.explain.bm25.toFixed(2)}</td><td>${h.explain.coverage.toFixed(2)}</td><td>${h.explain.sourceWeight}</td></tr>`)
        .join("")}</tbody></table>`
    : `<p class="hint">Nothing found for “${esc(query)}”.</p>`;
}

async function exportMemories() {
  const doc = await state.memory.exportMemories();
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" }));
  const a = Object.assign(document.createElement("a"), { href: url, download: "agent-memory-export.json" });
  a.click();
  URL.revokeObjectURL(url);
  return doc;
}

// ---- dashboard ----

async function renderDashboard() {
  const m = state.memory;
  const stats = await m.stats();
  const perDaySearches = {};
  for (const [key, n] of Object.entries(stats.searches)) {
    const day = key.split("|")[0];
    perDaySearches[day] = (perDaySearches[day] ?? 0) + n;
  }
  const llm = m.llmStats();
  const purposes = llm ? Object.entries(llm.byPurpose) : [];
  const llmTable = llm
    ? `<table><caption>Model calls: ${llm.calls} calls, ${llm.failures} failures, ${llm.retries} retries, ${llm.timeouts} timeouts</caption><thead><tr><th>purpose</th><th>calls</th><th>input tokens</th><th>output tokens</th></tr></thead><tbody>${purposes
        .map(([p, s]) => `<tr><td>${esc(p)}</td><td>${s.calls}</td><td>${s.inputTokens}</td><td>${s.outputTokens}</td></tr>`)
        .join("")}</tbody></table>`
    : "";
  const entries = (o) => Object.entries(o ?? {});
  $("dashboard").innerHTML = `
    <p>${stats.valid} memories in force, ${stats.superseded} superseded, ${stats.total} versions; ${stats.storageBytes} bytes stored${stats.damaged.length ? `; ${stats.damaged.length} damaged records skipped` : ""}.</p>
    <div class="charts">
      ${bars("Memories by kind", entries(stats.byKind))}
      ${bars("Memories by scope", entries(stats.byScope))}
      ${bars("Top agents", entries(stats.byAgent).sort((a, b) => b[1] - a[1]).slice(0, 5))}
      ${bars("Memories written per day", entries(stats.perDay).slice(-10))}
      ${bars("Searches per day", entries(perDaySearches).slice(-10))}
      ${bars("Model calls per purpose", purposes.map(([p, s]) => [p, s.calls]))}
      ${line("add", state.latency.add)}
      ${line("buildContext", state.latency.buildContext)}
      ${line("search", state.latency.search)}
      ${line("endSession", state.latency.endSession)}
    </div>
    ${llmTable}`;
}

async function refreshPanels() {
  await renderMemories();
  await renderDashboard();
}

// ---- wiring ----

async function work(label, fn) {
  if (state.busy) return;
  state.busy = true;
  for (const id of ["send", "compress", "end-session", "sync-now"]) $(id).disabled = true;
  status(label);
  try {
    await fn();
  } catch (err) {
    status(`${err.code ?? "ERROR"}: ${err.message}`);
    return;
  } finally {
    state.busy = false;
    for (const id of ["send", "compress", "end-session", "sync-now"]) $(id).disabled = false;
  }
}

// The Settings dialog's fields: input id, settings key, kept untrimmed (a secret).
const SETTINGS = [
  ["llm-url", "llmUrl"], ["llm-model", "llmModel"], ["llm-key", "llmKey", true], ["embed-url", "embedUrl"], ["embed-model", "embedModel"],
  ["sync-url", "syncUrl"], ["sync-token", "syncToken"], ["sync-passphrase", "syncPassphrase", true],
];

function wire() {
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("input").value.trim();
    if (!text) return;
    $("input").value = "";
    work("Thinking…", async () => {
      await send(text);
      status("");
    });
  });
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("compress").addEventListener("click", () =>
    work("Compressing the old messages…", async () => {
      const r = await state.memory.compress();
      status(r ? `Compressed ${r.messages} messages in ${r.chunks} chunk(s).` : "Nothing to compress yet.");
      await refreshPanels();
    }));
  $("end-session").addEventListener("click", () =>
    work("Ending the session: extracting memories…", async () => {
      const r = await timed("endSession", state.memory.endSession());
      save("last-end", { ...r, session: state.current });
      markSession({ endedAt: Date.now(), continued: false });
      status(`Session end: ${r.added} added, ${r.superseded} superseded, ${r.skipped} skipped (${r.judge}).`);
      await refreshPanels();
      await refreshSync();
      channel?.postMessage("changed");
    }));
  $("sync-now").addEventListener("click", () => work("Syncing…", syncNow));
  $("session-select").addEventListener("change", (e) => work("Opening…", async () => { await openSession(e.target.value); status(""); }));
  $("new-session").addEventListener("click", () => work("Opening…", async () => { await newSession(); status(""); }));
  $("delete-session").addEventListener("click", () => work("Deleting…", deleteSession));
  $("turn-select").addEventListener("change", (e) => renderContext(Number(e.target.value)));
  $("memory-list").addEventListener("click", (e) => work("Updating…", async () => { await onMemoryAction(e); status(""); }));
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const q = $("search-input").value.trim();
    if (q) work("Searching…", async () => { await search(q); status(""); });
  });
  $("export").addEventListener("click", () => work("Exporting…", async () => { const d = await exportMemories(); status(`Exported ${d.entries.length} memory versions.`); }));
  $("import").addEventListener("change", (e) => work("Importing…", async () => {
    const file = e.target.files[0];
    if (!file) return;
    const r = await state.memory.importMemories(JSON.parse(await file.text()));
    status(`Imported: ${r.added} added, ${r.updated} updated, ${r.unchanged} unchanged.`);
    e.target.value = "";
    await refreshPanels();
    channel?.postMessage("changed");
  }));
  $("purge").addEventListener("click", () => {
    if (!confirm("Delete every long-term memory of this user?")) return;
    work("Purging…", async () => { await state.memory.purge(); status("Purged."); await refreshPanels(); channel?.postMessage("changed"); });
  });

  // Tabs: click or arrow keys.
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const select = (tab) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
    tab.focus();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (step) select(tabs[(i + step + tabs.length) % tabs.length]);
    });
  });

  // Settings: kept in this browser only.
  $("open-settings").addEventListener("click", () => {
    for (const [id, key] of SETTINGS) $(id).value = state.settings[key] ?? "";
    $("settings").showModal();
  });
  $("settings").addEventListener("close", () => {
    if ($("settings").returnValue !== "save") return;
    state.settings = Object.fromEntries(SETTINGS.map(([id, key, raw]) => [key, raw ? $(id).value : $(id).value.trim()]));
    save("settings", state.settings);
    work("Reopening with the new settings…", async () => { await openSession(state.current); status(""); });
  });

  // Another tab wrote (a chat it received by sync among it): reads see it.
  channel?.addEventListener("message", async () => {
    if (state.busy) return;
    try {
      if (state.memory) await mergeSessions(state.memory);
    } catch (err) {
      // Closed under the read: a session is opening, and renders itself.
      if (!["CLOSED", "FREED"].includes(err.code)) throw err;
    }
    await refreshPanels();
  });
}

async function main() {
  await init();
  state.tokenizer = await loadTokenizer("o200k");
  wire();
  if (!state.sessions.length) state.sessions = [{ id: "chat-1", title: "Chat 1" }];
  save("sessions", state.sessions);
  const current = state.sessions.some((s) => s.id === state.current) ? state.current : state.sessions[0].id;
  setInterval(pollSync, SYNC_POLL_MS);
  await openSession(current);
  document.body.dataset.ready = "true";
}

main().catch((err) => {
  status(`Could not start: ${err.code ?? ""} ${err.message}`);
  document.body.dataset.ready = "error";
});
