//! Under which seal a replica's items went out, and what a sync owes once
//! that seal changes: a device that synced plain and then took a key (or
//! rotated it) left plain (or older) copies at the relay, which
//! reconciliation, comparing ids alone, never sends again. So a memory
//! records, for each family it synced, the seal its items last went out
//! under (a key id, or [`PLAIN`]), and the first sync of that family under
//! a new key resends every item of it sealed under that key, replacing the
//! relay's copies ([`super::Replica::resend`]). A family's record moves to
//! the new seal only once that sync succeeded: one cut off resends again.
//! A sync resends only the families it covers (a sync without sessions
//! sends no session item, resent or not).
//!
//! Going back to plain resends nothing (sealed copies stay sealed); the
//! record says plain from then on, so a key taken later resends again.

use crate::sync::Families;

/// The seal of a memory without a key.
pub const PLAIN: &str = "plain";

/// What went out: for each family, under which seal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sent(Vec<(u8, String)>);

impl Sent {
    /// The stored line: `<family>:<seal>` for each family, space apart;
    /// what does not read so is left out (then that family's record is
    /// written anew, and nothing of it resent).
    pub fn parse(line: &str) -> Sent {
        let read = |part: &str| {
            let (family, seal) = part.split_once(':')?;
            Some((family.parse().ok().filter(|f| *f < 8)?, seal.to_string()))
        };
        Sent(line.split(' ').filter_map(read).collect())
    }

    pub fn line(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|(family, seal)| format!("{family}:{seal}")).collect();
        parts.join(" ")
    }

    fn seal_of(&self, family: u8) -> Option<&str> {
        self.0.iter().find(|(f, _)| *f == family).map(|(_, seal)| seal.as_str())
    }

    /// This record with `family` under `seal`, in its place if it had one
    /// (the order is what it was written in: a record compares equal to
    /// itself read back).
    fn with(&self, family: u8, seal: &str) -> Sent {
        let mut next = self.clone();
        match next.0.iter_mut().find(|(f, _)| *f == family) {
            Some(held) => held.1 = seal.to_string(),
            None => next.0.push((family, seal.to_string())),
        }
        next
    }
}

/// What one sync does about the seal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The families whose items go out again, replacing the peer's copies.
    pub resend: Families,
    /// The record to write before the sync (it covers what this sync
    /// sends, so one cut off midway is covered too).
    pub before: Option<Sent>,
    /// The record to write once the sync succeeded.
    pub after: Option<Sent>,
}

/// The plan of a sync of `families` under `seal`, given the record of what
/// went out before.
pub fn plan(sent: &Sent, seal: &str, families: Families) -> Plan {
    let (mut before, mut resend) = (sent.clone(), 0);
    for family in (0..8u8).filter(|f| families >> f & 1 == 1) {
        match sent.seal_of(family) {
            Some(was) if was == seal => {}
            Some(_) if seal != PLAIN => resend |= 1 << family,
            // Nothing went out yet, or a key was dropped.
            _ => before = before.with(family, seal),
        }
    }
    let resent = |a: Sent| (0..8u8).filter(|f| resend >> f & 1 == 1).fold(a, |a, f| a.with(f, seal));
    let after = (resend != 0).then(|| resent(before.clone()));
    Plan { resend, before: (before != *sent).then_some(before), after }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LT: Families = 0b10;
    const BOTH: Families = 0b110;

    fn sent(parts: &[(u8, &str)]) -> Sent {
        Sent(parts.iter().map(|(f, s)| (*f, s.to_string())).collect())
    }

    #[test]
    fn a_first_sync_records_its_seal_before_it_sends_and_resends_nothing() {
        let p = plan(&Sent::default(), "k1", LT);
        assert_eq!(p, Plan { resend: 0, before: Some(sent(&[(1, "k1")])), after: None });
        let p = plan(&Sent::default(), PLAIN, BOTH);
        assert_eq!(p.before, Some(sent(&[(1, PLAIN), (2, PLAIN)])));
    }

    #[test]
    fn the_same_seal_resends_nothing_and_records_a_new_family() {
        let both = sent(&[(1, "k1"), (2, "k1")]);
        assert_eq!(plan(&both, "k1", LT), Plan { resend: 0, before: None, after: None });
        let p = plan(&sent(&[(1, "k1")]), "k1", BOTH);
        assert_eq!(p, Plan { resend: 0, before: Some(both), after: None });
    }

    #[test]
    fn a_new_key_resends_the_synced_families_that_went_out_before_and_records_them_only_after() {
        // Plain sessions and long-term memory, now under a key, syncing
        // long-term memory alone: only it goes out again, and sessions stay
        // recorded as plain, for the first sync with sessions to resend.
        let plain = sent(&[(1, PLAIN), (2, PLAIN)]);
        let p = plan(&plain, "k1", LT);
        assert_eq!(p, Plan { resend: LT, before: None, after: Some(sent(&[(1, "k1"), (2, PLAIN)])) });
        let p = plan(&p.after.unwrap(), "k1", BOTH);
        assert_eq!(p.resend, 1 << 2);
        // A rotation is a new seal too.
        assert_eq!(plan(&sent(&[(1, "k1")]), "k2", LT).resend, LT);
        // A family first synced in the same sync as a resend of another is
        // recorded before it, and kept after.
        let p = plan(&sent(&[(1, PLAIN)]), "k1", BOTH);
        assert_eq!(p.before, Some(sent(&[(1, PLAIN), (2, "k1")])));
        assert_eq!(p.after, Some(sent(&[(1, "k1"), (2, "k1")])));
    }

    #[test]
    fn back_to_plain_resends_nothing_and_a_later_key_resends_again() {
        let p = plan(&sent(&[(1, "k1")]), PLAIN, LT);
        assert_eq!(p, Plan { resend: 0, before: Some(sent(&[(1, PLAIN)])), after: None });
        assert_eq!(plan(&p.before.unwrap(), "k1", LT).resend, LT);
    }

    #[test]
    fn the_record_reads_back_and_what_does_not_read_is_left_out() {
        let s = sent(&[(1, "a1b2"), (2, PLAIN)]);
        assert_eq!(Sent::parse(&s.line()), s);
        assert_eq!(Sent::parse("k1 9:x 1:k2 x:k3"), sent(&[(1, "k2")]));
    }
}
