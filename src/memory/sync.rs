//! Sync of the namespace's long-term memory with a peer (a relay, or
//! another memory): the memory as one side of [`crate::sync`].
//!
//! What leaves is each operation's stored line, sealed under the memory's
//! key when it has one (bound to the operation's id and the namespace), so
//! a relay holds ids, stamps and ciphertext only. What arrives is opened,
//! checked against its id and landed in the log ([`LongTermMemory::receive`]);
//! a record that does not open or does not match is reported as damaged
//! (`sync/<op id>`) and never applied. Every exchange goes through the
//! host's transport within a deadline, like a model call.

use serde::Serialize;

use super::Memory;
use crate::error::Result;
use crate::longterm::LongTermMemory;
use crate::ports::LocalBoxFuture;
use crate::sync::{ItemId, Record, Replica, SyncReport, Timed, Transport};

/// This instance's syncs, for `stats().sync`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SyncStats {
    /// When the last sync ended (ms), and how many ran.
    pub last_at: i64,
    pub syncs: u32,
    /// Operations sent, received and rejected, over every sync.
    pub sent: u64,
    pub received: u64,
    pub rejected: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Why the last sync failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The memory as a replica of its operations.
struct Side<'a>(&'a Memory);

impl Replica for Side<'_> {
    fn ids(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(self.0.read(|r| r.item_ids()))
    }

    fn read<'a>(&'a self, ids: &'a [ItemId]) -> LocalBoxFuture<'a, Result<Vec<Record>>> {
        Box::pin(async move {
            let lines = self.0.read(|r| r.lines_of(ids)).await?;
            let sealed = &self.0.inner.sealed;
            let mut records = Vec::with_capacity(lines.len());
            for (id, line) in lines {
                records.push(Record { id, bytes: sealed.seal_item(&id, line.into_bytes()).await? });
            }
            Ok(records)
        })
    }

    fn write(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        Box::pin(async move {
            let (sealed, damage) = (&self.0.inner.sealed, &self.0.inner.damage);
            let mut lines = Vec::with_capacity(records.len());
            let mut rejected = 0;
            for Record { id, bytes } in records {
                let opened = sealed.open_item(&id, bytes).await?;
                match opened.and_then(|b| String::from_utf8(b).map_err(|_| "a synced item that is not text"))
                {
                    Ok(line) => lines.push((id, line)),
                    Err(why) => {
                        damage.report(&format!("sync/{}", crate::base64::hex(&id)), why);
                        rejected += 1;
                    }
                }
            }
            let landed = self.0.write(async |r: &mut LongTermMemory| r.receive(lines).await).await?;
            Ok(rejected + landed)
        })
    }
}

impl Memory {
    /// Makes this memory's long-term operations and the peer's behind
    /// `transport` the same set ([`crate::sync::sync`]); what arrives is
    /// checked, landed and folded, a forget erasing what it forgets.
    pub async fn sync(&self, transport: &dyn Transport) -> Result<SyncReport> {
        let _turn = self.sync_turn().await?;
        let timed = Timed::new(transport, self.inner.clock.as_ref());
        let out = crate::sync::sync(&Side(self), &timed).await;
        let mut stats = self.inner.sync.borrow_mut();
        let s = stats.get_or_insert_with(SyncStats::default);
        s.last_at = self.inner.clock.now_ms();
        s.syncs += 1;
        match &out {
            Ok(r) => {
                s.sent += u64::from(r.sent);
                s.received += u64::from(r.received);
                s.rejected += u64::from(r.rejected);
                s.bytes_sent += r.bytes_sent;
                s.bytes_received += r.bytes_received;
                s.last_error = None;
            }
            Err(e) => s.last_error = Some(e.to_string()),
        }
        out
    }

    /// The answer to one exchange of a peer's sync: a memory answers
    /// another directly, with no relay between.
    pub async fn answer_sync(&self, request: &[u8]) -> Result<Vec<u8>> {
        crate::sync::answer(&Side(self), request).await
    }
}
