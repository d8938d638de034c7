//! One operation of the log: what a writer decided, immutable once written
//! and named by its content.

use serde::{Deserialize, Serialize};

use crate::entry::MemoryEntry;
use crate::hash::Fnv64;

/// When an operation was made and by whom: a hybrid logical clock
/// (milliseconds << 16, plus a counter, never behind a stamp its writer has
/// seen), then the writer's random id. Every instance orders operations by
/// it the same way, and an operation made after another was seen sorts
/// after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stamp {
    pub clock: u64,
    pub writer: u64,
}

impl Stamp {
    /// The wall time of the stamp (ms since the epoch).
    pub fn ms(&self) -> i64 {
        (self.clock >> 16) as i64
    }
}

/// A writer's clock: each stamp after the last it made and after every
/// stamp it has seen, so a writer whose wall clock runs behind still orders
/// its decisions after what they were based on.
#[derive(Debug, Clone)]
pub struct Clock {
    writer: u64,
    last: u64,
}

impl Clock {
    pub fn new(writer: u64) -> Clock {
        Clock { writer, last: 0 }
    }

    pub fn next(&mut self, now_ms: i64) -> Stamp {
        let wall = (now_ms.max(0) as u64).saturating_mul(1 << 16);
        self.last = wall.max(self.last.saturating_add(1));
        Stamp { clock: self.last, writer: self.writer }
    }

    pub fn observe(&mut self, stamp: Stamp) {
        self.last = self.last.max(stamp.clock);
    }
}

/// What an operation does. Memories carry no validity of their own here:
/// whether one is in force, and what replaced it, is decided by the fold.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A new memory (remembered, imported, drawn from a session).
    Create { entry: MemoryEntry },
    /// A new memory replacing `replaces`: a state's new value, a fuller
    /// version, a merge of several.
    Supersede { entry: MemoryEntry, replaces: Vec<String> },
    /// An undo: memory `id` leaves force and, if it was in force, what it
    /// replaced comes back.
    Retract { id: String },
    /// Memories forgotten: they leave the view, whatever the order their
    /// operations arrive in, and no operation brings them back.
    Forget { ids: Vec<String> },
    /// A memory as a document (an export, an earlier release's store) has
    /// it: in force or in history, with its links.
    Import { entry: MemoryEntry },
    /// What is left of a write of memory `id` once `id` was forgotten: its
    /// links without its text. Stored under the id of the write it
    /// replaces ([`Op::erased_json`]), so the two are one operation.
    Erased { id: String, replaces: Vec<String> },
    /// Messages judged at session end, marked until `until` (ms), so that
    /// no instance judges them again.
    Processed { hashes: Vec<String>, until: i64 },
    /// The namespace purged: every operation stamped before it counts as
    /// never written, on every replica it reaches (and leaves their stores).
    Purge,
}

/// An operation: the same stamp and action are the same operation, however
/// often it is written or read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Wire", into = "Wire")]
pub struct Op {
    pub stamp: Stamp,
    pub action: Action,
}

/// An operation as stored: one flat object, `do` naming the action and
/// only its fields present. (A serde enum, tagged any way, cost the wasm
/// 12 to 40 KB of reading code; a flat struct reads like a memory does.)
#[derive(Serialize, Deserialize)]
struct Wire {
    stamp: Stamp,
    #[serde(rename = "do")]
    action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entry: Option<MemoryEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    until: Option<i64>,
}

impl From<Op> for Wire {
    fn from(op: Op) -> Wire {
        let mut w =
            Wire { stamp: op.stamp, action: String::new(), entry: None, id: None, ids: None, until: None };
        w.action = match op.action {
            Action::Create { entry } => {
                w.entry = Some(entry);
                "create"
            }
            Action::Supersede { entry, replaces } => {
                (w.entry, w.ids) = (Some(entry), Some(replaces));
                "supersede"
            }
            Action::Retract { id } => {
                w.id = Some(id);
                "retract"
            }
            Action::Forget { ids } => {
                w.ids = Some(ids);
                "forget"
            }
            Action::Import { entry } => {
                w.entry = Some(entry);
                "import"
            }
            Action::Erased { id, replaces } => {
                (w.id, w.ids) = (Some(id), Some(replaces));
                "erased"
            }
            Action::Processed { hashes, until } => {
                (w.ids, w.until) = (Some(hashes), Some(until));
                "processed"
            }
            Action::Purge => "purge",
        }
        .to_string();
        w
    }
}

impl TryFrom<Wire> for Op {
    type Error = String;

    fn try_from(w: Wire) -> Result<Op, String> {
        let missing = || format!("a {:?} operation lacks a field of its action", w.action);
        let action = match w.action.as_str() {
            "create" => Action::Create { entry: w.entry.ok_or_else(&missing)? },
            "supersede" => Action::Supersede {
                entry: w.entry.ok_or_else(&missing)?,
                replaces: w.ids.ok_or_else(&missing)?,
            },
            "retract" => Action::Retract { id: w.id.ok_or_else(&missing)? },
            "forget" => Action::Forget { ids: w.ids.ok_or_else(&missing)? },
            "import" => Action::Import { entry: w.entry.ok_or_else(&missing)? },
            "erased" => {
                Action::Erased { id: w.id.ok_or_else(&missing)?, replaces: w.ids.ok_or_else(&missing)? }
            }
            "processed" => Action::Processed {
                hashes: w.ids.ok_or_else(&missing)?,
                until: w.until.ok_or_else(&missing)?,
            },
            "purge" => Action::Purge,
            other => return Err(format!("no operation {other:?}")),
        };
        Ok(Op { stamp: w.stamp, action })
    }
}

/// An operation's name: its stamp, then a hash of its content, as text that
/// sorts in stamp order (`<clock>-<writer>-<hash>`, 16 hex digits each).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(String);

impl OpId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id of the operation stamped `stamp` whose JSON is `json` (as
    /// [`Op::json`] wrote it).
    pub fn of(stamp: Stamp, json: &str) -> OpId {
        OpId::from_parts(stamp, Fnv64::default().feed(json.as_bytes()).finish())
    }

    /// The id of the operation stamped `stamp` whose content hashes to `hash`.
    pub fn from_parts(stamp: Stamp, hash: u64) -> OpId {
        OpId(format!("{:016x}-{:016x}-{hash:016x}", stamp.clock, stamp.writer))
    }

    /// The stamp and content hash the id names.
    pub fn parts(&self) -> Option<(Stamp, u64)> {
        let mut words = self.0.split('-').map(|w| u64::from_str_radix(w, 16).ok());
        let (clock, writer, hash) = (words.next()??, words.next()??, words.next()??);
        Some((Stamp { clock, writer }, hash))
    }
}

impl Op {
    pub fn new(stamp: Stamp, action: Action) -> Op {
        Op { stamp, action }
    }

    /// The operation's id. Its JSON is what is hashed: field order and
    /// metadata order are fixed by the types, so every instance names an
    /// operation alike.
    pub fn id(&self) -> OpId {
        OpId::of(self.stamp, &self.json())
    }

    /// The operation as it is stored: one line of JSON.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The operation without its text, if it writes a memory, or without
    /// its hashes, if it is a judged mark (once it has run out: an erased
    /// mark of no memory, `id` empty, which the fold passes over).
    pub fn erased(&self) -> Option<Op> {
        let (id, replaces) = match &self.action {
            Action::Create { entry } | Action::Import { entry } => (entry.id.clone(), Vec::new()),
            Action::Supersede { entry, replaces } => (entry.id.clone(), replaces.clone()),
            Action::Processed { .. } => (String::new(), Vec::new()),
            _ => return None,
        };
        Some(Op::new(self.stamp, Action::Erased { id, replaces }))
    }

    /// How an erased operation is stored: its JSON led by the id of the
    /// operation it stands for (`{"opId":"…",…}`).
    pub fn erased_json(&self, id: &OpId) -> String {
        let json = self.json();
        format!("{{\"opId\":\"{}\",{}", id.as_str(), &json[1..])
    }

    /// The id a stored line names for itself (an erased operation's), if
    /// it names one.
    pub fn named_in(line: &str) -> Option<OpId> {
        let rest = line.strip_prefix("{\"opId\":\"")?;
        Some(OpId(rest.split('"').next()?.to_string()))
    }

    pub fn is_erased(&self) -> bool {
        matches!(self.action, Action::Erased { .. })
    }

    /// A judged mark that has run out at `now`: it travels and is kept
    /// erased ([`Op::erased`]), so no replica sends it again.
    pub fn is_expired(&self, now: i64) -> bool {
        matches!(self.action, Action::Processed { until, .. } if until <= now)
    }

    /// The memory the operation writes, if it writes one.
    pub fn entry(&self) -> Option<&MemoryEntry> {
        match &self.action {
            Action::Create { entry } | Action::Supersede { entry, .. } | Action::Import { entry } => {
                Some(entry)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Scope;
    use crate::longterm::records::new_memory;

    #[test]
    fn ids_sort_by_stamp_and_name_the_content() {
        let entry = new_memory("Has 2 kids", Scope::User, 1_000);
        let a = Op::new(Stamp { clock: 1 << 16, writer: 7 }, Action::Create { entry: entry.clone() });
        let b = Op::new(Stamp { clock: 2 << 16, writer: 1 }, Action::Create { entry });
        assert!(a.id() < b.id());
        assert_eq!(a.id(), a.clone().id());
        let (stamp, hash) = a.id().parts().unwrap();
        assert_eq!((stamp, OpId::from_parts(stamp, hash)), (a.stamp, a.id()));
        let other = Op::new(a.stamp, Action::Retract { id: "x".into() });
        assert_ne!(a.id(), other.id());
        let erased = a.erased().unwrap();
        assert_eq!(Op::named_in(&erased.erased_json(&a.id())), Some(a.id()), "an erased line keeps its name");
        assert_eq!(Op::named_in(&a.json()), None);
        // Through JSON and back, the same operation.
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Op>(&json).unwrap().id(), a.id());
    }

    #[test]
    fn a_clock_never_runs_behind_what_it_saw() {
        let mut clock = Clock::new(3);
        let first = clock.next(1_000);
        assert_eq!(first.ms(), 1_000);
        assert!(clock.next(1_000) > first);
        clock.observe(Stamp { clock: 5_000 << 16, writer: 9 });
        let after = clock.next(1_000);
        assert!(after.clock > 5_000 << 16);
        assert_eq!(after.writer, 3);
    }
}
