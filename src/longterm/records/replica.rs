//! The log as one side of a sync ([`crate::sync`]): its operations as items
//! named by their ids, and the operations a peer sends, each checked
//! against its id before it lands.
//!
//! An operation's item id is its stamp and content hash ([`OpId`]), so a
//! record whose text was altered on the way does not match its id and is
//! rejected. A forget travels as its own operation, and the receiver erases
//! what it forgets, as the forgetter did.
//!
//! Deletion travels as items too ([`crate::sync`]'s flags):
//! - **An erased operation** ([`Action::Erased`]) is listed under its
//!   original's id flagged [`ERASED`], so it reaches every peer (the relay
//!   too, which then drops the original). A replica holding it takes no
//!   original again; one holding the original takes it in its place. Its
//!   text is gone, so it cannot be checked by the original's hash: what is
//!   checked is its stamp, that it names the id it erases, and, where the
//!   original is held, that it is exactly the original erased. What
//!   authenticates it is sealing: sealed under the namespace's key and
//!   bound to its id, it opens only if a device made it. An unsealed relay
//!   (trusted like any store) could make one for an operation a device
//!   does not hold yet, and so hide that memory from it: delete it, never
//!   change it.
//! - **A judged mark run out** is held and listed erased, so two replicas
//!   stop sending it to each other once it expires.
//! - **A purge** ([`Action::Purge`]) is an operation flagged [`PURGE`]: a
//!   replica receiving one newer than its own starts its store over with
//!   only what was stamped after it, and drops whatever older arrives.

use crate::error::Result;
use crate::longterm::log::landing::line_of;
use crate::longterm::log::{Action, Op, OpId, Stamp};
use crate::longterm::records::{Changes, Records};
use crate::sync::{id_parts, item_id, ItemId, ERASED, KIND_LONG_TERM, PURGE, TOMBSTONE};

/// The operation as it syncs at `now`: a judged mark run out, erased.
fn as_synced(op: &Op, now: i64) -> std::borrow::Cow<'_, Op> {
    match op.erased().filter(|_| op.is_expired(now)) {
        Some(erased) => std::borrow::Cow::Owned(erased),
        None => std::borrow::Cow::Borrowed(op),
    }
}

/// The kind byte of an operation's item: a forget, and an erasure that
/// links nothing, only delete (tombstones, dropped after a relay's
/// horizon); an erased version that replaced others keeps them replaced.
fn kind_of(op: &Op) -> u8 {
    match &op.action {
        Action::Erased { replaces, .. } if replaces.is_empty() => KIND_LONG_TERM | ERASED | TOMBSTONE,
        Action::Erased { .. } => KIND_LONG_TERM | ERASED,
        Action::Forget { .. } => KIND_LONG_TERM | TOMBSTONE,
        Action::Purge => KIND_LONG_TERM | PURGE,
        _ => KIND_LONG_TERM,
    }
}

/// The item id of an operation as it syncs.
fn item_of(id: &OpId, op: &Op) -> Option<ItemId> {
    let (stamp, hash) = id.parts()?;
    Some(item_id(stamp.clock, stamp.writer, hash, kind_of(op)))
}

/// The operation a peer sent as `line` under `item`, if it is the one the
/// id names; else why not.
fn check(item: &ItemId, line: &str) -> std::result::Result<(OpId, Op), &'static str> {
    let (clock, writer, hash, _) = id_parts(item).ok_or("not a well-formed item id")?;
    let op: Op = serde_json::from_str(line).map_err(|_| "not an operation")?;
    if item[24] != kind_of(&op) {
        return Err("not an item of long-term memory, or not of the kind its id says");
    }
    if op.entry().is_some_and(|e| e.validate().is_err()) {
        return Err("an operation writing an invalid memory");
    }
    let stamp = Stamp { clock, writer };
    let id = OpId::from_parts(stamp, hash);
    if op.stamp != stamp {
        return Err("an operation stamped otherwise than its id says");
    }
    let matches = match Op::named_in(line) {
        Some(named) => named == id && op.is_erased(),
        None => OpId::of(stamp, line) == id && !op.is_erased(),
    };
    if !matches {
        return Err("an operation whose content does not match its id (altered)");
    }
    Ok((id, op))
}

impl Records {
    /// The item ids of every operation held.
    pub fn item_ids(&self) -> Vec<ItemId> {
        let now = self.clock.now_ms();
        self.log.ops().filter_map(|(id, op)| item_of(id, &as_synced(op, now))).collect()
    }

    /// The stored lines of those of `items` held as they name them (an
    /// original whose erased twin is held is not).
    pub fn lines_of(&self, items: &[ItemId]) -> Vec<(ItemId, String)> {
        let now = self.clock.now_ms();
        items
            .iter()
            .filter_map(|item| {
                let (clock, writer, hash, _) = id_parts(item)?;
                let id = OpId::from_parts(Stamp { clock, writer }, hash);
                let op = as_synced(self.log.get(&id)?, now);
                (item_of(&id, &op)? == *item).then(|| (*item, line_of(&id, &op)))
            })
            .collect()
    }

    /// Drops the operations listed as `items` (ones a peer deleted since
    /// the two last held them alike: [`crate::sync::held`]) from the log
    /// and from the records holding them.
    pub async fn drop_items(&mut self, items: &[ItemId]) -> Result<()> {
        let now = self.clock.now_ms();
        let mut ids: Vec<OpId> = items
            .iter()
            .filter_map(|item| {
                let (clock, writer, hash, _) = id_parts(item)?;
                let id = OpId::from_parts(Stamp { clock, writer }, hash);
                // Only as listed: an operation erased since is another item.
                (item_of(&id, &as_synced(self.log.get(&id)?, now))? == *item).then_some(id)
            })
            .collect();
        crate::order::sort(&mut ids);
        let dropped = self.log.remove(&ids);
        if !dropped.is_empty() {
            self.landing.rewrite(&self.log, &dropped).await?;
            self.landing.new_epoch(now).await?;
            self.note_changes();
        }
        Ok(())
    }

    /// Lands the operations a peer sent (`(item id, line)`) that are the
    /// ones their ids name and are not held yet, as one write of this
    /// instance, then erases what a forget among them forgets; an erased
    /// twin of an operation held takes its place, and a purge newer than
    /// any held starts the store over. Gives those rejected, with why, and
    /// the conflicts settled: an erasure meeting its original held, or an
    /// original meeting its erasure held.
    pub async fn receive(
        &mut self,
        lines: Vec<(ItemId, String)>,
    ) -> Result<(Vec<(OpId, &'static str)>, u32)> {
        let now = self.clock.now_ms();
        let mut rejected = Vec::new();
        let mut conflicts = 0;
        let mut fresh: Vec<(OpId, Op)> = Vec::new();
        let mut twins: Vec<(OpId, Op)> = Vec::new();
        for (item, line) in &lines {
            let (id, op) = match check(item, line) {
                Ok((id, op)) => (id, as_synced(&op, now).into_owned()),
                Err(why) => {
                    let (clock, writer, hash, _) = id_parts(item).unwrap_or_default();
                    rejected.push((OpId::from_parts(Stamp { clock, writer }, hash), why));
                    continue;
                }
            };
            let held = self.log.get(&id).or_else(|| fresh.iter().find(|(f, _)| *f == id).map(|(_, op)| op));
            match held {
                None => fresh.push((id, op)),
                // The erasure of an operation held: it must be that
                // operation, erased.
                Some(original) if op.is_erased() && !original.is_erased() => {
                    if original.erased().as_ref() != Some(&op) {
                        rejected.push((id, "an erasure that is not the operation it names, erased"));
                    } else if self.log.get(&id).is_some() {
                        twins.push((id, op));
                        conflicts += 1;
                    } else if let Some(f) = fresh.iter_mut().find(|(f, _)| *f == id) {
                        f.1 = op;
                    }
                }
                // Held already, or its erasure is: nothing to take.
                Some(held) => conflicts += u32::from(held.is_erased() && !op.is_erased()),
            }
        }
        let newest =
            fresh.iter().filter(|(_, op)| matches!(op.action, Action::Purge)).map(|(_, op)| op.stamp.clock);
        let purged = newest.max().unwrap_or(0).max(self.log.view().purged());
        fresh.retain(|(_, op)| op.stamp.clock >= purged);
        if fresh.is_empty() && twins.is_empty() {
            return Ok((rejected, conflicts));
        }
        for (_, op) in &fresh {
            self.stamps.observe(op.stamp);
        }
        if purged > self.log.view().purged() {
            // A purge newer than the store: only what came after it stays.
            self.log.take_erased(twins);
            let mut kept: Vec<(OpId, Op)> = self
                .log
                .ops()
                .filter(|(_, op)| op.stamp.clock >= purged)
                .map(|(id, op)| (id.clone(), op.clone()))
                .collect();
            kept.append(&mut fresh);
            self.start_over(kept, now).await?;
            return Ok((rejected, conflicts));
        }
        if !twins.is_empty() {
            let erased = self.log.take_erased(twins);
            self.landing.rewrite(&self.log, &erased).await?;
        }
        let forgets = fresh.iter().any(|(_, op)| matches!(op.action, Action::Forget { .. }));
        self.landing.land(&mut self.log, &fresh, now).await?;
        self.note_changes();
        if forgets || fresh.iter().any(|(_, op)| self.log.view().is_erasable(op)) {
            self.landing.erase_forgotten(&mut self.log).await?;
        }
        let _ = self.landing.compact_if_due(&self.log, now).await;
        Ok((rejected, conflicts))
    }

    /// Deletes every record of long-term memory and writes `kept` anew, as
    /// one write, with their ids (a purge, made here or received).
    pub(super) async fn start_over(&mut self, kept: Vec<(OpId, Op)>, now: i64) -> Result<()> {
        self.landing.purge(now).await?;
        self.log = Default::default();
        self.landing.land(&mut self.log, &kept, now).await?;
        self.landing.erase_forgotten(&mut self.log).await?;
        self.log.take_refolded();
        self.probes.reset();
        self.changes = Changes::All;
        Ok(())
    }
}
