//! A relay: a replica over a [`Store`] of its own that holds items as
//! opaque records (id and bytes), so it answers a device's sync, or syncs
//! with another relay, without reading what it holds. When devices seal
//! their operations, a relay holds ids (a clock, a writer, a hash) and
//! ciphertext only.
//!
//! Each item is `sync/item/<id hex>` (its bytes in base64: stores keep
//! text), and `sync/mark` changes with every write. The ids are kept
//! between exchanges while the mark stays as this relay last wrote or read
//! it, so an exchange costs one read of the mark, not a listing of every
//! item; a relay beside others on one store lists again once one of them
//! wrote.
//!
//! Deletion reaches a relay through the ids alone ([`crate::sync`]'s
//! flags): an item flagged erased replaces its original (deleted, and
//! refused from then on), and a purge deletes, and refuses, every item of
//! its family stamped before it. Deleted first, then written: a relay cut
//! off between has lost nothing a device cannot send again.
//!
//! A relay opened with a horizon ([`Relay::collecting`]) notes when each
//! tombstone arrived (`sync/born/<ms>/<id>`, written with the item) and
//! drops the tombstones older than the horizon, at most once per
//! [`COLLECT_EVERY_MS`] (or horizon, if shorter). Devices then drop them
//! too, and a device back from further away than the horizon drops what
//! they deleted, rather than send it back ([`crate::sync::held`]). A relay
//! names itself in its answers by a random id kept in its store, so a
//! relay started over on an empty store is another peer to every device.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::base64::{base64, hex, unbase64, unhex};
use crate::error::Result;
use crate::ports::{Clock, LocalBoxFuture};
use crate::store::layout::{born_key, SYNC_BORN_PREFIX, SYNC_ID_KEY, SYNC_ITEM_PREFIX, SYNC_MARK_KEY};
use crate::store::Store;
use crate::sync::{
    answer, erasures_of, id_parts, original_of, sync, Families, ItemId, Record, Replica, SyncReport,
    Transport, ALL_FAMILIES, ERASED, FAMILY, PURGE, TOMBSTONE,
};

/// How long a relay keeps a tombstone unless told otherwise: 90 days.
pub const DEFAULT_HORIZON_MS: u64 = 90 * 24 * 3600 * 1000;
/// A collecting relay looks for tombstones past its horizon at most this
/// often (or once per horizon, if shorter): an hour.
pub const COLLECT_EVERY_MS: u64 = 3600 * 1000;

pub struct Relay {
    store: Rc<dyn Store>,
    /// The ids held as of a mark.
    ids: RefCell<Option<(Option<String>, Vec<ItemId>)>>,
    /// The clock tombstones' arrivals are noted by, and the horizon they
    /// are dropped after (none: kept for good).
    clock: Option<(Rc<dyn Clock>, Option<u64>)>,
    /// When this relay last looked for tombstones past the horizon.
    collected: Cell<u64>,
    id: Cell<Option<u64>>,
}

fn key_of(id: &ItemId) -> String {
    format!("{SYNC_ITEM_PREFIX}{}", hex(id))
}

impl Relay {
    /// A relay that keeps every tombstone for good.
    pub fn new(store: Rc<dyn Store>) -> Relay {
        Relay { store, ids: RefCell::new(None), clock: None, collected: Cell::new(0), id: Cell::new(None) }
    }

    /// A relay that notes when each tombstone arrives, by `clock`, and with
    /// a `horizon` (ms) drops it once that old.
    pub fn collecting(store: Rc<dyn Store>, clock: Rc<dyn Clock>, horizon: Option<u64>) -> Relay {
        Relay { clock: Some((clock, horizon)), ..Relay::new(store) }
    }

    /// The answer to one exchange of a device's (or another relay's) sync.
    pub async fn exchange(&self, request: &[u8]) -> Result<Vec<u8>> {
        self.collect().await?;
        answer(self, request).await
    }

    /// Drops the tombstones older than the horizon, if it is time to look.
    async fn collect(&self) -> Result<()> {
        let Some((clock, Some(horizon))) = &self.clock else { return Ok(()) };
        let now = clock.now_ms().max(0) as u64;
        if self.collected.get() != 0 && now < self.collected.get() + COLLECT_EVERY_MS.min(*horizon) {
            return Ok(());
        }
        self.collected.set(now);
        let mut keys = Vec::new();
        for (key, _) in self.store.list(SYNC_BORN_PREFIX).await? {
            let Some((ms, id)) = key[SYNC_BORN_PREFIX.len()..].split_once('/') else { continue };
            if u64::from_str_radix(ms, 16).is_ok_and(|ms| ms.saturating_add(*horizon) <= now) {
                keys.push(format!("{SYNC_ITEM_PREFIX}{id}"));
                keys.push(key);
            }
        }
        if keys.is_empty() {
            return Ok(());
        }
        self.delete(keys).await
    }

    /// Deletes `keys`, then moves the mark: every relay on this store
    /// lists its items again.
    async fn delete(&self, keys: Vec<String>) -> Result<()> {
        self.store.delete_many(keys).await?;
        *self.ids.borrow_mut() = None;
        let mark = format!("{:016x}", crate::entry::random_u64(0));
        self.store.put_many(vec![(SYNC_MARK_KEY.into(), mark)]).await
    }

    /// Syncs this relay with the peer behind `transport` (relay to relay),
    /// each exchange within [`super::EXCHANGE_TIMEOUT_MS`] of `clock`.
    pub async fn sync(&self, transport: &dyn Transport, clock: &dyn Clock) -> Result<SyncReport> {
        self.collect().await?;
        sync(self, &super::Timed::new(transport, clock)).await
    }
}

impl Replica for Relay {
    fn families(&self) -> Families {
        ALL_FAMILIES
    }

    fn ids(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(async move {
            let mark = self.store.get(SYNC_MARK_KEY).await?;
            if let Some((held, ids)) = &*self.ids.borrow() {
                if *held == mark {
                    return Ok(ids.clone());
                }
            }
            let listed = self.store.list(SYNC_ITEM_PREFIX).await?;
            let ids: Vec<ItemId> = listed
                .iter()
                .filter_map(|(k, _)| unhex(&k[SYNC_ITEM_PREFIX.len()..])?.try_into().ok())
                .collect();
            *self.ids.borrow_mut() = Some((mark, ids.clone()));
            Ok(ids)
        })
    }

    fn read<'a>(&'a self, ids: &'a [ItemId]) -> LocalBoxFuture<'a, Result<Vec<Record>>> {
        Box::pin(async move {
            let keys: Vec<String> = ids.iter().map(key_of).collect();
            let values = self.store.get_many(&keys).await?;
            Ok(ids
                .iter()
                .zip(values)
                .filter_map(|(id, v)| Some(Record { id: *id, bytes: unbase64(&v?)? }))
                .collect())
        })
    }

    fn write(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        Box::pin(self.take(records, false))
    }

    /// Overwrites the records held of these ids (a device resending its
    /// items sealed under a new key, so no plain or older copy stays in
    /// this store), as [`Relay::take`] keeps them.
    fn replace(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        Box::pin(self.take(records, true))
    }

    /// This relay's id: made once, checked in where the backend checks, so
    /// relays sharing a store name themselves alike.
    fn peer_id(&self) -> LocalBoxFuture<'_, Result<Option<u64>>> {
        Box::pin(async move {
            if let Some(id) = self.id.get() {
                return Ok(Some(id));
            }
            let made = format!("{:016x}", crate::entry::random_u64(0));
            let item = vec![(SYNC_ID_KEY.to_string(), made)];
            self.store.put_many_if(SYNC_ID_KEY, None, item).await?;
            let held = self.store.get(SYNC_ID_KEY).await?;
            let id = held.and_then(|h| u64::from_str_radix(&h, 16).ok());
            self.id.set(id);
            Ok(id)
        })
    }

    fn held_store(&self) -> Option<&dyn Store> {
        Some(self.store.as_ref())
    }

    fn drop_gone(&self, ids: Vec<ItemId>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move { self.delete(ids.iter().map(key_of).collect()).await })
    }
}

impl Relay {
    /// Keeps every record whose id is well formed (the bytes are not
    /// read: a relay cannot tell a damaged one; the device that receives
    /// it does), unless it is deleted already: an original whose erased
    /// twin is held or coming, an item older than its family's purge; one
    /// held already only when `replace`. Deletes what the erased and
    /// purges among them delete.
    async fn take(&self, records: Vec<Record>, replace: bool) -> Result<u32> {
        let (good, bad): (Vec<Record>, Vec<Record>) =
            records.into_iter().partition(|r| id_parts(&r.id).is_some());
        if good.is_empty() {
            return Ok(bad.len() as u32);
        }
        let mut held = self.ids().await?;
        crate::order::sort(&mut held);
        let mut erased: Vec<ItemId> =
            good.iter().filter(|r| r.id[24] & ERASED != 0).map(|r| original_of(&r.id)).collect();
        crate::order::sort(&mut erased);
        // The newest purge of each family, held or coming: (family, clock).
        let purges: Vec<(u8, u64)> = held
            .iter()
            .chain(good.iter().map(|r| &r.id))
            .filter_map(id_parts)
            .filter(|(_, _, _, kind)| kind & PURGE != 0)
            .map(|(clock, _, _, kind)| (kind & FAMILY, clock))
            .collect();
        let purged = |id: &ItemId| {
            id_parts(id).is_some_and(|(c, _, _, k)| purges.iter().any(|(f, p)| *f == k & FAMILY && c < *p))
        };
        let gone: Vec<ItemId> =
            held.iter().filter(|id| purged(id) || erased.binary_search(id).is_ok()).copied().collect();
        let good: Vec<Record> = good
            .into_iter()
            .filter(|r| {
                let original = r.id[24] & ERASED == 0;
                !purged(&r.id)
                    && (replace || held.binary_search(&r.id).is_err())
                    && !(original
                        && (erasures_of(&r.id).iter().any(|e| held.binary_search(e).is_ok())
                            || erased.binary_search(&r.id).is_ok()))
            })
            .collect();
        if !gone.is_empty() {
            self.store.delete_many(gone.iter().map(key_of).collect()).await?;
            if let Some((_, ids)) = &mut *self.ids.borrow_mut() {
                ids.retain(|id| gone.binary_search(id).is_err());
            }
        }
        if good.is_empty() {
            return Ok(bad.len() as u32);
        }
        let mark = format!("{:016x}", crate::entry::random_u64(0));
        let mut items: Vec<(String, String)> =
            good.iter().map(|r| (key_of(&r.id), base64(&r.bytes))).collect();
        if let Some((clock, _)) = &self.clock {
            let now = clock.now_ms().max(0) as u64;
            let tombs = good.iter().filter(|r| r.id[24] & TOMBSTONE != 0);
            items.extend(tombs.map(|r| (born_key(now, &hex(&r.id)), "1".to_string())));
        }
        items.push((SYNC_MARK_KEY.to_string(), mark.clone()));
        let seen = self.ids.borrow().as_ref().map(|(m, _)| m.clone());
        // Checked against the mark the ids were read at: if it held,
        // the ids stay known with these added.
        let known = match seen {
            Some(seen) => self.store.put_many_if(SYNC_MARK_KEY, seen.as_deref(), items.clone()).await?,
            None => false,
        };
        if known {
            if let Some((m, ids)) = &mut *self.ids.borrow_mut() {
                *m = Some(mark);
                ids.extend(good.iter().map(|r| r.id).filter(|id| held.binary_search(id).is_err()));
            }
        } else {
            self.store.put_many(items).await?;
            *self.ids.borrow_mut() = None;
        }
        Ok(bad.len() as u32)
    }
}
