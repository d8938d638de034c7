//! An earlier release's long-term records, read once and converted: each
//! memory (its own record `lt/entry/<id>`, or a batch's line) becomes an
//! import operation as it was, links and all, and each judged message a
//! mark. A damaged record is reported and left where it is, as that
//! release left it.

use rustc_hash::FxHashSet as HashSet;

use crate::entry::MemoryEntry;
use crate::error::Result;
use crate::longterm::lines;
use crate::longterm::log::op::{Action, Op, Stamp};
use crate::store::layout::{ENTRY_PREFIX, LEGACY_KEYS, PROCESSED_PREFIX, SNAPSHOT_PREFIX};
use crate::store::{DamageLog, Store};

/// What an earlier release left: operations to stamp and write, and the
/// keys to delete once they are written.
pub struct Legacy {
    pub ops: Vec<Op>,
    pub keys: Vec<String>,
}

/// The earlier release's records of `store`, if it has any.
pub async fn read(store: &dyn Store, damage: &DamageLog) -> Result<Option<Legacy>> {
    let (entries, processed) = futures::join!(store.list(ENTRY_PREFIX), store.list(PROCESSED_PREFIX));
    let (entries, processed) = (entries?, processed?);
    if entries.is_empty() && processed.is_empty() {
        return Ok(None);
    }
    let unstamped = Stamp { clock: 0, writer: 0 };
    let mut keys: Vec<String> = LEGACY_KEYS.iter().map(|k| k.to_string()).collect();
    keys.extend(store.list(SNAPSHOT_PREFIX).await?.into_iter().map(|(k, _)| k));
    let (mut singles, mut batched) = (Vec::new(), Vec::new());
    for (key, json) in entries {
        let batch = lines::head(&json) == "~batch";
        let read: Option<Vec<MemoryEntry>> = if batch {
            lines::records(&json).map(|line| serde_json::from_str(line).ok()).collect()
        } else {
            serde_json::from_str(&json).ok().map(|e| vec![e])
        };
        let sound = read.filter(|read| {
            read.iter()
                .all(|e: &MemoryEntry| e.validate().is_ok() && (batch || key[ENTRY_PREFIX.len()..] == e.id))
        });
        let Some(read) = sound else {
            damage.report(&key, "not a valid memory of an earlier release under its own id");
            continue;
        };
        if batch { &mut batched } else { &mut singles }.extend(read);
        keys.push(key);
    }
    // A memory's own record wins over a batch's copy.
    let own: HashSet<String> = singles.iter().map(|e| e.id.clone()).collect();
    batched.retain(|e| !own.contains(&e.id));
    let mut ops: Vec<Op> = singles
        .into_iter()
        .chain(batched)
        .map(|entry| Op::new(unstamped, Action::Import { entry }))
        .collect();
    for (key, value) in processed {
        let Ok(until) = value.trim().parse::<i64>() else {
            damage.report(&key, "not an expiry time");
            continue;
        };
        let hashes = vec![key[PROCESSED_PREFIX.len()..].to_string()];
        ops.push(Op::new(unstamped, Action::Processed { hashes, until }));
        keys.push(key);
    }
    Ok(Some(Legacy { ops, keys }))
}
