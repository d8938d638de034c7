//! What a `remember` decides, before anything is written: each new memory
//! is new, a duplicate of a memory in force, or an update of some. Pure:
//! it reads the view and writes nothing.
//!
//! Cost: a new memory is compared in full only with the memories its
//! probe cannot rule out ([`crate::longterm::dedup::Probe`]: a few packed
//! words per memory in force, kept between writes and caught up on the
//! memories that changed), so a write costs a pass over packed probes and
//! a handful of comparisons, not a parse of every memory stored.

use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;

use crate::entry::MemoryEntry;
use crate::longterm::dedup::{
    may_relate, related, relation_of, Change, DedupOptions, Fingerprint, Probe, Relation, Similarity,
};
use crate::longterm::log::View;

/// What happened to a memory handed to `remember`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Remembered {
    /// Stored as new.
    Stored { entry: MemoryEntry },
    /// Stored, and it replaced memories it updates: a more complete version
    /// (no `change`), or one whose number, date, name or polarity differs
    /// (`change` says which; the old ones stay in `history`).
    Superseded {
        entry: MemoryEntry,
        superseded: Vec<String>,
        #[cfg_attr(feature = "ts", ts(optional))]
        #[serde(skip_serializing_if = "Option::is_none")]
        change: Option<Change>,
    },
    /// Not stored: an existing memory already says it.
    Duplicate { existing: MemoryEntry, similarity: Similarity },
}

/// What remembering a list of memories does: an outcome per memory (a
/// supersession's is set once it is written), the memories new to the
/// view, and the supersessions `(outcome index, new memory, ids it
/// replaces, what changed)`.
pub struct Plan {
    pub outcomes: Vec<Option<Remembered>>,
    pub new_entries: Vec<MemoryEntry>,
    pub supersessions: Vec<(usize, MemoryEntry, Vec<String>, Option<Change>)>,
}

/// The probes of the memories in force, with their fingerprints (made on
/// first use), kept in step with the view by the ids that changed.
#[derive(Default)]
pub struct Probes {
    probes: Vec<Probe>,
    ids: Vec<String>,
    /// Each probe's position (u32: the map type the search index has
    /// already, where `usize` would cost the wasm one more copy of it).
    at: HashMap<String, u32>,
    fingerprints: HashMap<String, Fingerprint>,
    /// Ids changed since the probes were last caught up.
    pending: Vec<String>,
    /// Made whole at the next plan.
    stale: bool,
}

impl Probes {
    /// Probes made whole at the next plan.
    pub fn new() -> Probes {
        Probes { stale: true, ..Probes::default() }
    }

    /// Memories `ids` changed (written, left force, came back, forgotten).
    pub fn changed(&mut self, ids: impl IntoIterator<Item = String>) {
        if !self.stale {
            self.pending.extend(ids);
        }
    }

    /// Any memory may have changed (a view folded again, a reload): the
    /// probes are made whole at the next plan, from the fingerprints held
    /// where a memory's text is what they were made of (made anew, they
    /// cost a pass of text analysis over every memory in force).
    pub fn reset(&mut self) {
        let fingerprints = std::mem::take(&mut self.fingerprints);
        *self = Probes { fingerprints, ..Probes::new() };
    }

    fn drop_probe(&mut self, id: &str) {
        let Some(i) = self.at.remove(id).map(|i| i as usize) else { return };
        self.probes.swap_remove(i);
        self.ids.swap_remove(i);
        if let Some(moved) = self.ids.get(i) {
            self.at.insert(moved.clone(), i as u32);
        }
    }

    fn add(&mut self, e: &MemoryEntry) {
        if self.at.contains_key(&e.id) {
            return;
        }
        let fp = self.fingerprints.entry(e.id.clone()).or_insert_with(|| Fingerprint::new(&e.content));
        self.probes.push(Probe::new(fp, &e.scope));
        self.at.insert(e.id.clone(), self.ids.len() as u32);
        self.ids.push(e.id.clone());
    }

    fn catch_up(&mut self, view: &View) {
        if self.stale {
            let mut held = std::mem::take(&mut self.fingerprints);
            *self = Probes::default();
            for e in view.in_force() {
                if let Some(fp) = held.remove(&e.id).filter(|fp| fp.is_of(&e.content)) {
                    self.fingerprints.insert(e.id.clone(), fp);
                }
                self.add(e);
            }
            return;
        }
        for id in std::mem::take(&mut self.pending) {
            self.drop_probe(&id);
            match view.get(&id) {
                // A text rewritten under its id (an import) is
                // fingerprinted anew.
                Some(e) if e.is_valid() => {
                    self.fingerprints.remove(&id);
                    self.add(e);
                }
                _ => {
                    self.fingerprints.remove(&id);
                }
            }
        }
    }

    /// What remembering `entries` does against `view`: each is
    /// deduplicated against the memories in force of its scope and the
    /// list's earlier ones.
    pub fn plan(&mut self, view: &View, entries: &[MemoryEntry], dedup: &DedupOptions) -> Plan {
        self.catch_up(view);
        let mut outcomes: Vec<Option<Remembered>> = Vec::with_capacity(entries.len());
        let mut new_entries: Vec<MemoryEntry> = Vec::new();
        let mut supersessions = Vec::new();
        let mut batch: Vec<(Fingerprint, &MemoryEntry)> = Vec::new();
        let mut batch_probes: Vec<Probe> = Vec::new();
        let mut near = Vec::new();
        // What an earlier entry of the list replaced, to that entry's
        // position. A later entry replacing the same names that entry
        // instead: the fold makes it replace the head of that lineage
        // either way (the same memories stay in force; history reads as if
        // the list's versions came one after another), and a list
        // restating a list names one memory per entry, not the whole
        // earlier list each.
        let mut taken: HashMap<String, u32> = HashMap::default();
        // The sources of each entry that replaced others, with theirs
        // (what a later entry naming it stands for too); empty elsewhere.
        let mut sources: Vec<Vec<String>> = vec![Vec::new(); entries.len()];
        'entries: for (at, entry) in entries.iter().enumerate() {
            let fp = Fingerprint::new(&entry.content);
            let probe = Probe::new(&fp, &entry.scope);
            // The memories the probes cannot rule out, newest first, so a
            // duplicate reports the most recent match.
            let mut candidates: Vec<&MemoryEntry> = Vec::new();
            related(&probe, &self.probes, dedup, &mut near);
            for &i in &near {
                candidates.extend(view.get(&self.ids[i]).filter(|old| old.scope == entry.scope));
            }
            crate::order::sort_by(&mut candidates, |a, b| {
                b.timestamp.cmp(&a.timestamp).then_with(|| a.id.cmp(&b.id))
            });
            let mut replaced = Vec::new();
            let mut change = None;
            for old in candidates {
                let old_fp = &self.fingerprints[&old.id];
                match relation_of(&fp, old_fp, dedup) {
                    Relation::Duplicate(similarity) => {
                        let existing = old.clone();
                        outcomes.push(Some(Remembered::Duplicate { existing, similarity }));
                        continue 'entries;
                    }
                    Relation::Fuller => replaced.push(old.id.clone()),
                    Relation::Changed(c) => {
                        replaced.push(old.id.clone());
                        change = change.or(Some(c));
                    }
                    Relation::Unrelated => {}
                }
            }
            for (k, (other_fp, other)) in batch.iter().enumerate().rev() {
                if other.scope != entry.scope || !may_relate(&probe, &batch_probes[k], dedup) {
                    continue;
                }
                if let Relation::Duplicate(similarity) = relation_of(&fp, other_fp, dedup) {
                    let existing = (*other).clone();
                    outcomes.push(Some(Remembered::Duplicate { existing, similarity }));
                    continue 'entries;
                }
            }
            let mut named: Vec<String> = Vec::with_capacity(replaced.len());
            let mut new = entry.clone();
            for id in replaced {
                let (head, by) = head_in(&mut taken, entries, id);
                if !named.contains(&head) {
                    match by {
                        Some(k) => new.add_sources(&sources[k]),
                        None => new.add_sources(view.get(&head).map_or(&[][..], |e| &e.sources)),
                    }
                    named.push(head);
                }
            }
            for id in &named {
                taken.insert(id.clone(), at as u32);
            }
            if named.is_empty() {
                new_entries.push(new.clone());
                outcomes.push(Some(Remembered::Stored { entry: new }));
            } else {
                sources[at] = new.sources.clone();
                supersessions.push((outcomes.len(), new, named, change));
                outcomes.push(None);
            }
            batch.push((fp, entry));
            batch_probes.push(probe);
        }
        Plan { outcomes, new_entries, supersessions }
    }
}

/// The memory that now stands where `id` stood: the list entry that last
/// took its place, with its position, or `id` itself. Each id walked is
/// pointed at the entry found, so a chain is walked once. A step per entry
/// at most: a list may repeat an id, or reuse the id of what it replaces
/// (a Rust caller's own ids), which would otherwise walk in a circle.
fn head_in(taken: &mut HashMap<String, u32>, entries: &[MemoryEntry], id: String) -> (String, Option<usize>) {
    let mut by = None;
    for _ in 0..entries.len() {
        match taken.get(by.map_or(&id, |k: usize| &entries[k].id)) {
            Some(&k) if by != Some(k as usize) => by = Some(k as usize),
            _ => break,
        }
    }
    if let Some(k) = by {
        taken.insert(id, k as u32);
        return (entries[k].id.clone(), by);
    }
    (id, None)
}
