//! FNV-1a, in 64 bits and 32: a hash that is the same on every platform and
//! in every release (std's hasher is neither), for ids and checksums that are
//! stored or compared across instances. Not a defence against a forger: sealed stores
//! authenticate records; this only names content.

/// A streaming FNV-1a hasher.
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    pub fn feed(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    pub fn finish(&self) -> u64 {
        self.0
    }

    /// The hash of `bytes` fed at once.
    pub fn of(bytes: &[u8]) -> u64 {
        Fnv64::default().feed(bytes).finish()
    }
}

/// FNV-1a, 32 bits: the checksum of a tokenizer pack (its format fixes it).
pub fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h: u32, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_32_bit_hash_matches_the_published_test_vectors() {
        assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a_32(b"foo"), 0xa9f3_7ed7);
    }

    #[test]
    fn matches_the_published_test_vectors() {
        assert_eq!(Fnv64::default().finish(), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv64::default().feed(b"a").finish(), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv64::default().feed(b"foo").finish(), 0xdcb2_7518_fed9_d577);
        // Fed in parts, the same as fed at once.
        assert_eq!(Fnv64::default().feed(b"fo").feed(b"o").finish(), Fnv64::default().feed(b"foo").finish());
    }
}
