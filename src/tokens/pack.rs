//! Tokenizer packs: a vocabulary shipped apart from the core wasm and loaded
//! on demand, so the default package carries no vocabulary at all.
//!
//! A pack holds what rebuilds an exact tokenizer, in as few gzipped bytes as
//! we found. BPE made every token but the single bytes by merging two tokens
//! of lower rank, so a pack stores each token as the ranks of two earlier
//! tokens whose bytes it joins, not as its bytes: o200k's tokens are 1.6 MB
//! of bytes and 0.99 MB gzipped, their pairs 0.73 MB gzipped. The ranks are
//! written in planes (the low, middle and high byte of every left rank, then
//! of every right rank) because the bytes of one plane are alike and gzip
//! codes them tightly (the same pairs as varints: 0.77 MB). Merge priorities
//! are the ranks, and the pre-tokenization pattern is code, so nothing else
//! is needed.
//!
//! ```text
//! magic    8 bytes  "AMTKPACK"
//! version  u8       2
//! pattern  u8       1 = cl100k, 2 = o200k
//! count    u32 LE   number of tokens n, under 2^24
//! left     3 x n    each token's left part, rank order: n low bytes of its rank, n middle, n high
//! right    3 x n    each token's right part, the same way
//! checksum u32 LE   FNV-1a of everything before it
//! ```
//!
//! A single byte is written as its own rank on the left and the byte's value
//! on the right; any other token's parts both come before it, so a pack is
//! read in one pass, and a token stays within 255 bytes.

use rustc_hash::FxHashMap;

use super::pretokenize::Pattern;
use super::vocab::Vocabulary;
use super::TokenizerId;
use crate::error::{Error, ErrorCode, Result};
use crate::hash::fnv1a_32;

const MAGIC: &[u8; 8] = b"AMTKPACK";
const VERSION: u8 = 2;
const HEADER: usize = 8 + 1 + 1 + 4;
/// Ranks are written in three bytes.
const MAX_TOKENS: usize = 1 << 24;

fn pack_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::TokenizerPack, message)
}

fn pattern_code(id: TokenizerId) -> Option<u8> {
    match id {
        TokenizerId::Cl100k => Some(1),
        TokenizerId::O200k => Some(2),
        TokenizerId::Estimate => None,
    }
}

/// A decoded pack: which tokenizer it is and its vocabulary.
pub struct Pack {
    pub id: TokenizerId,
    pub pattern: Pattern,
    pub vocabulary: Vocabulary,
}

/// Serializes tokens (in rank order) as a pack for `id`.
pub fn encode(id: TokenizerId, tokens: &[&[u8]]) -> Result<Vec<u8>> {
    let code = pattern_code(id).ok_or_else(|| pack_error("the estimate needs no pack"))?;
    if tokens.len() >= MAX_TOKENS {
        return Err(pack_error("a pack holds fewer than 2^24 tokens"));
    }
    let ranks: FxHashMap<&[u8], u32> = tokens.iter().enumerate().map(|(r, t)| (*t, r as u32)).collect();
    let mut pairs = Vec::with_capacity(tokens.len());
    for (rank, token) in tokens.iter().enumerate() {
        let rank = rank as u32;
        if token.len() > 255 {
            return Err(pack_error("a token is longer than 255 bytes"));
        }
        // Of the ways to split a token into two earlier ones, the one of the
        // smallest ranks: any split rebuilds the same bytes, and small ranks
        // gzip best (within 1% of every other rule tried on o200k).
        pairs.push(match **token {
            [byte] => (rank, byte as u32),
            _ => (1..token.len())
                .filter_map(|k| Some((*ranks.get(&token[..k])?, *ranks.get(&token[k..])?)))
                .filter(|&(l, r)| l < rank && r < rank)
                .min_by_key(|&(l, r)| l + r)
                .ok_or_else(|| pack_error(format!("token {rank} is not two tokens of lower rank merged")))?,
        });
    }
    Ok(write(code, &pairs))
}

/// The pack of these (left, right) pairs, as [`decode`] reads it.
fn write(code: u8, pairs: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + pairs.len() * 6 + 4);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(code);
    out.extend_from_slice(&(pairs.len() as u32).to_le_bytes());
    for side in [|p: &(u32, u32)| p.0, |p: &(u32, u32)| p.1] {
        for shift in [0, 8, 16] {
            out.extend(pairs.iter().map(|p| (side(p) >> shift) as u8));
        }
    }
    seal(out)
}

/// Appends the checksum [`decode`] checks to a pack's body: FNV-1a of every
/// byte before it (for a tool that edits a pack, as the fuzz target does).
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let sum = fnv1a_32(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    body
}

/// Reads a pack, checking everything a truncated or foreign file could break.
pub fn decode(bytes: &[u8]) -> Result<Pack> {
    if bytes.len() < HEADER + 4 || &bytes[..8] != MAGIC {
        return Err(pack_error("not a tokenizer pack (bad magic or too short)"));
    }
    if bytes[8] != VERSION {
        return Err(pack_error(format!(
            "pack version {} is not supported: this version reads version {VERSION}, the packs shipped with it",
            bytes[8]
        )));
    }
    let (id, pattern) = match bytes[9] {
        1 => (TokenizerId::Cl100k, Pattern::Cl100k),
        2 => (TokenizerId::O200k, Pattern::O200k),
        other => return Err(pack_error(format!("unknown pack pattern {other}"))),
    };
    let (body, sum) = bytes.split_at(bytes.len() - 4);
    if fnv1a_32(body) != u32::from_le_bytes(sum.try_into().expect("4 bytes")) {
        return Err(pack_error("pack checksum mismatch: the file is truncated or corrupted"));
    }
    let n = u32::from_le_bytes(body[10..14].try_into().expect("4 bytes")) as usize;
    let planes = &body[HEADER..];
    if n == 0 || n >= MAX_TOKENS || planes.len() != 6 * n {
        return Err(pack_error("pack length does not match its token count"));
    }
    let rank = |plane: usize, i: usize| {
        let at = |byte: usize| planes[(plane * 3 + byte) * n + i] as usize;
        at(0) | at(1) << 8 | at(2) << 16
    };
    let mut lengths: Vec<u8> = Vec::with_capacity(n);
    let mut starts: Vec<usize> = Vec::with_capacity(n);
    let mut token_bytes = Vec::with_capacity(n * 8);
    for i in 0..n {
        let (l, r) = (rank(0, i), rank(1, i));
        starts.push(token_bytes.len());
        let length = if l == i {
            token_bytes.push(u8::try_from(r).map_err(|_| pack_error(format!("pack token {i} is no byte")))?);
            1
        } else if l < i && r < i {
            let length = u8::try_from(lengths[l] as usize + lengths[r] as usize)
                .map_err(|_| pack_error(format!("pack token {i} is longer than 255 bytes")))?;
            for part in [l, r] {
                token_bytes.extend_from_within(starts[part]..starts[part] + lengths[part] as usize);
            }
            length
        } else {
            return Err(pack_error(format!("pack token {i} is made of tokens that come after it")));
        };
        lengths.push(length);
    }
    let vocabulary =
        Vocabulary::new(&lengths, token_bytes).ok_or_else(|| pack_error("a token repeats in the pack"))?;
    // Byte-level BPE needs every single byte as a token, or some inputs could
    // not be encoded at all.
    if (0..=255u8).any(|b| vocabulary.rank(&[b]).is_none()) {
        return Err(pack_error("pack lacks some single-byte tokens"));
    }
    Ok(Pack { id, pattern, vocabulary })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_tokens() -> Vec<Vec<u8>> {
        let merges: [&[u8]; 5] = [b"ab", b"he", b"ll", b"hell", b"hello"];
        (0..=255u8).map(|b| vec![b]).chain(merges.iter().map(|t| t.to_vec())).collect()
    }

    /// A pack of the given (left, right) pairs, checksum included, as a
    /// damaged or hostile file could hold them.
    fn raw_pack(pairs: &[(u32, u32)]) -> Vec<u8> {
        write(2, pairs)
    }

    fn bytes_pairs() -> Vec<(u32, u32)> {
        (0..256).map(|b| (b, b)).collect()
    }

    fn refused(bytes: &[u8]) -> String {
        let e = decode(bytes).err().expect("the pack is refused");
        assert_eq!(e.code, ErrorCode::TokenizerPack);
        e.message
    }

    #[test]
    fn round_trips() {
        let tokens = byte_tokens();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let bytes = encode(TokenizerId::O200k, &refs).unwrap();
        assert_eq!(bytes.len(), HEADER + 6 * tokens.len() + 4);
        let pack = decode(&bytes).unwrap();
        assert_eq!(pack.id, TokenizerId::O200k);
        assert_eq!(pack.vocabulary.len(), 261);
        for (rank, token) in tokens.iter().enumerate() {
            assert_eq!(pack.vocabulary.rank(token), Some(rank as u32));
        }
    }

    #[test]
    fn writes_only_tokens_made_of_earlier_ones() {
        let mut tokens = byte_tokens();
        tokens.push(b"xyz".to_vec());
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let e = encode(TokenizerId::Cl100k, &refs).err().unwrap();
        assert!(e.message.contains("token 261"), "{}", e.message);
        let long = vec![b'a'; 256];
        let e = encode(TokenizerId::Cl100k, &[b"a", &long]).err().unwrap();
        assert!(e.message.contains("255"), "{}", e.message);
    }

    #[test]
    fn rejects_corruption_with_a_typed_error() {
        let tokens = byte_tokens();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let mut bytes = encode(TokenizerId::Cl100k, &refs).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        refused(&bytes);
        refused(&bytes[..bytes.len() - 10]);
        refused(b"not a pack at all");
        refused(&[]);
    }

    #[test]
    fn rejects_a_pack_whose_pairs_do_not_make_a_vocabulary() {
        // A part that comes after its token, or the token itself as a part.
        let mut pairs = bytes_pairs();
        pairs.push((257, 0));
        pairs.push((0, 1));
        assert!(refused(&raw_pack(&pairs)).contains("token 256"));
        let mut pairs = bytes_pairs();
        pairs.push((0, 256));
        assert!(refused(&raw_pack(&pairs)).contains("token 256"));
        // A single byte of a value over 255.
        let mut pairs = bytes_pairs();
        pairs[7] = (7, 300);
        assert!(refused(&raw_pack(&pairs)).contains("no byte"));
        // Tokens that double at each rank stop at 255 bytes, not at the
        // memory's end.
        let mut pairs = bytes_pairs();
        pairs.extend((256..300).map(|r| if r == 256 { (0, 0) } else { (r - 1, r - 1) }));
        assert!(refused(&raw_pack(&pairs)).contains("255 bytes"));
        // The same bytes twice.
        let mut pairs = bytes_pairs();
        pairs.extend([(1, 2), (1, 2)]);
        assert!(refused(&raw_pack(&pairs)).contains("repeats"));
        // A byte left out.
        let mut pairs = bytes_pairs();
        pairs[9] = (1, 2);
        assert!(refused(&raw_pack(&pairs)).contains("single-byte"));
        // No tokens, or a count the planes do not match.
        assert!(refused(&raw_pack(&[])).contains("count"));
        let mut bytes = raw_pack(&bytes_pairs());
        bytes[10] = 255;
        bytes.truncate(bytes.len() - 4);
        assert!(refused(&seal(bytes)).contains("count"));
    }

    #[test]
    fn names_the_version_it_reads() {
        let mut bytes = raw_pack(&bytes_pairs());
        bytes[8] = 1;
        let message = refused(&bytes);
        assert!(message.contains("version 1") && message.contains("version 2"), "{message}");
    }
}
