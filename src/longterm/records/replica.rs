//! The log as one side of a sync ([`crate::sync`]): its operations as items
//! named by their ids, and the operations a peer sends, each checked
//! against its id before it lands.
//!
//! An operation's item id is its stamp and content hash ([`OpId`]), so a
//! record whose text was altered on the way does not match its id and is
//! rejected. An erased operation ([`Action::Erased`]) keeps the id of the
//! write it stands for, whose text is gone: it cannot be checked by its
//! hash, only by its stamp. (Authenticity comes from sealing: a relay
//! without the key cannot make a record that opens.) A forget travels as
//! its own operation, and the receiver erases what it forgets, as the
//! forgetter did.

use crate::error::Result;
use crate::longterm::log::landing::line_of;
use crate::longterm::log::{Action, Op, OpId, Stamp};
use crate::longterm::records::Records;
use crate::sync::{id_parts, item_id, ItemId, KIND_LONG_TERM};

/// The item id of an operation.
fn item_of(id: &OpId) -> Option<ItemId> {
    let (stamp, hash) = id.parts()?;
    Some(item_id(stamp.clock, stamp.writer, hash, KIND_LONG_TERM))
}

/// The operation a peer sent as `line` under `item`, if it is the one the
/// id names; else why not.
fn check(item: &ItemId, line: &str) -> std::result::Result<(OpId, Op), &'static str> {
    let (clock, writer, hash, kind) = id_parts(item).ok_or("not a well-formed item id")?;
    if kind != KIND_LONG_TERM {
        return Err("not an item of long-term memory");
    }
    let op: Op = serde_json::from_str(line).map_err(|_| "not an operation")?;
    if op.entry().is_some_and(|e| e.validate().is_err()) {
        return Err("an operation writing an invalid memory");
    }
    let stamp = Stamp { clock, writer };
    let id = OpId::from_parts(stamp, hash);
    if op.stamp != stamp {
        return Err("an operation stamped otherwise than its id says");
    }
    let matches = match Op::named_in(line) {
        Some(named) => named == id && matches!(op.action, Action::Erased { .. }),
        None => OpId::of(stamp, line) == id && !matches!(op.action, Action::Erased { .. }),
    };
    if !matches {
        return Err("an operation whose content does not match its id (altered)");
    }
    Ok((id, op))
}

impl Records {
    /// The item ids of every operation held.
    pub fn item_ids(&self) -> Vec<ItemId> {
        self.log.ops().filter_map(|(id, _)| item_of(id)).collect()
    }

    /// The stored lines of those of `items` held.
    pub fn lines_of(&self, items: &[ItemId]) -> Vec<(ItemId, String)> {
        items
            .iter()
            .filter_map(|item| {
                let (clock, writer, hash, _) = id_parts(item)?;
                let id = OpId::from_parts(Stamp { clock, writer }, hash);
                Some((*item, line_of(&id, self.log.get(&id)?)))
            })
            .collect()
    }

    /// Lands the operations a peer sent (`(item id, line)`) that are the
    /// ones their ids name and are not held yet, as one write of this
    /// instance, then erases what a forget among them forgets. Gives those
    /// rejected, with why. Judged marks that have run out are not kept.
    pub async fn receive(&mut self, lines: Vec<(ItemId, String)>) -> Result<Vec<(OpId, &'static str)>> {
        let now = self.clock.now_ms();
        let mut rejected = Vec::new();
        let mut fresh: Vec<(OpId, Op)> = Vec::new();
        for (item, line) in &lines {
            match check(item, line) {
                Ok((id, op)) => {
                    let expired = matches!(op.action, Action::Processed { until, .. } if until <= now);
                    if !expired && self.log.get(&id).is_none() && !fresh.iter().any(|(f, _)| *f == id) {
                        fresh.push((id, op));
                    }
                }
                Err(why) => {
                    let (clock, writer, hash, _) = id_parts(item).unwrap_or_default();
                    rejected.push((OpId::from_parts(Stamp { clock, writer }, hash), why));
                }
            }
        }
        if fresh.is_empty() {
            return Ok(rejected);
        }
        for (_, op) in &fresh {
            self.stamps.observe(op.stamp);
        }
        let forgets = fresh.iter().any(|(_, op)| matches!(op.action, Action::Forget { .. }));
        self.landing.land(&mut self.log, &fresh, now).await?;
        self.note_changes();
        if forgets || fresh.iter().any(|(_, op)| self.log.view().is_erasable(op)) {
            self.landing.erase_forgotten(&mut self.log).await?;
        }
        let _ = self.landing.compact_if_due(&self.log, now).await;
        Ok(rejected)
    }
}
