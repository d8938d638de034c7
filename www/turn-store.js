// The inspector's turns (what each turn sent, its report, what was recalled)
// kept in IndexedDB per session, so a reload shows them again. Bounded: the
// last MAX_TURNS turns of a session, fewer if they pass MAX_CHARS of JSON.
// Only what the library already redacted is stored here (the message as it
// was stored, the messages sent, the recalled texts).
const DB = "agent-memory-demo-inspector";
const STORE = "turns";
export const MAX_TURNS = 40;
const MAX_CHARS = 1_500_000;

let opening = null;
function db() {
  opening ??= new Promise((ok, fail) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  return opening;
}

const done = (tx) => new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = tx.onabort = () => fail(tx.error); });

/** Keeps the newest turns within the bounds. */
export function bound(turns) {
  const kept = turns.slice(-MAX_TURNS);
  while (kept.length > 1 && JSON.stringify(kept).length > MAX_CHARS) kept.shift();
  return kept;
}

/** The stored turns of `session`, oldest first ([] when none or IndexedDB fails). */
export async function loadTurns(session) {
  try {
    const tx = (await db()).transaction(STORE);
    const req = tx.objectStore(STORE).get(session);
    await done(tx);
    return Array.isArray(req.result) ? req.result : [];
  } catch {
    return [];
  }
}

/**
 * Appends `turn` to `session`'s turns in one transaction (another tab on the
 * same session appends too); resolves to the stored list.
 */
export async function appendTurn(session, turn) {
  const tx = (await db()).transaction(STORE, "readwrite");
  const store = tx.objectStore(STORE);
  let kept = [];
  const req = store.get(session);
  req.onsuccess = () => {
    kept = bound([...(Array.isArray(req.result) ? req.result : []), turn]);
    store.put(kept, session);
  };
  await done(tx);
  return kept;
}

export async function deleteTurns(session) {
  try {
    const tx = (await db()).transaction(STORE, "readwrite");
    tx.objectStore(STORE).delete(session);
    await done(tx);
  } catch {
    // Nothing stored, or no IndexedDB: nothing to delete.
  }
}
