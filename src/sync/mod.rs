//! Sync: two replicas of a set of immutable items (the long-term log's
//! operations) made equal by exchanging only what differs.
//!
//! Reconciliation is range-based ([negentropy]): the initiator sends
//! fingerprints of ranges of its items, ordered by time then id; the peer
//! answers with its own for the ranges that differ, split finer, down to
//! lists of ids; so two nearly equal replicas exchange bytes in proportion
//! to their difference, not to their size. Alongside, each exchange carries
//! the records the peer lacks and asks for the ones this side lacks.
//!
//! - **One exchange at a time**, bytes in and bytes out ([`Transport`]):
//!   what a host's `fetch` to a relay or a WebSocket round trip gives. The
//!   library makes no network call of its own. The answering side keeps no
//!   state between exchanges ([`answer`]), so a relay may restart between
//!   two, and an exchange cut off midway loses nothing but itself: what
//!   landed stays, and the next sync finds the rest.
//! - **Frames are versioned and bounded** ([`frame`]): a peer of another
//!   version gets `SYNC_VERSION`, an oversized or malformed frame is an
//!   error value.
//! - **Items are opaque here**: a [`Replica`] names its items by 32-byte
//!   ids and hands over their bytes. The relay ([`Relay`]) keeps them as
//!   records it never reads (sealed ones it cannot read); the memory's own
//!   replica checks every record it receives against its id, and lands it
//!   in its log.
//!
//! An item id: the first 8 bytes are a big-endian hybrid logical clock
//! whose top 48 bits are milliseconds (the reconciliation's timestamp),
//! then the writer (8 bytes), the content hash (8), the item's kind (1),
//! and zeros. The kind is a family (its low 5 bits: 1, long-term memory;
//! 2, sessions' messages and summaries) and three flags a relay acts on
//! without reading any item:
//!
//! - [`ERASED`]: what is left of an item once its content was deleted (a
//!   forgotten memory's write, a judged mark run out), with the clock,
//!   writer and hash of the original. Its id differs, so the erasure
//!   travels like any item; a replica holding it lists it alone, drops the
//!   original (on arrival, and from its store), and never takes the
//!   original again.
//! - [`PURGE`]: the family purged: every item of it stamped before the
//!   purge is dropped, held or arriving.
//! - [`TOMBSTONE`]: an item that only deletes (a forget, an erasure that
//!   carries no link another memory's state depends on): once it has been
//!   everywhere long enough, it and what it deleted can be forgotten
//!   without changing any view, so a relay drops it after its horizon
//!   ([`Relay`]). An erased version that replaced another keeps its links
//!   (the older version stays replaced), so it is history, kept; so is a
//!   purge.
//!
//! What a relay dropped must not come back from a device that still holds
//! it. Each side of a sync records, per peer (a relay names itself in its
//! answers), the items the two held alike at their last complete sync
//! ([`held`]): an item listed there that the peer now lacks was deleted
//! there (collected, or erased), so it is dropped here rather than sent
//! back. What was written or received since is not listed, so it goes
//! out. A device away past the horizon comes back the same way: what it
//! held then and the relay no longer has goes, what it wrote offline
//! stays and is sent.

mod deadline;
pub mod frame;
pub mod held;
mod reconcile;
mod relay;
pub mod sent;

#[cfg(test)]
mod horizon_tests;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod tests;

pub use deadline::{Timed, EXCHANGE_TIMEOUT_MS};
pub use frame::{check_len, MAX_FRAME, PROTOCOL_VERSION};
pub use reconcile::{answer, sync, SyncReport};
pub use relay::{Relay, COLLECT_EVERY_MS, DEFAULT_HORIZON_MS};

use crate::error::Result;
use crate::ports::LocalBoxFuture;
use crate::store::Store;

pub const ID_LEN: usize = 32;
pub type ItemId = [u8; ID_LEN];

/// The kind byte of a long-term operation's id.
pub const KIND_LONG_TERM: u8 = 1;
/// The kind byte of a session's message, summary or erasure
/// ([`crate::working::session::replica`]).
pub const KIND_SESSION: u8 = 2;
/// The family bits of a kind byte.
pub const FAMILY: u8 = 0x1f;
/// The flag of an erased item (its original: the same id without it).
pub const ERASED: u8 = 0x80;
/// The flag of a purge (the family's items stamped before it are gone).
pub const PURGE: u8 = 0x40;
/// The flag of an item that only deletes: a relay drops it after its
/// horizon.
pub const TOMBSTONE: u8 = 0x20;
/// Families, as a sync asks for them: bit `1 << family` for each (families
/// 0 to 7 can be named).
pub type Families = u8;
/// Long-term memory alone: what a sync covers unless it asks for more.
pub const LONG_TERM_ONLY: Families = 1 << KIND_LONG_TERM;
/// Every family: a relay holds them all.
pub const ALL_FAMILIES: Families = u8::MAX;

/// Whether `id`'s family is among `families`.
pub fn in_families(id: &ItemId, families: Families) -> bool {
    let family = id[24] & FAMILY;
    family < 8 && families >> family & 1 == 1
}

/// An item as it travels: its id and its bytes (a stored operation, plain
/// or sealed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: ItemId,
    pub bytes: Vec<u8>,
}

/// The id of an item: its clock, writer, content hash and kind.
pub fn item_id(clock: u64, writer: u64, hash: u64, kind: u8) -> ItemId {
    let mut id = [0u8; ID_LEN];
    id[..8].copy_from_slice(&clock.to_be_bytes());
    id[8..16].copy_from_slice(&writer.to_be_bytes());
    id[16..24].copy_from_slice(&hash.to_be_bytes());
    id[24] = kind;
    id
}

/// The clock, writer, content hash and kind of a well-formed id (its
/// padding zero).
pub fn id_parts(id: &ItemId) -> Option<(u64, u64, u64, u8)> {
    if id[25..].iter().any(|&b| b != 0) {
        return None;
    }
    let word = |at: usize| u64::from_be_bytes(id[at..at + 8].try_into().expect("8 bytes"));
    Some((word(0), word(8), word(16), id[24]))
}

/// The id of the original an erased item stands for.
pub fn original_of(erased: &ItemId) -> ItemId {
    let mut t = *erased;
    t[24] &= !(ERASED | TOMBSTONE);
    t
}

/// The ids an erasure of `original` may have: with its links, and as a
/// tombstone.
pub fn erasures_of(original: &ItemId) -> [ItemId; 2] {
    let (mut kept, mut tomb) = (*original, *original);
    kept[24] |= ERASED;
    tomb[24] |= ERASED | TOMBSTONE;
    [kept, tomb]
}

/// The reconciliation's timestamp of an item: the milliseconds of its clock.
pub fn timestamp(id: &ItemId) -> u64 {
    u64::from_be_bytes(id[..8].try_into().expect("8 bytes")) >> 16
}

/// One side of a sync: a set of items.
pub trait Replica {
    /// The families it syncs: reconciliation covers only those both sides
    /// sync, so a device without sessions neither sends nor is offered
    /// session items.
    fn families(&self) -> Families;

    /// The ids of every item held (of its families).
    fn ids(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>>;

    /// The records of those of `ids` it holds.
    fn read<'a>(&'a self, ids: &'a [ItemId]) -> LocalBoxFuture<'a, Result<Vec<Record>>>;

    /// Takes records a peer sent; says how many it rejected as damaged.
    fn write(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>>;

    /// Takes records a peer sent again, to replace the copies held of the
    /// same ids (its items sealed under a new key): a relay overwrites
    /// what it holds; a replica that opens its items holds their content
    /// already, so to it they are news like any other.
    fn replace(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        self.write(records)
    }

    /// The ids of the items the peer must take anew, replacing its copies
    /// (`replace`): none, unless what this side sent before went out under
    /// another seal than it has now.
    fn resend(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The id this side names itself by in its answers (a relay's), so
    /// that a peer keeps what the two held alike ([`held`]); none for a
    /// side that never drops what it held (a memory answering directly).
    fn peer_id(&self) -> LocalBoxFuture<'_, Result<Option<u64>>> {
        Box::pin(async { Ok(None) })
    }

    /// Where this side keeps, per peer, what the two held alike ([`held`]);
    /// none: it sends everything the peer lacks.
    fn held_store(&self) -> Option<&dyn Store> {
        None
    }

    /// Drops items the peer deleted since the two last held them alike
    /// (a tombstone it collected, an original it erased).
    fn drop_gone(&self, _ids: Vec<ItemId>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// The host's way to the peer: one request, one answer.
pub trait Transport {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>>;
}
