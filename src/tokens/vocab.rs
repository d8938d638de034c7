//! Token bytes to rank, as a flat open-addressing table.
//!
//! A `HashMap<Vec<u8>, u32>` of 200k tokens costs ~20 MB of small heap
//! allocations and a slow start in wasm. Here every token's bytes sit in one
//! buffer, and each table slot holds `rank + 1` (0 = empty) beside 32 bits of
//! the token's hash: a probe that meets another token is rejected by the
//! hash alone, without touching that token's bytes (a lookup that misses, as
//! most pair lookups during merging do, then costs one cache line). o200k
//! takes about 6 MB and builds in a few milliseconds.

pub struct Vocabulary {
    bytes: Vec<u8>,
    /// `offsets[r]..offsets[r + 1]` are the bytes of the token of rank `r`.
    offsets: Vec<u32>,
    /// `(hash >> 32) << 32 | (rank + 1)`, or 0 for an empty slot.
    slots: Vec<u64>,
    mask: usize,
    /// Rank of every two-byte token, indexed by the two bytes (`u32::MAX`
    /// where the pair is not a token): merging starts with one such lookup
    /// per byte of the piece.
    pairs: Vec<u32>,
}

#[inline(always)]
fn hash(bytes: &[u8]) -> u64 {
    // FxHash-style mixing over 8-byte words; tokens are short, so this is a
    // handful of multiplies per lookup.
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

#[inline(always)]
fn slot_value(h: u64, rank: u32) -> u64 {
    (h & 0xFFFF_FFFF_0000_0000) | (rank as u64 + 1)
}

impl Vocabulary {
    /// Builds the table from token lengths (in rank order) and their bytes,
    /// concatenated. Returns `None` when the lengths do not add up or a token
    /// appears twice.
    pub fn new(lengths: &[u8], bytes: Vec<u8>) -> Option<Vocabulary> {
        let total: usize = lengths.iter().map(|&l| l as usize).sum();
        if total != bytes.len() || lengths.is_empty() || lengths.len() >= u32::MAX as usize {
            return None;
        }
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &l in lengths {
            at += l as u32;
            offsets.push(at);
        }
        let capacity = (lengths.len() * 2).next_power_of_two();
        let mut vocab = Vocabulary {
            bytes,
            offsets,
            slots: vec![0; capacity],
            mask: capacity - 1,
            pairs: vec![u32::MAX; 1 << 16],
        };
        for rank in 0..lengths.len() as u32 {
            let token = vocab.token(rank);
            if vocab.rank(token).is_some() {
                return None;
            }
            let h = hash(token);
            let mut slot = h as usize & vocab.mask;
            while vocab.slots[slot] != 0 {
                slot = (slot + 1) & vocab.mask;
            }
            if let [a, b] = *token {
                vocab.pairs[(a as usize) << 8 | b as usize] = rank;
            }
            vocab.slots[slot] = slot_value(h, rank);
        }
        Some(vocab)
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn token(&self, rank: u32) -> &[u8] {
        let r = rank as usize;
        &self.bytes[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }

    /// The rank of `bytes`, if they are a token.
    #[inline(always)]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let h = hash(bytes);
        let tag = h & 0xFFFF_FFFF_0000_0000;
        let mut slot = h as usize & self.mask;
        loop {
            let v = self.slots[slot];
            if v == 0 {
                return None;
            }
            if v & 0xFFFF_FFFF_0000_0000 == tag {
                let rank = (v as u32) - 1;
                if self.token(rank) == bytes {
                    return Some(rank);
                }
            }
            slot = (slot + 1) & self.mask;
        }
    }

    /// The rank of the two-byte token `a b`, or `u32::MAX`.
    #[inline(always)]
    pub fn pair_rank(&self, a: u8, b: u8) -> u32 {
        self.pairs[(a as usize) << 8 | b as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_token_and_rejects_others() {
        let tokens: Vec<&[u8]> = vec![b"a", b"b", b"ab", b"hello world 12345", b""];
        let lengths: Vec<u8> = tokens.iter().map(|t| t.len() as u8).collect();
        let v = Vocabulary::new(&lengths, tokens.concat()).unwrap();
        for (rank, t) in tokens.iter().enumerate() {
            assert_eq!(v.rank(t), Some(rank as u32));
            assert_eq!(v.token(rank as u32), *t);
        }
        assert_eq!(v.rank(b"ba"), None);
        assert_eq!(v.pair_rank(b'a', b'b'), 2);
        assert_eq!(v.pair_rank(b'b', b'a'), u32::MAX);
        assert_eq!(v.len(), 5);
    }

    #[test]
    fn rejects_duplicates_and_bad_lengths() {
        assert!(Vocabulary::new(&[1, 1], b"aa".to_vec()).is_none());
        assert!(Vocabulary::new(&[1, 2], b"ab".to_vec()).is_none());
    }
}
