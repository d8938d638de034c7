//! Seeded picks for tests: xorshift64, so a failing case replays from its
//! seed on every machine.

/// Picks in `0..n`, the same sequence for the same seed (which must not
/// be 0).
pub fn picker(seed: u64) -> impl FnMut(usize) -> usize {
    let mut x = seed;
    move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    }
}
