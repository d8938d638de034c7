//! The view of a log: which memories are in force, what replaced what, and
//! which messages were judged, decided from the set of operations alone.
//!
//! Operations are taken in stamp order, whatever order they arrived in, so
//! every instance holding the same set holds the same view. Writers that
//! could not see each other meet here, and the rules settle what they did:
//! - **The same fact twice** (one scope, the same text once normalized):
//!   the earlier stays in force, the later joins its history.
//! - **Rival updates** (two supersessions of one memory): the later wins;
//!   the earlier, already in force, is superseded by it and kept in history.
//!   A lineage (memories joined by supersession) keeps one memory in force.
//! - **An undo** takes back a memory in force and restores what it replaced;
//!   an undo of a memory already replaced only marks it undone.
//! - **A forgotten memory** leaves the view with its text, and nothing after
//!   brings it back: an operation writing it again is skipped, a
//!   supersession of it replaces nothing. (A memory is created before it can
//!   be forgotten: its forgetter saw it, so the stamps say so.)
//!
//! Cost: one map update per operation, a lookup per memory replaced.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use crate::entry::{MemoryEntry, Scope};
use crate::hash::Fnv64;
use crate::longterm::dedup::normalize;
use crate::longterm::log::op::{Action, Op, OpId, Stamp};

/// Metadata a replacement carries: the ids it superseded.
pub const SUPERSEDES: &str = "supersedes";
/// Metadata of a memory an undo took back.
pub const UNDONE: &str = "undone";

/// What a set of operations comes to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Every memory not forgotten, in force or in history, by id.
    memories: BTreeMap<String, MemoryEntry>,
    /// Memories forgotten.
    forgotten: BTreeSet<String>,
    /// Judged messages with the time their mark lasts until.
    processed: BTreeMap<String, i64>,
    /// The memory in force saying each text (scope and normalized text).
    saying: HashMap<u64, String>,
    /// The memories each memory replaced.
    replaced: HashMap<String, Vec<String>>,
    /// Lineages: memories joined by supersession (forgotten ones too, by
    /// id alone, so a lineage stays whole), as a union-find.
    lineage: HashMap<String, String>,
    /// Each lineage's memories in force, by its root.
    in_force_of: HashMap<String, BTreeSet<String>>,
}

/// The key of what a memory says: its scope and normalized text.
fn said(scope: &Scope, content: &str) -> u64 {
    let mut h = Fnv64::default();
    h.feed(scope.to_string().as_bytes()).feed(&[0]).feed(normalize(content).as_bytes());
    h.finish()
}

impl View {
    /// The view of `ops`, in any order, duplicates included.
    pub fn of<'a>(ops: impl IntoIterator<Item = &'a Op>) -> View {
        let mut sorted: BTreeMap<OpId, &Op> = BTreeMap::new();
        for op in ops {
            sorted.entry(op.id()).or_insert(op);
        }
        let mut view = View::default();
        for op in sorted.values() {
            view.apply(op);
        }
        view
    }

    /// Applies `op`, made after every operation applied so far (a view of
    /// operations that arrive out of order is made again, [`View::of`]).
    pub fn apply(&mut self, op: &Op) {
        match &op.action {
            Action::Create { entry } => self.create(entry, &[], op.stamp),
            Action::Supersede { entry, replaces } => self.create(entry, replaces, op.stamp),
            Action::Retract { id } => self.retract(id, op.stamp),
            Action::Forget { ids } => {
                for id in ids {
                    self.forget(id);
                }
            }
            Action::Processed { hashes, until } => {
                for h in hashes {
                    let at = self.processed.entry(h.clone()).or_insert(*until);
                    *at = (*at).max(*until);
                }
            }
        }
    }

    fn create(&mut self, entry: &MemoryEntry, replaces: &[String], stamp: Stamp) {
        if self.forgotten.contains(&entry.id) || self.memories.contains_key(&entry.id) {
            return;
        }
        let mut e = MemoryEntry { superseded_by: None, valid_to: None, ..entry.clone() };
        e.metadata.remove(UNDONE);
        let key = said(&e.scope, &e.content);
        let mut replaced = Vec::new();
        for old in replaces {
            for head in self.heads_of(old) {
                if head != e.id && !replaced.contains(&head) {
                    replaced.push(head);
                }
            }
        }
        for old in replaces {
            self.join(&e.id, old);
        }
        // What it replaces has left force meanwhile (undone, forgotten):
        // what is in force in its lineage now stands in its place, so a
        // lineage never keeps two.
        if replaced.is_empty() && !replaces.is_empty() {
            replaced.extend(self.in_force_in(&e.id));
        }
        match self.saying.get(&key) {
            // Said already, and not as part of this lineage: a writer that
            // did not see it said it again.
            Some(holder) if replaced.is_empty() => {
                let holder = holder.clone();
                self.join(&e.id, &holder);
                e.superseded_by = Some(holder);
                e.valid_to = Some(stamp.ms().max(e.valid_since()));
                self.memories.insert(e.id.clone(), e);
                return;
            }
            // A new version saying what another memory in force says: it
            // carries the lineage, so it replaces that one too.
            Some(holder) if !replaced.contains(holder) => {
                let holder = holder.clone();
                self.join(&e.id, &holder);
                replaced.push(holder);
            }
            _ => {}
        }
        if !replaces.is_empty() {
            e.metadata.insert(SUPERSEDES.into(), replaces.join(","));
        }
        for old in &replaced {
            self.leave_force(old, Some(&e.id), stamp);
        }
        self.replaced.insert(e.id.clone(), replaced);
        self.saying.insert(key, e.id.clone());
        self.enter_force(&e.id);
        self.memories.insert(e.id.clone(), e);
    }

    /// The root of `id`'s lineage.
    fn root(&self, id: &str) -> String {
        let mut at = id;
        while let Some(up) = self.lineage.get(at).filter(|up| *up != at) {
            at = up;
        }
        at.to_string()
    }

    /// Joins the lineages of `a` and `b`; the smaller root id is the root,
    /// so every instance builds the same forest.
    fn join(&mut self, a: &str, b: &str) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return;
        }
        let (root, child) = if ra < rb { (ra, rb) } else { (rb, ra) };
        if let Some(moved) = self.in_force_of.remove(&child) {
            self.in_force_of.entry(root.clone()).or_default().extend(moved);
        }
        self.lineage.insert(child, root);
    }

    fn in_force_in(&self, id: &str) -> Vec<String> {
        self.in_force_of.get(&self.root(id)).map_or(Vec::new(), |ids| ids.iter().cloned().collect())
    }

    fn enter_force(&mut self, id: &str) {
        let root = self.root(id);
        self.in_force_of.entry(root).or_default().insert(id.to_string());
    }

    /// The memories in force that `id` has become: itself, what replaced
    /// it, or, where an undo took it back, what came back in its place.
    fn heads_of(&self, id: &str) -> Vec<String> {
        let (mut heads, mut seen, mut next) = (Vec::new(), BTreeSet::new(), vec![id.to_string()]);
        while let Some(id) = next.pop() {
            let Some(e) = self.memories.get(&id).filter(|_| seen.insert(id.clone())) else { continue };
            match &e.superseded_by {
                _ if e.is_valid() => heads.push(id),
                Some(by) => next.push(by.clone()),
                None => next.extend(self.replaced_by(&id).iter().cloned()),
            }
        }
        heads
    }

    fn leave_force(&mut self, id: &str, by: Option<&str>, stamp: Stamp) {
        let Some(e) = self.memories.get_mut(id) else { return };
        if !e.is_valid() {
            return;
        }
        e.superseded_by = by.map(str::to_string);
        e.valid_to = Some(stamp.ms().max(e.valid_since()));
        let key = said(&e.scope, &e.content);
        if self.saying.get(&key).is_some_and(|holder| holder == id) {
            self.saying.remove(&key);
        }
        let root = self.root(id);
        if let Some(ids) = self.in_force_of.get_mut(&root) {
            ids.remove(id);
        }
    }

    fn retract(&mut self, id: &str, stamp: Stamp) {
        let Some(e) = self.memories.get_mut(id) else { return };
        let was_in_force = e.is_valid();
        e.metadata.insert(UNDONE.into(), "true".into());
        if !was_in_force {
            return;
        }
        self.leave_force(id, None, stamp);
        for old in self.replaced.get(id).cloned().unwrap_or_default() {
            let Some(e) = self.memories.get(&old).filter(|e| e.superseded_by.as_deref() == Some(id)) else {
                continue;
            };
            let key = said(&e.scope, &e.content);
            let holder = self.saying.get(&key).cloned();
            let e = self.memories.get_mut(&old).expect("just read");
            match holder {
                // Said meanwhile by another memory in force: it stays there.
                Some(holder) => e.superseded_by = Some(holder),
                None => {
                    (e.superseded_by, e.valid_to) = (None, None);
                    self.enter_force(&old);
                    self.saying.insert(key, old);
                }
            }
        }
    }

    fn forget(&mut self, id: &str) {
        self.forgotten.insert(id.to_string());
        if let Some(ids) = self.in_force_of.get_mut(&self.root(id)) {
            ids.remove(id);
        }
        if let Some(e) = self.memories.remove(id) {
            let key = said(&e.scope, &e.content);
            if self.saying.get(&key).is_some_and(|holder| *holder == e.id) {
                self.saying.remove(&key);
            }
        }
        self.replaced.remove(id);
    }

    pub fn get(&self, id: &str) -> Option<&MemoryEntry> {
        self.memories.get(id)
    }

    /// Every memory not forgotten, by id.
    pub fn memories(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.memories.values()
    }

    /// The memories in force, by id.
    pub fn in_force(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.memories.values().filter(|e| e.is_valid())
    }

    pub fn is_forgotten(&self, id: &str) -> bool {
        self.forgotten.contains(id)
    }

    /// Judged messages whose mark lasts past `now`.
    pub fn is_processed(&self, hash: &str, now: i64) -> bool {
        self.processed.get(hash).is_some_and(|until| *until > now)
    }

    /// The memories `id` replaced directly.
    pub fn replaced_by(&self, id: &str) -> &[String] {
        self.replaced.get(id).map_or(&[], Vec::as_slice)
    }
}

/// A log held in memory: its operations and their view, kept in step.
#[derive(Debug, Clone, Default)]
pub struct Log {
    ops: BTreeMap<OpId, Op>,
    view: View,
}

impl Log {
    /// Adds operations (any order, any already held); says how many were new.
    /// Operations after every one held are applied to the view; one that
    /// sorts earlier (a writer's delayed operation) makes the view again.
    pub fn insert(&mut self, ops: impl IntoIterator<Item = Op>) -> usize {
        let mut added = 0;
        let mut refold = false;
        for op in ops {
            let id = op.id();
            if self.ops.contains_key(&id) {
                continue;
            }
            let in_order = self.ops.last_key_value().is_none_or(|(last, _)| *last < id);
            refold |= !in_order;
            if !refold {
                self.view.apply(&op);
            }
            self.ops.insert(id, op);
            added += 1;
        }
        if refold {
            self.view = View::of(self.ops.values());
        }
        added
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    pub fn ops(&self) -> impl Iterator<Item = (&OpId, &Op)> {
        self.ops.iter()
    }

    pub fn contains(&self, id: &OpId) -> bool {
        self.ops.contains_key(id)
    }

    /// The newest stamp held.
    pub fn last_stamp(&self) -> Option<Stamp> {
        self.ops.values().map(|op| op.stamp).max()
    }
}
