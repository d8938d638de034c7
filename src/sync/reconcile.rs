//! The two roles of an exchange: the initiator ([`sync`]), which drives
//! rounds until both sides hold the same items, and the answering side
//! ([`answer`]), which keeps nothing between exchanges.

use negentropy::{Bound, Id, Item, Negentropy, NegentropyStorageBase};
use serde::Serialize;

use crate::error::{Error, ErrorCode, Result};
use crate::sync::frame::{record_size, Frame, Kind, MAX_FRAME, OVERHEAD};
use crate::sync::{held, in_families, timestamp, ItemId, Record, Replica, Transport, ID_LEN};

/// The largest reconciliation message of either side: the rest of a frame
/// carries records.
const QUERY_LIMIT: u64 = 64 * 1024;
/// Records read from a replica at a time while a frame fills.
const BATCH: usize = 256;
/// Rounds after which a sync gives up: a peer that never settles.
const MAX_ROUNDS: u32 = 10_000;

/// What a sync did (`memory.sync(transport)`, a relay's sync).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SyncReport {
    /// Operations sent to the peer.
    pub sent: u32,
    /// Operations received and taken.
    pub received: u32,
    /// Operations received and rejected as damaged (not matching their id,
    /// failing to open, or not asked for): reported, never applied.
    pub rejected: u32,
    /// Operations too large for a frame (1 MiB), left unsent.
    pub too_large: u32,
    /// Operations dropped here because the peer deleted them since the
    /// two last synced (a tombstone it collected after its horizon, what
    /// an erasure there took), instead of sent back.
    pub dropped: u32,
    /// Operations sent again to replace the peer's copies (counted in
    /// `sent` too): once, after encryption was turned on or its key
    /// rotated, every item goes out sealed under the current key.
    pub resent: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Exchanges.
    pub rounds: u32,
}

fn negentropy_error(e: negentropy::Error) -> Error {
    Error::invalid(format!("set reconciliation failed: {e}"))
}

/// Items in reconciliation order (time, then id), without duplicates:
/// negentropy's own vector storage sorts with a sort of its own, which
/// cost the wasm a copy of the standard library's sort; this one sorts
/// through [`crate::order`].
struct Sorted(Vec<Item>);

impl NegentropyStorageBase for Sorted {
    fn size(&self) -> std::result::Result<usize, negentropy::Error> {
        Ok(self.0.len())
    }

    fn get_item(&self, i: usize) -> std::result::Result<Option<Item>, negentropy::Error> {
        Ok(self.0.get(i).copied())
    }

    fn iterate(
        &self,
        begin: usize,
        end: usize,
        cb: &mut dyn FnMut(Item, usize) -> std::result::Result<bool, negentropy::Error>,
    ) -> std::result::Result<(), negentropy::Error> {
        let items = self.0.get(begin..end).ok_or(negentropy::Error::BadRange)?;
        for (at, item) in items.iter().enumerate() {
            if !cb(*item, begin + at)? {
                break;
            }
        }
        Ok(())
    }

    fn find_lower_bound(&self, first: usize, last: usize, value: &Bound) -> usize {
        first + self.0[first..last].partition_point(|item| *item < value.item)
    }
}

fn storage_of(ids: Vec<ItemId>) -> Sorted {
    let mut items: Vec<Item> = ids
        .into_iter()
        .map(|id| Item::with_timestamp_and_id(timestamp(&id), Id::from_byte_array(id)))
        .collect();
    crate::order::sort(&mut items);
    items.dedup();
    Sorted(items)
}

/// Fills `records` from `queue` (read from `replica`, [`BATCH`] at a time)
/// while they fit in `room`; says whether some did not fit. A record too
/// large for any frame is left out, its id put in `too_large`.
async fn fill(
    replica: &dyn Replica,
    queue: &mut Vec<ItemId>,
    room: &mut usize,
    records: &mut Vec<Record>,
    too_large: &mut Vec<ItemId>,
) -> Result<bool> {
    while !queue.is_empty() {
        let batch: Vec<ItemId> = queue.drain(..queue.len().min(BATCH)).collect();
        let mut read = replica.read(&batch).await?.into_iter();
        while let Some(r) = read.next() {
            let size = record_size(&r);
            if size > MAX_FRAME - OVERHEAD - QUERY_LIMIT as usize {
                too_large.push(r.id);
            } else if size > *room {
                // Back in order, for the next frame.
                let mut back: Vec<ItemId> = std::iter::once(r.id).chain(read.map(|r| r.id)).collect();
                back.append(queue);
                *queue = back;
                return Ok(true);
            } else {
                *room -= size;
                records.push(r);
            }
        }
    }
    Ok(false)
}

/// Makes `replica` and the peer behind `transport` hold the same items:
/// rounds of reconciliation, each carrying the records the peer lacks and
/// asking for the ones this side lacks, until nothing differs. Records
/// land as they arrive, so a sync cut off midway keeps what it got.
///
/// With a peer that names itself and a replica that keeps what the two
/// held alike ([`held`]), an item held alike that the peer now lacks is
/// dropped here, not sent; once nothing differs, what the two hold alike
/// is recorded.
pub async fn sync(replica: &dyn Replica, transport: &dyn Transport) -> Result<SyncReport> {
    let storage = storage_of(replica.ids().await?);
    let mut negentropy = Negentropy::borrowed(&storage, QUERY_LIMIT).map_err(negentropy_error)?;
    let mut query = Some(negentropy.initiate().map_err(negentropy_error)?);
    // Queues, first out at the front (a `VecDeque` of ids cost the wasm more).
    let (mut give, mut want): (Vec<ItemId>, Vec<ItemId>) = (Vec::new(), Vec::new());
    // The peer's id and what the two held alike; what the peer dropped
    // since; what arrived; what no frame could carry.
    let mut alike: Option<held::Alike> = None;
    let (mut gone, mut got, mut too_large) = (Vec::new(), Vec::new(), Vec::new());
    let mut report = SyncReport::default();
    while query.is_some() || !give.is_empty() || !want.is_empty() {
        if report.rounds == MAX_ROUNDS {
            return Err(Error::invalid(format!("the peer did not settle in {MAX_ROUNDS} exchanges")));
        }
        report.rounds += 1;
        let mut request = Frame::new(Kind::Request);
        request.query = query.take();
        request.families = replica.families();
        request.ask_id = true;
        let mut room = MAX_FRAME - request.size();
        // Ids first (32 bytes each), at most half the room: the rest carries records.
        let wants = want.len().min(room / 2 / ID_LEN);
        request.wants = want.drain(..wants).collect();
        room -= wants * ID_LEN;
        fill(replica, &mut give, &mut room, &mut request.records, &mut too_large).await?;
        let bytes = request.encode();
        report.bytes_sent += bytes.len() as u64;
        report.sent += request.records.len() as u32;
        let answer = transport.exchange(bytes).await?;
        report.bytes_received += answer.len() as u64;
        let reply = Frame::decode(&answer)?;
        if reply.kind != Kind::Response {
            return Err(Error::invalid("the peer answered a sync request with a request"));
        }
        if let (None, Some(peer), Some(store)) = (&alike, reply.peer, replica.held_store()) {
            alike = Some(held::Alike::read(store, peer, replica.families()).await?);
        }
        // Sorted for lookups (a set of ids cost the wasm a B-tree of its own).
        let mut asked = request.wants.clone();
        crate::order::sort(&mut asked);
        let (records, unasked): (Vec<Record>, Vec<Record>) =
            reply.records.into_iter().partition(|r| asked.binary_search(&r.id).is_ok());
        report.rejected += unasked.len() as u32;
        if reply.cut {
            let mut got: Vec<ItemId> = records.iter().map(|r| r.id).collect();
            crate::order::sort(&mut got);
            let mut again: Vec<ItemId> =
                request.wants.iter().filter(|id| got.binary_search(id).is_err()).copied().collect();
            again.append(&mut want);
            want = again;
        }
        if !records.is_empty() {
            let n = records.len() as u32;
            got.extend(records.iter().map(|r| r.id));
            let rejected = replica.write(records).await?;
            report.received += n - rejected.min(n);
            report.rejected += rejected.min(n);
        }
        if request.query.is_some() {
            let message =
                reply.query.ok_or_else(|| Error::invalid("the peer's answer lacks its reconciliation"))?;
            let (mut have, mut need) = (Vec::new(), Vec::new());
            query =
                negentropy.reconcile_with_ids(&message, &mut have, &mut need).map_err(negentropy_error)?;
            for id in have.into_iter().map(|id| id.to_bytes()) {
                match &alike {
                    Some(alike) if alike.holds(&id) => gone.push(id),
                    _ => give.push(id),
                }
            }
            want.extend(need.into_iter().map(|id| id.to_bytes()));
        }
    }
    report.too_large = too_large.len() as u32;
    report.dropped = gone.len() as u32;
    if let (Some(alike), Some(store)) = (alike, replica.held_store()) {
        if !gone.is_empty() {
            replica.drop_gone(gone).await?;
        }
        // Held alike now: what both held from the start, or arrived. What
        // was written here meanwhile is not among them; what arrived and
        // was refused, or left, is not held, so never offered as held.
        got.extend(storage.0.iter().map(|i| i.id.to_bytes()));
        alike.write(store, &got, &too_large).await?;
    }
    resend(replica, transport, &mut report).await?;
    Ok(report)
}

/// Sends the records the replica must resend ([`Replica::resend`]) in
/// frames that replace the peer's copies; the peer's answers carry nothing
/// (nothing is asked).
async fn resend(replica: &dyn Replica, transport: &dyn Transport, report: &mut SyncReport) -> Result<()> {
    let mut queue = replica.resend().await?;
    while !queue.is_empty() {
        report.rounds += 1;
        let mut request = Frame::new(Kind::Request);
        request.families = replica.families();
        (request.replace, request.ask_id) = (true, true);
        let mut room = MAX_FRAME - request.size();
        let mut too_large = Vec::new();
        fill(replica, &mut queue, &mut room, &mut request.records, &mut too_large).await?;
        report.too_large += too_large.len() as u32;
        let bytes = request.encode();
        report.bytes_sent += bytes.len() as u64;
        report.sent += request.records.len() as u32;
        report.resent += request.records.len() as u32;
        let answer = transport.exchange(bytes).await?;
        report.bytes_received += answer.len() as u64;
        if Frame::decode(&answer)?.kind != Kind::Response {
            return Err(Error::invalid("the peer answered a sync request with a request"));
        }
    }
    Ok(())
}

/// The answer to one exchange of a peer's [`sync`]: takes the records it
/// carries, answers its reconciliation and sends the records it asks for
/// (as many as fit). A request of another protocol version is answered
/// with this side's version, so the peer fails with `SYNC_VERSION`.
pub async fn answer(replica: &dyn Replica, request: &[u8]) -> Result<Vec<u8>> {
    let request = match Frame::decode(request) {
        Err(e) if e.code == ErrorCode::SyncVersion => return Ok(Frame::new(Kind::Version).encode()),
        other => other?,
    };
    if request.kind != Kind::Request {
        return Err(Error::invalid("a sync answer came where a request was expected"));
    }
    // A peer of version 4 asks the id; an older one would take tombstones
    // for damaged items: it is told to update.
    if !request.ask_id {
        return Ok(Frame::new(Kind::Version).encode());
    }
    if !request.records.is_empty() {
        if request.replace {
            replica.replace(request.records).await?;
        } else {
            replica.write(request.records).await?;
        }
    }
    // Only what both sides sync: the peer is neither offered nor sent
    // items of a family it did not ask for.
    let families = request.families & replica.families();
    let mut reply = Frame::new(Kind::Response);
    reply.peer = replica.peer_id().await?;
    if let Some(query) = &request.query {
        let mut ids = replica.ids().await?;
        ids.retain(|id| in_families(id, families));
        let storage = storage_of(ids);
        let mut negentropy = Negentropy::borrowed(&storage, QUERY_LIMIT).map_err(negentropy_error)?;
        reply.query = Some(negentropy.reconcile(query).map_err(negentropy_error)?);
    }
    let mut room = MAX_FRAME - reply.size();
    let mut wants = request.wants;
    wants.retain(|id| in_families(id, families));
    reply.cut = fill(replica, &mut wants, &mut room, &mut reply.records, &mut Vec::new()).await?;
    Ok(reply.encode())
}
