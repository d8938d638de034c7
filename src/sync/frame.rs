//! One exchange's bytes: versioned, and bounded before anything is read.
//!
//! A frame is `AM`, the protocol version, its kind, then three sections:
//! the reconciliation message (length, then bytes; empty: none), records
//! (a count, then each record's id, length and bytes), and wanted ids (a
//! count, then ids). A response ends with one byte more: 1 when some
//! wanted records did not fit and must be asked for again.
//!
//! Version 2 adds families: a request asking for more than long-term
//! memory alone is a version 2 frame ending with one byte more, the
//! families ([`crate::sync::Families`]). Version 3 adds a byte after the
//! families, flags: bit 0, the records replace the peer's copies of the
//! same ids (a device resending its items sealed under a new key); bit 1,
//! the sender asks the peer's id. Version 4 adds that id: a response to a
//! request asking for it ends with 8 bytes more, the answering side's id
//! ([`crate::sync::Replica::peer_id`]), when it has one. A version 4
//! side always asks, and answers a request that does not (an older peer,
//! which would take tombstones for damaged items) with its version. Every
//! other frame is written as the oldest version that holds it, byte for
//! byte as before, and an older relay answers a request it cannot hold
//! with its version: either way the peer reports `SYNC_VERSION` (not a
//! malformed frame). Lengths and
//! counts are LEB128 varints, each checked against what is left of the
//! frame before anything is allocated, so no input makes a reader allocate
//! more than the frame it was given.

use crate::error::{Error, ErrorCode, Result};
use crate::sync::{Families, ItemId, Record, ID_LEN, LONG_TERM_ONLY};

const MAGIC: &[u8; 2] = b"AM";
/// The newest version of the protocol this library speaks (it reads 1 to
/// 4). A peer speaking another gets [`ErrorCode::SyncVersion`].
pub const PROTOCOL_VERSION: u8 = 4;
/// The version before families: long-term memory only.
const FIRST_VERSION: u8 = 1;
/// The version of families.
const FAMILIES_VERSION: u8 = 2;
/// The version of flags.
const FLAGS_VERSION: u8 = 3;
/// The version of a response naming its side.
const PEER_VERSION: u8 = 4;
/// The flag of records that replace the peer's copies.
const REPLACE: u8 = 1;
/// The flag of a request asking the peer's id.
const ASK_ID: u8 = 2;
/// The largest frame either side sends or reads (a WebSocket message of a
/// Durable Object may be 1 MiB).
pub const MAX_FRAME: usize = 1 << 20;
/// Room a frame keeps for its head and section counts.
pub const OVERHEAD: usize = 64;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request = 1,
    Response = 2,
    /// The answer of a peer that speaks another version: its version only.
    Version = 3,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub kind: Kind,
    /// The negentropy message, if this frame carries one.
    pub query: Option<Vec<u8>>,
    pub records: Vec<Record>,
    /// Ids whose records the sender wants (requests only).
    pub wants: Vec<ItemId>,
    /// Some wanted records did not fit (responses only).
    pub cut: bool,
    /// The families the sync covers (requests only).
    pub families: Families,
    /// The records replace the peer's copies of the same ids (requests
    /// only).
    pub replace: bool,
    /// Requests: the sender asks the peer's id; responses: the answering
    /// side's id, if it has one and was asked.
    pub ask_id: bool,
    pub peer: Option<u64>,
}

/// What a record costs in a frame.
pub fn record_size(record: &Record) -> usize {
    ID_LEN + varint_len(record.bytes.len() as u64) + record.bytes.len()
}

fn varint_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn malformed(what: &str) -> Error {
    Error::invalid(format!("not a well-formed sync frame: {what}"))
}

/// The answer of a peer speaking another version.
pub fn version_error(theirs: u8) -> Error {
    Error::new(
        ErrorCode::SyncVersion,
        format!(
            "the peer speaks sync protocol version {theirs} and this library version {PROTOCOL_VERSION}: update the older side"
        ),
    )
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.0.len() {
            return Err(malformed("cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.bytes(1)?[0];
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(malformed("a number longer than 64 bits"))
    }

    /// A count of things of at least `each` bytes, checked against what is left.
    fn count(&mut self, each: usize) -> Result<usize> {
        let n = self.varint()?;
        if n > (self.0.len() / each) as u64 {
            return Err(malformed("a count larger than the frame"));
        }
        Ok(n as usize)
    }

    fn id(&mut self) -> Result<ItemId> {
        Ok(self.bytes(ID_LEN)?.try_into().expect("ID_LEN bytes"))
    }
}

/// [`ErrorCode::LimitExceeded`] for a frame of `len` bytes past
/// [`MAX_FRAME`]: a binding checks a request's length before it copies it.
pub fn check_len(len: usize) -> Result<()> {
    if len > MAX_FRAME {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            format!("a sync frame of {len} bytes; the limit is {MAX_FRAME}"),
        ));
    }
    Ok(())
}

impl Frame {
    pub fn new(kind: Kind) -> Frame {
        Frame {
            kind,
            query: None,
            records: Vec::new(),
            wants: Vec::new(),
            cut: false,
            families: LONG_TERM_ONLY,
            replace: false,
            ask_id: false,
            peer: None,
        }
    }

    /// The oldest version that holds this frame.
    fn version(&self) -> u8 {
        match self.kind {
            Kind::Version => PROTOCOL_VERSION,
            Kind::Response if self.peer.is_some() => PEER_VERSION,
            Kind::Request if self.replace || self.ask_id => FLAGS_VERSION,
            Kind::Request if self.families != LONG_TERM_ONLY => FAMILIES_VERSION,
            _ => FIRST_VERSION,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size());
        let version = self.version();
        out.extend_from_slice(MAGIC);
        out.push(version);
        out.push(self.kind as u8);
        if self.kind == Kind::Version {
            return out;
        }
        let query = self.query.as_deref().unwrap_or_default();
        put_varint(&mut out, query.len() as u64);
        out.extend_from_slice(query);
        put_varint(&mut out, self.records.len() as u64);
        for r in &self.records {
            out.extend_from_slice(&r.id);
            put_varint(&mut out, r.bytes.len() as u64);
            out.extend_from_slice(&r.bytes);
        }
        put_varint(&mut out, self.wants.len() as u64);
        for id in &self.wants {
            out.extend_from_slice(id);
        }
        if self.kind == Kind::Response {
            out.push(u8::from(self.cut));
            if let Some(peer) = self.peer {
                out.extend_from_slice(&peer.to_be_bytes());
            }
        } else if version >= FAMILIES_VERSION {
            out.push(self.families);
            if version >= FLAGS_VERSION {
                out.push((u8::from(self.replace) * REPLACE) | (u8::from(self.ask_id) * ASK_ID));
            }
        }
        out
    }

    /// An upper bound of the encoded length.
    pub fn size(&self) -> usize {
        OVERHEAD
            + self.query.as_ref().map_or(0, Vec::len)
            + self.records.iter().map(record_size).sum::<usize>()
            + self.wants.len() * ID_LEN
    }

    /// Reads a frame: [`ErrorCode::LimitExceeded`] past [`MAX_FRAME`],
    /// [`ErrorCode::SyncVersion`] from a peer of another version (whatever
    /// the rest holds) and for a peer's version answer, `INVALID_INPUT`
    /// when malformed.
    pub fn decode(bytes: &[u8]) -> Result<Frame> {
        check_len(bytes.len())?;
        let mut r = Reader(bytes);
        if r.bytes(2).ok() != Some(MAGIC.as_slice()) {
            return Err(malformed("no sync frame header"));
        }
        let version = r.bytes(1)?[0];
        if !(FIRST_VERSION..=PROTOCOL_VERSION).contains(&version) {
            return Err(version_error(version));
        }
        let kind = match r.bytes(1)?[0] {
            1 => Kind::Request,
            2 => Kind::Response,
            // The peer did not understand this side's request: a relay of
            // version 1 asked for families, say.
            3 => return Err(version_error(version)),
            _ => return Err(malformed("an unknown kind")),
        };
        let mut frame = Frame::new(kind);
        let len = r.count(1)?;
        if len > 0 {
            frame.query = Some(r.bytes(len)?.to_vec());
        }
        for _ in 0..r.count(ID_LEN + 1)? {
            let id = r.id()?;
            let len = r.count(1)?;
            frame.records.push(Record { id, bytes: r.bytes(len)?.to_vec() });
        }
        for _ in 0..r.count(ID_LEN)? {
            frame.wants.push(r.id()?);
        }
        if kind == Kind::Response {
            frame.cut = r.bytes(1)?[0] == 1;
            if version >= PEER_VERSION {
                frame.peer = Some(u64::from_be_bytes(r.bytes(8)?.try_into().expect("8 bytes")));
            }
        } else if version >= FAMILIES_VERSION {
            frame.families = r.bytes(1)?[0];
            if version >= FLAGS_VERSION {
                let flags = r.bytes(1)?[0];
                (frame.replace, frame.ask_id) = (flags & REPLACE != 0, flags & ASK_ID != 0);
            }
        }
        if !r.0.is_empty() {
            return Err(malformed("bytes after its end"));
        }
        Ok(frame)
    }
}
