//! What two sides held alike at their last complete sync, kept by the
//! initiating side per peer: the items it may drop, rather than send back,
//! once the peer lacks them.
//!
//! A peer deletes an item only for good (an erasure or a purge took it, or
//! a relay collected a tombstone after its horizon), so an item both held
//! and the peer now lacks is deleted; one written or received since was
//! never held alike, and goes out. Any set of items once held alike is
//! therefore safe to act on, an older one included: a record cut off
//! midway, or two instances of one store each writing theirs, loses
//! knowledge, never makes an item held here look deleted.
//!
//! Kept as 64-bit hashes of the ids, sorted, in parts of at most
//! [`VALUE_BYTES`] under `sync/held/<peer>-<families>/` (see
//! [`crate::store::layout`]), written only when they changed: 10,000 items
//! take 107 KB.

use crate::base64::{base64, unbase64};
use crate::error::Result;
use crate::hash::Fnv64;
use crate::store::layout::{held_prefix, VALUE_BYTES};
use crate::store::Store;
use crate::sync::{Families, ItemId};

/// Hashes per part: base64 of 8 bytes each, within a value's bytes.
const PER_PART: usize = VALUE_BYTES / 4 * 3 / 8;

/// The key an item is known by here.
pub fn hash(id: &ItemId) -> u64 {
    Fnv64::of(id)
}

/// What a side held alike with one peer at their last complete sync, as
/// read when the sync began.
pub struct Alike {
    prefix: String,
    hashes: Vec<u64>,
    parts: usize,
}

impl Alike {
    /// What this side and `peer` held alike in syncs of `families`
    /// (nothing, if never recorded): one record per set of families, so a
    /// sync of fewer leaves what another knows of the rest.
    pub async fn read(store: &dyn Store, peer: u64, families: Families) -> Result<Alike> {
        let prefix = held_prefix(peer, families);
        let listed = store.list(&prefix).await?;
        let mut hashes: Vec<u64> = Vec::new();
        for (_, value) in &listed {
            let bytes = unbase64(value).unwrap_or_default();
            hashes.extend(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))));
        }
        crate::order::sort(&mut hashes);
        Ok(Alike { prefix, hashes, parts: listed.len() })
    }

    /// Whether `id` was held alike.
    pub fn holds(&self, id: &ItemId) -> bool {
        self.hashes.binary_search(&hash(id)).is_ok()
    }

    /// Records what the two hold alike now, once nothing differs: every
    /// item of `ids` (held here as the sync began, or received) but those
    /// of `not` (too large to send). What was dropped stays listed until
    /// the next complete sync, so another instance of this store that
    /// still holds it drops it too. Parts no longer needed are emptied,
    /// not deleted: one write.
    pub async fn write(&self, store: &dyn Store, ids: &[ItemId], not: &[ItemId]) -> Result<()> {
        let not = hashes(not);
        let mut now = hashes(ids);
        now.retain(|h| not.binary_search(h).is_err());
        if now == self.hashes {
            return Ok(());
        }
        let mut parts: Vec<(String, String)> = now
            .chunks(PER_PART)
            .map(|part| base64(&part.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>()))
            .enumerate()
            .map(|(at, value)| (format!("{}{at:03}", self.prefix), value))
            .collect();
        for at in parts.len()..self.parts {
            parts.push((format!("{}{at:03}", self.prefix), String::new()));
        }
        store.put_many(parts).await
    }
}

/// The hashes of `ids`: sorted, each once.
fn hashes(ids: &[ItemId]) -> Vec<u64> {
    let mut hashes: Vec<u64> = ids.iter().map(hash).collect();
    crate::order::sort(&mut hashes);
    hashes.dedup();
    hashes
}
