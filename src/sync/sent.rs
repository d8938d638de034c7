//! Under which seal a replica's items went out, and what a sync owes once
//! that seal changes: a device that synced plain and then took a key (or
//! rotated it) left plain (or older) copies at the relay, which
//! reconciliation, comparing ids alone, never sends again. So a memory
//! records the seal its items last went out under (a key id, or
//! [`PLAIN`]) with their families, and the first sync under a new key
//! resends every item of those families sealed under it, replacing the
//! relay's copies ([`super::Replica::resend`]). The record moves to the
//! new seal only once that sync succeeded: one cut off resends again.
//!
//! Going back to plain resends nothing (sealed copies stay sealed); the
//! record says plain from then on, so a key taken later resends again.

use crate::sync::Families;

/// The seal of a memory without a key.
pub const PLAIN: &str = "plain";

/// What went out: under which seal, of which families.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub seal: String,
    pub families: Families,
}

impl Sent {
    /// The stored line: `<seal> <families>`; `None` for anything else
    /// (then the record is written anew, and nothing is resent).
    pub fn parse(line: &str) -> Option<Sent> {
        let (seal, families) = line.split_once(' ')?;
        Some(Sent { seal: seal.to_string(), families: families.parse().ok()? })
    }

    pub fn line(&self) -> String {
        format!("{} {}", self.seal, self.families)
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
/// went out before (`None`: nothing yet).
pub fn plan(sent: Option<Sent>, seal: &str, families: Families) -> Plan {
    let now = |families| Some(Sent { seal: seal.to_string(), families });
    match sent {
        None => Plan { resend: 0, before: now(families), after: None },
        Some(s) if s.seal == seal => Plan {
            resend: 0,
            before: if s.families | families != s.families { now(s.families | families) } else { None },
            after: None,
        },
        Some(_) if seal == PLAIN => Plan { resend: 0, before: now(families), after: None },
        Some(s) => Plan { resend: s.families, before: None, after: now(s.families | families) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LT: Families = 0b10;
    const BOTH: Families = 0b110;

    fn sent(seal: &str, families: Families) -> Option<Sent> {
        Some(Sent { seal: seal.into(), families })
    }

    #[test]
    fn a_first_sync_records_its_seal_before_it_sends_and_resends_nothing() {
        assert_eq!(plan(None, "k1", LT), Plan { resend: 0, before: sent("k1", LT), after: None });
        assert_eq!(plan(None, PLAIN, BOTH), Plan { resend: 0, before: sent(PLAIN, BOTH), after: None });
    }

    #[test]
    fn the_same_seal_resends_nothing_and_records_a_new_family() {
        assert_eq!(plan(sent("k1", BOTH), "k1", LT), Plan { resend: 0, before: None, after: None });
        assert_eq!(
            plan(sent("k1", LT), "k1", BOTH),
            Plan { resend: 0, before: sent("k1", BOTH), after: None }
        );
    }

    #[test]
    fn a_new_key_resends_what_went_out_before_and_records_it_only_after() {
        // Plain sessions and long-term memory, now under a key, syncing
        // long-term memory alone: both families go out again.
        let p = plan(sent(PLAIN, BOTH), "k1", LT);
        assert_eq!(p, Plan { resend: BOTH, before: None, after: sent("k1", BOTH) });
        // A rotation is a new seal too.
        assert_eq!(plan(sent("k1", LT), "k2", LT).resend, LT);
    }

    #[test]
    fn back_to_plain_resends_nothing_and_a_later_key_resends_again() {
        let p = plan(sent("k1", LT), PLAIN, LT);
        assert_eq!(p, Plan { resend: 0, before: sent(PLAIN, LT), after: None });
        assert_eq!(plan(p.before, "k1", LT).resend, LT);
    }

    #[test]
    fn the_record_reads_back_and_a_damaged_one_is_none() {
        let s = Sent { seal: "a1b2".into(), families: BOTH };
        assert_eq!(Sent::parse(&s.line()), Some(s));
        assert_eq!(Sent::parse("k1"), None);
        assert_eq!(Sent::parse("k1 many"), None);
    }
}
