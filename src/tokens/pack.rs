//! Tokenizer packs: a vocabulary shipped apart from the core wasm and loaded
//! on demand, so the default package carries no vocabulary at all.
//!
//! The format is the smallest thing that rebuilds an exact tokenizer: the
//! tokens' bytes in rank order, with their lengths in a block of their own
//! (lengths and bytes compress better apart). Merge priorities are the ranks,
//! and the pre-tokenization pattern is code, so nothing else is needed.
//!
//! ```text
//! magic    8 bytes  "AMTKPACK"
//! version  u8       1
//! pattern  u8       1 = cl100k, 2 = o200k
//! count    u32 LE   number of tokens n
//! lengths  n x u8   byte length of each token, rank order
//! bytes    ...      the tokens' bytes, concatenated
//! checksum u32 LE   FNV-1a of everything before it
//! ```

use super::pretokenize::Pattern;
use super::vocab::Vocabulary;
use super::TokenizerId;
use crate::error::{Error, ErrorCode, Result};

const MAGIC: &[u8; 8] = b"AMTKPACK";
const VERSION: u8 = 1;
const HEADER: usize = 8 + 1 + 1 + 4;

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

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
    let mut out = Vec::with_capacity(HEADER + tokens.len() * 8);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(code);
    out.extend_from_slice(&(tokens.len() as u32).to_le_bytes());
    for t in tokens {
        let len = u8::try_from(t.len()).map_err(|_| pack_error("a token is longer than 255 bytes"))?;
        out.push(len);
    }
    for t in tokens {
        out.extend_from_slice(t);
    }
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

/// Reads a pack, checking everything a truncated or foreign file could break.
pub fn decode(bytes: &[u8]) -> Result<Pack> {
    if bytes.len() < HEADER + 4 || &bytes[..8] != MAGIC {
        return Err(pack_error("not a tokenizer pack (bad magic or too short)"));
    }
    if bytes[8] != VERSION {
        return Err(pack_error(format!("pack version {} is not supported (expected {VERSION})", bytes[8])));
    }
    let (id, pattern) = match bytes[9] {
        1 => (TokenizerId::Cl100k, Pattern::Cl100k),
        2 => (TokenizerId::O200k, Pattern::O200k),
        other => return Err(pack_error(format!("unknown pack pattern {other}"))),
    };
    let (body, sum) = bytes.split_at(bytes.len() - 4);
    if fnv1a(body) != u32::from_le_bytes(sum.try_into().expect("4 bytes")) {
        return Err(pack_error("pack checksum mismatch: the file is truncated or corrupted"));
    }
    let n = u32::from_le_bytes(body[10..14].try_into().expect("4 bytes")) as usize;
    let lengths =
        body.get(HEADER..HEADER + n).ok_or_else(|| pack_error("pack shorter than its token count"))?;
    let token_bytes = body[HEADER + n..].to_vec();
    let vocabulary = Vocabulary::new(lengths, token_bytes)
        .ok_or_else(|| pack_error("pack token lengths do not match its bytes, or a token repeats"))?;
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
        (0..=255u8).map(|b| vec![b]).chain([b"ab".to_vec(), b"hello".to_vec()]).collect()
    }

    #[test]
    fn round_trips() {
        let tokens = byte_tokens();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let bytes = encode(TokenizerId::O200k, &refs).unwrap();
        let pack = decode(&bytes).unwrap();
        assert_eq!(pack.id, TokenizerId::O200k);
        assert_eq!(pack.vocabulary.len(), 258);
        assert_eq!(pack.vocabulary.rank(b"hello"), Some(257));
    }

    #[test]
    fn rejects_corruption_with_a_typed_error() {
        let tokens = byte_tokens();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let mut bytes = encode(TokenizerId::Cl100k, &refs).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        assert_eq!(decode(&bytes).err().unwrap().code, ErrorCode::TokenizerPack);
        assert!(decode(&bytes[..bytes.len() - 10]).is_err());
        assert!(decode(b"not a pack at all").is_err());
        assert!(decode(&[]).is_err());
    }
}
