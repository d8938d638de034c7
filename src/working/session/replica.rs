//! Sessions as one side of a sync ([`crate::sync`]), when a memory syncs
//! them: each stored message and summary is an immutable item of the family
//! [`KIND_SESSION`], so a chat goes on on another device, and each deletion
//! leaves an id-only marker that travels as the item's erased twin, so what
//! was deleted stays deleted.
//!
//! An item's bytes are a tag (`m` a message, `s` a summary, `x` an
//! erasure), the session's storage id, a newline, then the stored record as
//! it is, or for an erasure the deleted entry's id. Its id is a position
//! (a message's own; a summary's, the last message it covers), an FNV-1a
//! hash of that position and the bytes, and the kind; the receiver computes
//! it again, so a record altered on the way, or replayed under another id
//! or position, is rejected as damaged and never applied. An erasure has
//! no text to check: it must name the entry its original holds, where that
//! is held; what authenticates it is sealing, as for long-term erasures.
//!
//! A deletion (`pop`, `clear`, forgetting a message, `deleteSession`)
//! leaves `session/<id>/gone/<entry id>` holding the erased item's id, and
//! writes it before it deletes the record: a deletion cut off midway leaves
//! the marker, never a record a peer could send back. A marker lists as the
//! erasure; a record whose marker is held does not list, and goes at the
//! next receive.
//!
//! Conflicts are settled the same way on every replica, whatever the order
//! things arrive in: an erasure wins over its original (held, or arriving
//! later); a session holds one summary, and of two the one covering more
//! stays (ties: the larger id), the other erased.

use super::{covers_through, position, storage_id_of, validate_session_id};
use crate::base64::{hex, unhex};
use crate::entry::{Kind, MemoryEntry};
use crate::error::Result;
use crate::hash::Fnv64;
use crate::store::layout::{gone_prefix, message_prefix, summary_key, writer_prefix, SESSIONS_PREFIX};
use crate::store::Store;
use crate::sync::{erasures_of, id_parts, item_id, ItemId, Record, ERASED, KIND_SESSION, TOMBSTONE};
use crate::working::conversation::Seq;

const MESSAGE: u8 = b'm';
const SUMMARY: u8 = b's';
const ERASURE: u8 = b'x';

fn bytes_of(tag: u8, session: &str, body: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(session.len() + body.len() + 2);
    b.push(tag);
    b.extend_from_slice(session.as_bytes());
    b.push(b'\n');
    b.extend_from_slice(body.as_bytes());
    b
}

/// The id of a session item's erasure: a tombstone (no session item is
/// linked to another).
fn erasure_of(original: &ItemId) -> ItemId {
    erasures_of(original)[1]
}

/// The id of an item at `seq` with `bytes`.
fn id_of(seq: Seq, bytes: &[u8]) -> ItemId {
    let (clock, writer) = (position::clock_of(seq), position::writer_of(seq));
    let hash = Fnv64::default().feed(&clock.to_be_bytes()).feed(&writer.to_be_bytes()).feed(bytes).finish();
    item_id(clock, writer, hash, KIND_SESSION)
}

/// The item of a stored message or summary (`key`, `value`), with its
/// parsed entry (a summary's position is in it).
fn original_of(key: &str, value: &str, entry: Option<&MemoryEntry>) -> Option<(ItemId, Vec<u8>)> {
    let (session, tail) = key.strip_prefix(SESSIONS_PREFIX)?.split_once('/')?;
    let (seq, tag) = match tail.strip_prefix("msg/") {
        Some(at) => (position::decode(at)?, MESSAGE),
        None if tail == "summary" => (covers_through(entry?)?, SUMMARY),
        None => return None,
    };
    let bytes = bytes_of(tag, session, value);
    Some((id_of(seq, &bytes), bytes))
}

/// The marker a deleted message or summary leaves (its record `key` and
/// `value`): `gone/<entry id>`, holding its erased item's id, never its
/// text. `None` for another record, or one that does not parse.
pub fn marker(key: &str, value: &str) -> Option<(String, String)> {
    let (session, _) = key.strip_prefix(SESSIONS_PREFIX)?.split_once('/')?;
    let entry: MemoryEntry = serde_json::from_str(value).ok()?;
    let (id, _) = original_of(key, value, Some(&entry))?;
    Some((format!("{}{}", gone_prefix(session), entry.id), hex(&erasure_of(&id))))
}

/// What a store holds of sessions. Sorted vectors, not B-trees: each
/// B-tree of a new key type costs the wasm its own copy of the tree code.
#[derive(Default)]
struct Held {
    /// Every item, by id (types the sync has already: each new one costs
    /// the wasm its vector code).
    items: Vec<Record>,
    /// Each original's id and record key, by id.
    originals: Vec<(ItemId, String)>,
    /// The erasures held, sorted.
    erased: Vec<ItemId>,
    /// Each erasure's marker key, by id.
    markers: Vec<(ItemId, String)>,
    /// Each session's summary: the session, its id and entry.
    summaries: Vec<(String, ItemId, MemoryEntry)>,
    /// Records whose erasure is held (a deletion cut off after its marker).
    stale: Vec<String>,
}

/// Inserts `x` into the sorted `v`; false when it was there.
fn insert_sorted<T: Ord>(v: &mut Vec<T>, x: T) -> bool {
    match v.binary_search(&x) {
        Ok(_) => false,
        Err(at) => {
            v.insert(at, x);
            true
        }
    }
}

async fn held(store: &dyn Store) -> Result<Held> {
    let mut h = Held::default();
    for (key, value) in store.list(SESSIONS_PREFIX).await? {
        let Some((session, tail)) = key[SESSIONS_PREFIX.len()..].split_once('/') else { continue };
        if let Some(entry_id) = tail.strip_prefix("gone/") {
            // An id-only marker of before sync holds nothing: it stays local.
            let Some(id) = unhex(&value).and_then(|b| ItemId::try_from(b).ok()) else { continue };
            h.erased.push(id);
            h.markers.push((id, key.clone()));
            h.items.push(Record { id, bytes: bytes_of(ERASURE, session, entry_id) });
            continue;
        }
        let entry = (tail == "summary").then(|| serde_json::from_str::<MemoryEntry>(&value).ok()).flatten();
        let Some((id, bytes)) = original_of(&key, &value, entry.as_ref()) else { continue };
        if let Some(e) = entry {
            h.summaries.push((session.to_string(), id, e));
        }
        h.originals.push((id, key));
        h.items.push(Record { id, bytes });
    }
    crate::order::sort_by(&mut h.items, |a, b| a.id.cmp(&b.id));
    crate::order::sort(&mut h.erased);
    crate::order::sort(&mut h.originals);
    crate::order::sort(&mut h.markers);
    let erased = &h.erased;
    let gone = |id: &ItemId| erased.binary_search(&erasure_of(id)).is_ok();
    h.stale = h.originals.iter().filter(|(id, _)| gone(id)).map(|(_, k)| k.clone()).collect();
    h.items.retain(|r| r.id[24] & ERASED != 0 || !gone(&r.id));
    Ok(h)
}

/// The entry an original among `items` (sorted) holds.
fn entry_of(items: &[Record], id: &ItemId) -> Option<MemoryEntry> {
    let bytes = &items[items.binary_search_by(|r| r.id.cmp(id)).ok()?].bytes;
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str(text.split_once('\n')?.1).ok()
}

/// The ids of every session item the store holds.
pub async fn item_ids(store: &dyn Store) -> Result<Vec<ItemId>> {
    Ok(held(store).await?.items.into_iter().map(|r| r.id).collect())
}

/// The records of those of `ids` the store holds.
pub async fn records_of(store: &dyn Store, ids: &[ItemId]) -> Result<Vec<Record>> {
    let mut wanted = ids.to_vec();
    crate::order::sort(&mut wanted);
    let mut items = held(store).await?.items;
    items.retain(|r| wanted.binary_search(&r.id).is_ok());
    Ok(items)
}

/// A session item that passed its checks.
enum Item {
    Message { session: String, seq: Seq, entry: MemoryEntry, body: String },
    Summary { session: String, entry: MemoryEntry, body: String },
    Erasure { session: String, entry_id: String },
}

/// The item `record` holds, if it is the one its id names; else why not.
fn check(record: &Record) -> std::result::Result<Item, &'static str> {
    let (clock, writer, _, kind) = id_parts(&record.id).ok_or("not a well-formed item id")?;
    let (&tag, rest) = record.bytes.split_first().ok_or("an empty session item")?;
    let text = std::str::from_utf8(rest).map_err(|_| "a session item that is not text")?;
    let (session, body) = text.split_once('\n').ok_or("a session item without its session")?;
    if validate_session_id(session).is_err() || storage_id_of(session) != session {
        return Err("a session item of an invalid session id");
    }
    let session = session.to_string();
    if tag == ERASURE {
        if kind != KIND_SESSION | ERASED | TOMBSTONE || body.is_empty() || body.contains('/') {
            return Err("an erasure that is not of the kind its id says, or names no entry");
        }
        crate::entry::validate_name("entry id", body).map_err(|_| "an erasure naming an invalid entry id")?;
        return Ok(Item::Erasure { session, entry_id: body.to_string() });
    }
    let seq = position::make(clock, writer);
    if id_of(seq, &record.bytes) != record.id {
        return Err("a session item whose content does not match its id (altered)");
    }
    let entry: MemoryEntry = serde_json::from_str(body).map_err(|_| "a session item that is not an entry")?;
    entry.validate().map_err(|_| "a session item holding an invalid entry")?;
    let body = body.to_string();
    match tag {
        MESSAGE if entry.kind != Kind::Summary => Ok(Item::Message { session, seq, entry, body }),
        SUMMARY if entry.kind == Kind::Summary && covers_through(&entry) == Some(seq) => {
            Ok(Item::Summary { session, entry, body })
        }
        _ => Err("a session item that is not what its tag says"),
    }
}

/// A writer record for each session of `keys`, so its open instances
/// reload.
fn writer_marks<'a>(keys: impl Iterator<Item = &'a String>) -> Vec<(String, String)> {
    let mut touched: Vec<String> =
        keys.filter_map(|k| Some(k[SESSIONS_PREFIX.len()..].split_once('/')?.0.to_string())).collect();
    crate::order::sort(&mut touched);
    touched.dedup();
    let mark = format!("{:016x}", crate::entry::random_u64(0));
    touched.iter().map(|s| (format!("{}sync", writer_prefix(s)), mark.clone())).collect()
}

/// Deletes the session items `ids` (ones a peer deleted since the two last
/// held them alike: [`crate::sync::held`]), records and markers; says
/// which messages and summaries went (`erased`).
pub async fn drop_items(store: &dyn Store, ids: &[ItemId]) -> Result<Received> {
    let Held { items, originals, markers, .. } = held(store).await?;
    let mut out = Received::default();
    let mut deletes = Vec::new();
    for id in ids {
        let key = |held: &[(ItemId, String)]| {
            held.binary_search_by(|(o, _)| o.cmp(id)).ok().map(|at| held[at].1.clone())
        };
        if let Some(key) = key(&originals) {
            out.erased.extend(entry_of(&items, id));
            deletes.push(key);
        } else if let Some(marker) = key(&markers) {
            // A deletion cut off after its marker left the record: it goes
            // with the marker, never outlives it.
            let original = crate::sync::original_of(id);
            let stale = originals.binary_search_by(|(o, _)| o.cmp(&original));
            deletes.extend(stale.ok().map(|at| originals[at].1.clone()));
            deletes.push(marker);
        }
    }
    if !deletes.is_empty() {
        store.put_many(writer_marks(deletes.iter())).await?;
        store.delete_many(deletes).await?;
    }
    Ok(out)
}

/// What a receive did.
#[derive(Debug, Default)]
pub struct Received {
    /// Records that are not what their ids name, with why.
    pub rejected: Vec<(ItemId, &'static str)>,
    /// Items that met a competing one held here (an erasure and its
    /// original, two summaries of a session), settled by the rules above.
    pub conflicts: u32,
    /// Messages and summaries stored, by session.
    pub landed: Vec<(String, MemoryEntry)>,
    /// Messages and summaries deleted.
    pub erased: Vec<MemoryEntry>,
}

/// Lands the session items a peer sent: checked, then stored (markers and
/// new records first, deletions after, as every deletion here), with a
/// writer record bumped in each session touched so that its open instances
/// reload.
pub async fn receive(store: &dyn Store, records: Vec<Record>) -> Result<Received> {
    let Held { items, originals, mut erased, mut summaries, stale, .. } = held(store).await?;
    let mut out = Received::default();
    let (mut puts, mut deletes): (Vec<(String, String)>, Vec<String>) = (Vec::new(), stale);
    // Sorted: the originals taken in this receive, and every message key.
    let mut taken: Vec<ItemId> = Vec::new();
    let mut keys: Vec<String> = originals.iter().map(|(_, k)| k.clone()).collect();
    crate::order::sort(&mut keys);
    // The marker of `id` erased, written, and its erasure held from now on.
    let erase = |id: ItemId, session: &str, entry_id: &str, erased: &mut Vec<ItemId>| {
        insert_sorted(erased, erasure_of(&id));
        (format!("{}{entry_id}", gone_prefix(session)), hex(&erasure_of(&id)))
    };
    // Erasures first: an original arriving beside its erasure is refused.
    let erasure = |r: &&Record| r.bytes.first() == Some(&ERASURE);
    for record in records.iter().filter(erasure).chain(records.iter().filter(|r| !erasure(r))) {
        let id = record.id;
        let item = match check(record) {
            Ok(item) => item,
            Err(why) => {
                out.rejected.push((id, why));
                continue;
            }
        };
        let original = originals.binary_search_by(|(o, _)| o.cmp(&crate::sync::original_of(&id)));
        let held =
            originals.binary_search_by(|(o, _)| o.cmp(&id)).is_ok() || taken.binary_search(&id).is_ok();
        let session = match &item {
            Item::Message { session, .. } | Item::Summary { session, .. } | Item::Erasure { session, .. } => {
                session.clone()
            }
        };
        let summary_at = summaries.iter().position(|(s, _, _)| *s == session);
        match item {
            Item::Erasure { entry_id, .. } => {
                if erased.binary_search(&id).is_ok() {
                    continue;
                }
                if let Ok(at) = original {
                    let key = &originals[at].1;
                    let stored = entry_of(&items, &crate::sync::original_of(&id));
                    let in_session = key.starts_with(&format!("{SESSIONS_PREFIX}{session}/"));
                    let Some(entry) = stored.filter(|e| e.id == entry_id && in_session) else {
                        out.rejected.push((id, "an erasure that is not of the entry its original holds"));
                        continue;
                    };
                    deletes.push(key.clone());
                    if let Some(at) =
                        summary_at.filter(|&at| summaries[at].1 == crate::sync::original_of(&id))
                    {
                        summaries.remove(at);
                    }
                    out.erased.push(entry);
                    out.conflicts += 1;
                }
                puts.push(erase(crate::sync::original_of(&id), &session, &entry_id, &mut erased));
            }
            _ if held => {}
            _ if erased.binary_search(&erasure_of(&id)).is_ok() => out.conflicts += 1,
            Item::Message { seq, entry, body, .. } => {
                let key = format!("{}{}", message_prefix(&session), position::encode(seq));
                if !insert_sorted(&mut keys, key.clone()) {
                    out.rejected.push((id, "a session item at a position another item holds"));
                    continue;
                }
                insert_sorted(&mut taken, id);
                puts.push((key, body));
                out.landed.push((session, entry));
            }
            Item::Summary { entry, body, .. } => {
                insert_sorted(&mut taken, id);
                match summary_at {
                    // The held one covers more: the arriving one is erased.
                    Some(at) if summaries[at].1 > id => {
                        puts.push(erase(id, &session, &entry.id, &mut erased));
                        out.conflicts += 1;
                    }
                    held => {
                        if let Some(at) = held {
                            let (_, held_id, held_entry) = summaries.remove(at);
                            puts.push(erase(held_id, &session, &held_entry.id, &mut erased));
                            out.erased.push(held_entry);
                            out.conflicts += 1;
                        }
                        puts.push((summary_key(&session), body));
                        summaries.push((session.clone(), id, entry.clone()));
                        out.landed.push((session, entry));
                    }
                }
            }
        }
    }
    if puts.is_empty() && deletes.is_empty() {
        return Ok(out);
    }
    let touched = writer_marks(puts.iter().map(|(k, _)| k));
    puts.extend(touched);
    // A summary replaced is written over, not deleted.
    deletes.retain(|k| !puts.iter().any(|(p, _)| p == k));
    store.put_many(puts).await?;
    if !deletes.is_empty() {
        store.delete_many(deletes).await?;
    }
    Ok(out)
}
