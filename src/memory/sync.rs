//! Sync of the namespace's long-term memory with a peer (a relay, or
//! another memory): the memory as one side of [`crate::sync`]; with
//! `sessions`, its sessions' messages and summaries too
//! ([`crate::working::session::replica`]). Without, reconciliation covers
//! long-term memory alone: a relay neither offers nor sends this side the
//! session items it holds ([`crate::sync::Replica::families`]).
//!
//! What leaves is each operation's stored line, sealed under the memory's
//! key when it has one (bound to the operation's id and the namespace), so
//! a relay holds ids, stamps and ciphertext only. What arrives is opened,
//! checked against its id and landed in the log ([`LongTermMemory::receive`]);
//! a record that does not open or does not match is reported as damaged
//! (`sync/<op id>`) and never applied. Every exchange goes through the
//! host's transport within a deadline, like a model call.

use std::cell::Cell;

use serde::Serialize;

use super::Memory;
use crate::error::Result;
use crate::longterm::LongTermMemory;
use crate::ports::LocalBoxFuture;
use crate::store::layout::SYNC_SENT_KEY;
use crate::store::Store;
use crate::sync::sent::{self, Sent, PLAIN};
use crate::sync::{
    timestamp, Families, ItemId, Record, Replica, SyncReport, Timed, Transport, ERASED, FAMILY, KIND_SESSION,
    LONG_TERM_ONLY,
};

/// The family bit of sessions' items.
const SESSIONS: Families = 1 << KIND_SESSION;
use crate::working::session::replica;

/// What a sync covers beyond long-term memory (`memory.sync(transport,
/// options)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SyncOptions {
    /// The sessions' messages and summaries too (default false), so a chat
    /// goes on on another device: a message deleted (`popMessage`,
    /// `clearSession`, `forget`, `deleteSession`) stays deleted there. A
    /// sync without it neither sends nor receives session items.
    pub sessions: bool,
}

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
    /// Items received that met a competing item held here, over every
    /// sync, each settled by the rule every replica applies whatever the
    /// order of arrival: an erasure and its original (the erasure stays,
    /// whether it came first or second), two summaries of one session (the
    /// one covering more stays, the other is erased).
    pub conflicts: u64,
    /// How late the last successful sync's news came: the longest time (ms)
    /// from an item's stamp on the device that wrote it to this sync taking
    /// it, over the items it took that are not erasures (an erasure carries
    /// its original's stamp); 0 when it took none.
    pub lag_ms: u64,
    /// Why the last sync failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The memory as a replica of its operations, and of its sessions when
/// `sessions`; the families whose items it resends ([`sent`]); what the
/// items it took settled, for its stats.
struct Side<'a> {
    memory: &'a Memory,
    sessions: bool,
    resend: Cell<Families>,
    conflicts: Cell<u32>,
    lag_ms: Cell<u64>,
}

impl<'a> Side<'a> {
    fn new(memory: &'a Memory, sessions: bool) -> Side<'a> {
        Side { memory, sessions, resend: Cell::new(0), conflicts: Cell::new(0), lag_ms: Cell::new(0) }
    }

    fn is_session(id: &ItemId) -> bool {
        id[24] & FAMILY == KIND_SESSION
    }

    /// Lands session items ([`replica::receive`]), or drops those `gone`
    /// ([`replica::drop_items`]), under the namespace lock, then brings
    /// this instance's window and recall up to date. Gives the count
    /// rejected.
    async fn take_sessions(&self, records: Vec<Record>, gone: &[ItemId]) -> Result<u32> {
        let inner = &self.memory.inner;
        let _held = inner.lock.acquire().await?;
        let store = inner.sealed.as_ref();
        let got = match gone {
            [] => replica::receive(store, records).await?,
            _ => replica::drop_items(store, gone).await?,
        };
        for (id, why) in &got.rejected {
            inner.damage.report(&format!("sync/{}", crate::base64::hex(id)), why);
        }
        self.conflicts.set(self.conflicts.get() + got.conflicts);
        inner.session.lock().await.sync().await?;
        let mut longterm = inner.longterm.lock().await;
        for (session, entry) in &got.landed {
            longterm.add_turn(session, entry, None);
        }
        longterm.forget_turns(&got.erased).await?;
        Ok(got.rejected.len() as u32)
    }
}

impl Replica for Side<'_> {
    fn families(&self) -> Families {
        LONG_TERM_ONLY | if self.sessions { SESSIONS } else { 0 }
    }

    fn resend(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(async move {
            let mut ids = Vec::new();
            if self.resend.get() & LONG_TERM_ONLY != 0 {
                ids = self.memory.read(|r| r.item_ids()).await?;
            }
            if self.resend.get() & SESSIONS != 0 {
                ids.extend(replica::item_ids(self.memory.inner.sealed.as_ref()).await?);
            }
            Ok(ids)
        })
    }

    fn ids(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(async move {
            let mut ids = self.memory.read(|r| r.item_ids()).await?;
            if self.sessions {
                ids.extend(replica::item_ids(self.memory.inner.sealed.as_ref()).await?);
            }
            Ok(ids)
        })
    }

    fn read<'a>(&'a self, ids: &'a [ItemId]) -> LocalBoxFuture<'a, Result<Vec<Record>>> {
        Box::pin(async move {
            let (sessions, ops): (Vec<ItemId>, Vec<ItemId>) = ids.iter().partition(|id| Self::is_session(id));
            let mut plain: Vec<Record> = self
                .memory
                .read(|r| r.lines_of(&ops))
                .await?
                .into_iter()
                .map(|(id, line)| Record { id, bytes: line.into_bytes() })
                .collect();
            if (self.sessions || self.resend.get() & SESSIONS != 0) && !sessions.is_empty() {
                plain.extend(replica::records_of(self.memory.inner.sealed.as_ref(), &sessions).await?);
            }
            let sealed = &self.memory.inner.sealed;
            let mut records = Vec::with_capacity(plain.len());
            for Record { id, bytes } in plain {
                records.push(Record { id, bytes: sealed.seal_item(&id, bytes).await? });
            }
            Ok(records)
        })
    }

    fn held_store(&self) -> Option<&dyn Store> {
        Some(self.memory.inner.sealed.as_ref())
    }

    /// Drops what the peer deleted since the two last held it alike: out
    /// of the log, and out of the sessions, their windows and recall.
    fn drop_gone(&self, ids: Vec<ItemId>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let (sessions, ops): (Vec<ItemId>, Vec<ItemId>) = ids.into_iter().partition(Self::is_session);
            if !ops.is_empty() {
                self.memory.write(async |r: &mut LongTermMemory| r.drop_items(&ops).await).await?;
            }
            if !sessions.is_empty() {
                self.take_sessions(Vec::new(), &sessions).await?;
            }
            Ok(())
        })
    }

    fn write(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        Box::pin(async move {
            let inner = &self.memory.inner;
            let (sealed, damage) = (&inner.sealed, &inner.damage);
            let now = inner.clock.now_ms().max(0) as u64;
            let (mut lines, mut session_items) = (Vec::with_capacity(records.len()), Vec::new());
            let mut rejected = 0;
            for Record { id, bytes } in records {
                let opened = match sealed.open_item(&id, bytes).await? {
                    Ok(bytes) if Self::is_session(&id) => {
                        if self.sessions {
                            session_items.push(Record { id, bytes });
                        }
                        continue;
                    }
                    opened => opened,
                };
                match opened.and_then(|b| String::from_utf8(b).map_err(|_| "a synced item that is not text"))
                {
                    Ok(line) => lines.push((id, line)),
                    Err(why) => {
                        damage.report(&format!("sync/{}", crate::base64::hex(&id)), why);
                        rejected += 1;
                    }
                }
            }
            let news = lines.iter().map(|(id, _)| id).chain(session_items.iter().map(|r| &r.id));
            let lag =
                news.filter(|id| id[24] & ERASED == 0).map(|id| now.saturating_sub(timestamp(id))).max();
            self.lag_ms.set(self.lag_ms.get().max(lag.unwrap_or(0)));
            if !session_items.is_empty() {
                rejected += self.take_sessions(session_items, &[]).await?;
            }
            if lines.is_empty() {
                return Ok(rejected);
            }
            let (refused, conflicts) =
                self.memory.write(async |r: &mut LongTermMemory| r.receive(lines).await).await?;
            self.conflicts.set(self.conflicts.get() + conflicts);
            Ok(rejected + refused)
        })
    }
}

impl Memory {
    /// Makes this memory's long-term operations and the peer's behind
    /// `transport` the same set ([`crate::sync::sync`]); what arrives is
    /// checked, landed and folded, a forget erasing what it forgets.
    pub async fn sync(&self, transport: &dyn Transport) -> Result<SyncReport> {
        self.sync_with(transport, SyncOptions::default()).await
    }

    /// [`Memory::sync`], with the sessions' messages and summaries too
    /// when `options.sessions`. One sync of this instance runs at a time,
    /// scheduled or called: a second waits for the first.
    pub async fn sync_with(&self, transport: &dyn Transport, options: SyncOptions) -> Result<SyncReport> {
        let _turn = self.sync_turn().await?;
        let timed = Timed::new(transport, self.inner.clock.as_ref());
        let side = Side::new(self, options.sessions);
        let out: Result<SyncReport> = async {
            // What went out under another seal goes out again under this
            // one. The record is written only over what was read: an
            // instance that cannot read it (no key) leaves it be.
            let store: &dyn Store = self.inner.sealed.as_ref();
            let seal = self.inner.sealed.stats().map_or_else(|| PLAIN.to_string(), |s| s.key_id);
            let was = store.get(SYNC_SENT_KEY).await?;
            let plan = sent::plan(&Sent::parse(was.as_deref().unwrap_or("")), &seal, side.families());
            let mut held = was;
            if let Some(now) = plan.before {
                let line = now.line();
                if store
                    .put_many_if(SYNC_SENT_KEY, held.as_deref(), vec![(SYNC_SENT_KEY.into(), line.clone())])
                    .await?
                {
                    held = Some(line);
                }
            }
            side.resend.set(plan.resend);
            let report = crate::sync::sync(&side, &timed).await?;
            if let Some(then) = plan.after {
                store
                    .put_many_if(SYNC_SENT_KEY, held.as_deref(), vec![(SYNC_SENT_KEY.into(), then.line())])
                    .await?;
            }
            Ok(report)
        }
        .await;
        let mut stats = self.inner.sync.borrow_mut();
        let s = stats.get_or_insert_with(SyncStats::default);
        s.last_at = self.inner.clock.now_ms();
        s.syncs += 1;
        s.conflicts += u64::from(side.conflicts.get());
        match &out {
            Ok(r) => {
                s.sent += u64::from(r.sent);
                s.received += u64::from(r.received);
                s.rejected += u64::from(r.rejected);
                s.bytes_sent += r.bytes_sent;
                s.bytes_received += r.bytes_received;
                s.lag_ms = side.lag_ms.get();
                s.last_error = None;
            }
            Err(e) => s.last_error = Some(e.to_string()),
        }
        out
    }

    /// The answer to one exchange of a peer's sync: a memory answers
    /// another directly, with no relay between (its sessions too when
    /// `options.sessions` and the peer asks for them; a peer syncing
    /// sessions with a memory that does not is sent none, and the session
    /// items it sends are dropped).
    pub async fn answer_sync(&self, request: &[u8], options: SyncOptions) -> Result<Vec<u8>> {
        crate::sync::answer(&Side::new(self, options.sessions), request).await
    }
}
