//! Message positions that cannot collide between writers.
//!
//! Several instances may write one session at once: two tabs, a worker, a
//! parent agent and its `agent:` sub-agent. A per-instance counter gives
//! them the same keys, and the later write silently replaces the earlier.
//! So each instance is a *writer* with a random 64-bit id, and a position is
//! a pair: a hybrid logical clock (milliseconds << 16, plus a counter for
//! messages within one millisecond, never behind any position the writer
//! has seen), then the writer's id. Keys differ whenever writers differ, and
//! the order is the order of time, ties broken by writer, the same in every
//! instance (the store lists keys in that order).
//!
//! Key text: `<clock, 16 hex>-<writer, 16 hex>`. Sessions written before
//! writers existed have keys `<seq, 16 hex>` (small counters): they read as
//! writer 0 and sort before every clock position.

use crate::working::conversation::Seq;

thread_local! {
    /// The newest clock value handed out in this realm.
    static REALM_LAST: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A writer's next positions.
#[derive(Debug, Clone)]
pub struct PositionClock {
    writer: u64,
    last: u64,
}

impl PositionClock {
    pub fn new(writer: u64) -> PositionClock {
        PositionClock { writer, last: 0 }
    }

    pub fn writer(&self) -> u64 {
        self.writer
    }

    /// The position of a message written now: after everything this
    /// writer has seen, and after every position handed out in this realm
    /// (instances in one page, worker or process share one clock, so their
    /// messages within one millisecond keep the order they were written in).
    pub fn next(&mut self, now_ms: i64) -> Seq {
        let wall = (now_ms.max(0) as u64).saturating_mul(1 << 16);
        self.last = REALM_LAST.with(|realm| {
            let next = wall.max(self.last.saturating_add(1)).max(realm.get().saturating_add(1));
            realm.set(next);
            next
        });
        make(self.last, self.writer)
    }

    /// Moves the clock past a position read from the store, so that a
    /// writer whose clock runs behind another's still appends after it.
    pub fn observe(&mut self, seq: Seq) {
        self.last = self.last.max(clock_of(seq));
    }
}

pub fn make(clock: u64, writer: u64) -> Seq {
    (clock as u128) << 64 | writer as u128
}

pub fn clock_of(seq: Seq) -> u64 {
    (seq >> 64) as u64
}

pub fn writer_of(seq: Seq) -> u64 {
    seq as u64
}

/// The key text of a position.
pub fn encode(seq: Seq) -> String {
    match writer_of(seq) {
        0 => format!("{:016x}", clock_of(seq)),
        w => format!("{:016x}-{w:016x}", clock_of(seq)),
    }
}

/// A position from its key text (either form).
pub fn decode(text: &str) -> Option<Seq> {
    let hex = |s: &str| (s.len() == 16).then(|| u64::from_str_radix(s, 16).ok()).flatten();
    match text.split_once('-') {
        Some((clock, writer)) => Some(make(hex(clock)?, hex(writer)?)),
        None => Some(make(hex(text)?, 0)),
    }
}

/// A fresh writer id, never 0 (0 marks positions written before writers).
pub fn new_writer_id(now_ms: i64) -> u64 {
    crate::entry::random_u64(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_sort_like_positions() {
        let mut a = PositionClock::new(0xa);
        let mut b = PositionClock::new(0xb);
        let seqs = [make(3, 0), a.next(1_000), b.next(1_000), a.next(1_000), b.next(999)];
        for &s in &seqs {
            assert_eq!(decode(&encode(s)), Some(s));
        }
        let mut by_key = seqs.to_vec();
        by_key.sort_by_key(|&s| encode(s));
        let mut by_seq = seqs.to_vec();
        by_seq.sort();
        assert_eq!(by_key, by_seq);
        assert_eq!(encode(make(3, 0)), "0000000000000003", "legacy keys keep their form");
        assert!(decode("xyz").is_none() && decode("0000000000000003-1").is_none());
    }

    #[test]
    fn a_writer_never_goes_back_and_two_writers_never_collide() {
        let (mut a, mut b) = (PositionClock::new(1), PositionClock::new(2));
        let mut all = std::collections::BTreeSet::new();
        let mut last_a = 0;
        for i in 0..1_000 {
            // Clocks that stall and jump back must not reorder a writer.
            let now = 1_000 + (i % 7) as i64 - (i % 3) as i64;
            let s = a.next(now);
            assert!(s > last_a);
            last_a = s;
            assert!(all.insert(s));
            assert!(all.insert(b.next(now)));
        }
        // Having seen b's newest, a writes after it.
        let newest_b = *all.iter().filter(|&&s| writer_of(s) == 2).max().unwrap();
        a.observe(newest_b);
        assert!(a.next(0) > newest_b);
    }
}
