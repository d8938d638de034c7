//! Token bytes to rank, as a flat open-addressing table.
//!
//! A `HashMap<Vec<u8>, u32>` of 200k tokens costs ~20 MB of small heap
//! allocations and a slow start in wasm. Here every token's bytes sit in one
//! buffer, and the table holds only `rank + 1` per slot (0 = empty): o200k
//! takes under 4 MB and builds in a few milliseconds.

pub struct Vocabulary {
    bytes: Vec<u8>,
    /// `offsets[r]..offsets[r + 1]` are the bytes of the token of rank `r`.
    offsets: Vec<u32>,
    slots: Vec<u32>,
    mask: usize,
}

#[inline]
fn hash(bytes: &[u8]) -> usize {
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
    (h ^ (h >> 29)) as usize
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
        let mut vocab = Vocabulary { bytes, offsets, slots: vec![0; capacity], mask: capacity - 1 };
        for rank in 0..lengths.len() as u32 {
            let token = vocab.token(rank);
            let mut slot = hash(token) & vocab.mask;
            loop {
                match vocab.slots[slot] {
                    0 => {
                        vocab.slots[slot] = rank + 1;
                        break;
                    }
                    other if vocab.token(other - 1) == token => return None,
                    _ => slot = (slot + 1) & vocab.mask,
                }
            }
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
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let mut slot = hash(bytes) & self.mask;
        loop {
            match self.slots[slot] {
                0 => return None,
                r if self.token(r - 1) == bytes => return Some(r - 1),
                _ => slot = (slot + 1) & self.mask,
            }
        }
    }

    /// Heap bytes held, for the memory report.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + 4 * (self.offsets.capacity() + self.slots.capacity())
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
        assert_eq!(v.len(), 5);
    }

    #[test]
    fn rejects_duplicates_and_bad_lengths() {
        assert!(Vocabulary::new(&[1, 1], b"aa".to_vec()).is_none());
        assert!(Vocabulary::new(&[1, 2], b"ab".to_vec()).is_none());
    }
}
