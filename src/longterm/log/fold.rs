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
//!   The same for two values of one state written as new memories ("Has 2
//!   kids" and "Has 3 kids", of one scope: one slot, [`Details::slot`]).
//!   A lineage (memories joined by supersession) keeps one memory in force.
//! - **An undo** takes back a memory in force and restores what it replaced;
//!   an undo of a memory already replaced only marks it undone.
//! - **A forgotten memory** is as if it had never been written: every
//!   operation writing it before the forget is skipped, whatever order it
//!   arrives in, so those operations can leave the store (its text with
//!   them) without changing the view, and a replayed copy of one brings
//!   nothing back. A supersession of it replaces nothing. Only a write
//!   made after the forget (an import of it, by id) brings it back.
//! - **A purge** makes every operation stamped before it count as never
//!   written (a replica drops them from its store as it receives it).
//! - **An import** sets a memory as the document has it (in force or in
//!   history); a later import of the same id sets it again.
//!
//! Cost: one map update per operation, a lookup per memory replaced.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use crate::entry::{MemoryEntry, Scope, Temporal};
use crate::hash::Fnv64;
use crate::longterm::dedup::normalize;
use crate::longterm::dedup::Details;
use crate::longterm::log::op::{Action, Op, OpId, Stamp};

/// Metadata a replacement carries: the ids it superseded.
pub const SUPERSEDES: &str = "supersedes";
/// Metadata of a memory an undo took back.
pub const UNDONE: &str = "undone";

/// What a set of operations comes to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Every memory not forgotten, in force or in history, by id.
    memories: HashMap<String, MemoryEntry>,
    /// Memories forgotten, with the clock of the last forget of each: what
    /// wrote them at an earlier clock (everything its forgetter had seen)
    /// counts as never written.
    forgotten: BTreeMap<String, i64>,
    /// Judged messages with the time their mark lasts until. B-trees, as
    /// the export's map of these is: a hash map of (String, i64) beside it
    /// cost the wasm a copy of the hash map's code.
    processed: BTreeMap<String, i64>,
    /// The clock of the last purge: operations stamped before it count
    /// for nothing.
    purged: u64,
    /// The memory in force saying each text (scope and normalized text).
    saying: HashMap<u64, String>,
    /// Each memory's links (forgotten ones too, by id alone, so a lineage
    /// stays whole). One map of them: a map per link cost the wasm a copy
    /// of the map's code each.
    links: HashMap<String, Links>,
    /// The memory in force holding each state's slot ([`Details::slot`]).
    slots: HashMap<u64, String>,
    /// Ids whose memory changed since [`View::take_touched`] (not part of
    /// what the view is).
    touched: Touched,
    /// Each text's slot, by a hash of the text (not part of what the view
    /// is).
    slot_of: Slots,
}

/// What the fold knows of a memory besides its entry.
#[derive(Debug, Clone, Default, PartialEq)]
struct Links {
    /// Its parent in the forest of lineages (memories joined by
    /// supersession, a union-find); none at a root.
    parent: Option<String>,
    /// The memories it replaced directly.
    replaced: Vec<String>,
    /// At a lineage's root: the lineage's memories in force.
    in_force: BTreeSet<String>,
    /// Its state's slot, if it has one.
    slot: Option<u64>,
}

/// Ids a view's changes touched; two views are equal whatever they hold.
#[derive(Debug, Clone, Default)]
struct Touched(Vec<String>);

impl PartialEq for Touched {
    fn eq(&self, _: &Touched) -> bool {
        true
    }
}

/// Each text's slot ([`Details::slot`]) as a fold found it, by a hash of
/// the text: a view folded again (operations that arrived out of order, as
/// a sync brings them) would otherwise analyse every memory's text anew.
/// What a fold read (`now`) is what the next one looks up (`before`,
/// sorted), so it holds the texts of one fold. Sorted vectors: a hash map
/// of these cost the wasm a copy of the map's code.
#[derive(Debug, Clone, Default)]
struct Slots {
    now: Vec<(u64, Option<u64>)>,
    before: Vec<(u64, Option<u64>)>,
}

impl PartialEq for Slots {
    fn eq(&self, _: &Slots) -> bool {
        true
    }
}

impl Slots {
    fn of(&mut self, content: &str) -> Option<u64> {
        let key = Fnv64::of(content.as_bytes());
        let slot = match self.before.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(at) => self.before[at].1,
            Err(_) => Details::new(content).slot(),
        };
        self.now.push((key, slot));
        slot
    }

    /// What the next fold looks up.
    fn for_next(self) -> Slots {
        let mut before = self.now;
        crate::order::sort_by(&mut before, |a, b| a.0.cmp(&b.0));
        before.dedup_by(|a, b| a.0 == b.0);
        Slots { now: Vec::with_capacity(before.len()), before }
    }
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
        let mut sorted: Vec<(OpId, &Op)> = ops.into_iter().map(|op| (op.id(), op)).collect();
        crate::order::sort_by(&mut sorted, |a, b| a.0.cmp(&b.0));
        sorted.dedup_by(|a, b| a.0 == b.0);
        View::of_sorted(sorted.iter().map(|(_, op)| *op), Slots::default())
    }

    /// The view of `ops`, given in id order without duplicates.
    fn of_sorted<'a>(ops: impl Iterator<Item = &'a Op> + Clone, slot_of: Slots) -> View {
        let purges = ops.clone().filter(|op| matches!(op.action, Action::Purge));
        let purged = purges.map(|op| op.stamp.clock).max().unwrap_or(0);
        let slot_of = slot_of.for_next();
        let mut view = View { purged, slot_of, ..View::default() };
        let ops = ops.filter(move |op| op.stamp.clock >= purged);
        // What is forgotten is known first: nothing writing it counts.
        for op in ops.clone() {
            if let Action::Forget { ids } = &op.action {
                for id in ids {
                    view.forgot(id, op.stamp);
                }
            }
        }
        for op in ops {
            view.apply(op);
        }
        view
    }

    /// The clock of the last purge (0 if none): what is stamped before it
    /// counts for nothing.
    pub fn purged(&self) -> u64 {
        self.purged
    }

    /// Whether `op` writes the text of a memory forgotten since: its text
    /// counts for nothing, and its erased form ([`Op::erased`]) does
    /// what it does.
    pub fn is_erasable(&self, op: &Op) -> bool {
        op.entry().is_some_and(|e| self.forgotten_at(&e.id, op.stamp))
    }

    /// Whether a write of `id` stamped `stamp` was forgotten afterwards.
    fn forgotten_at(&self, id: &str, stamp: Stamp) -> bool {
        self.forgotten.get(id).is_some_and(|at| (stamp.clock as i64) < *at)
    }

    fn forgot(&mut self, id: &str, stamp: Stamp) {
        let at = self.forgotten.entry(id.to_string()).or_insert(stamp.clock as i64);
        *at = (*at).max(stamp.clock as i64);
    }

    /// The ids whose memory changed since the last call.
    pub fn take_touched(&mut self) -> Vec<String> {
        std::mem::take(&mut self.touched.0)
    }

    fn touch(&mut self, id: &str) {
        self.touched.0.push(id.to_string());
    }

    /// Applies `op`, made after every operation applied so far (a view of
    /// operations that arrive out of order is made again, [`View::of`]).
    pub fn apply(&mut self, op: &Op) {
        match &op.action {
            Action::Create { entry } => self.create(entry, &[], op.stamp),
            Action::Supersede { entry, replaces } => self.create(entry, replaces, op.stamp),
            Action::Retract { id } => self.retract(id, op.stamp),
            Action::Import { entry } => self.import(entry, op.stamp),
            Action::Erased { id, replaces } => self.erased(id, replaces, op.stamp),
            Action::Forget { ids } => {
                for id in ids {
                    self.forget(id, op.stamp);
                }
            }
            Action::Processed { hashes, until } => {
                for h in hashes {
                    let at = self.processed.entry(h.clone()).or_insert(*until);
                    *at = (*at).max(*until);
                }
            }
            // Applied after what it purges, it makes the view again
            // ([`Log::insert_named`]).
            Action::Purge => self.purged = self.purged.max(op.stamp.clock),
        }
    }

    fn create(&mut self, entry: &MemoryEntry, replaces: &[String], stamp: Stamp) {
        if self.forgotten_at(&entry.id, stamp) {
            return self.erased(&entry.id, replaces, stamp);
        }
        if self.memories.contains_key(&entry.id) {
            return;
        }
        let mut e = MemoryEntry { superseded_by: None, valid_to: None, ..entry.clone() };
        e.metadata.remove(UNDONE);
        let key = said(&e.scope, &e.content);
        let mut replaced = self.heads_of(replaces);
        replaced.retain(|head| *head != e.id);
        self.join_all(&e.id, replaces);
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
        // Another value of the same state, in force: a writer that did not
        // see it. The later replaces it, as a supersession would.
        let slot = match e.temporal {
            Some(Temporal::Event) => None,
            _ => self.slot_of.of(&e.content).map(|s| {
                Fnv64::default().feed(e.scope.to_string().as_bytes()).feed(&s.to_le_bytes()).finish()
            }),
        };
        if let Some(holder) = slot.and_then(|s| self.slots.get(&s)).cloned() {
            let in_force = self.memories.get(&holder).is_some_and(|h| h.is_valid());
            if in_force && holder != e.id && !replaced.contains(&holder) {
                self.join(&e.id, &holder);
                replaced.push(holder);
            }
        }
        if !replaces.is_empty() {
            e.metadata.insert(SUPERSEDES.into(), replaces.join(","));
        }
        for old in &replaced {
            self.leave_force(old, Some(&e.id), stamp);
        }
        self.links.entry(e.id.clone()).or_default().replaced = replaced;
        self.saying.insert(key, e.id.clone());
        if let Some(s) = slot {
            self.links.entry(e.id.clone()).or_default().slot = Some(s);
        }
        self.enter_force(&e.id);
        self.touch(&e.id);
        self.memories.insert(e.id.clone(), e);
    }

    /// A write of a memory forgotten since: it never enters the view, but
    /// what it replaced stays replaced (forgetting a new value does not
    /// bring the old one back).
    fn erased(&mut self, id: &str, replaces: &[String], stamp: Stamp) {
        self.join_all(id, replaces);
        for head in self.heads_of(replaces) {
            if head != id {
                self.leave_force(&head, Some(id), stamp);
            }
        }
    }

    fn import(&mut self, entry: &MemoryEntry, stamp: Stamp) {
        if self.forgotten_at(&entry.id, stamp) || self.memories.get(&entry.id) == Some(entry) {
            return;
        }
        let mut e = entry.clone();
        if let Some(old) = self.memories.remove(&e.id) {
            let key = said(&old.scope, &old.content);
            if self.saying.get(&key).is_some_and(|holder| *holder == e.id) {
                self.saying.remove(&key);
            }
            let root = self.root(&e.id);
            if let Some(links) = self.links.get_mut(&root) {
                links.in_force.remove(&e.id);
            }
        }
        let replaces: Vec<String> = e
            .metadata
            .get(SUPERSEDES)
            .map(|s| s.split(',').filter(|id| !id.is_empty()).map(str::to_string).collect())
            .unwrap_or_default();
        self.join_all(&e.id, &replaces);
        if let Some(by) = e.superseded_by.clone() {
            self.join(&e.id, &by);
        }
        self.links.entry(e.id.clone()).or_default().replaced = replaces;
        self.touch(&e.id);
        if e.is_valid() {
            let key = said(&e.scope, &e.content);
            match self.saying.get(&key) {
                // Said already by a memory in force: like a create, it joins
                // that one's history.
                Some(holder) if *holder != e.id => {
                    let holder = holder.clone();
                    self.join(&e.id, &holder);
                    e.superseded_by = Some(holder);
                    e.valid_to = Some(stamp.ms().max(e.valid_since()));
                }
                _ => {
                    // One in force per lineage: an import into a lineage
                    // that has one in force now takes its place.
                    for other in self.in_force_in(&e.id) {
                        self.leave_force(&other, Some(&e.id), stamp);
                    }
                    self.saying.insert(key, e.id.clone());
                    self.enter_force(&e.id);
                }
            }
        }
        self.memories.insert(e.id.clone(), e);
    }

    /// The root of `id`'s lineage.
    fn root(&self, id: &str) -> String {
        let mut at = id;
        while let Some(up) = self.links.get(at).and_then(|l| l.parent.as_ref()).filter(|up| *up != at) {
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
        self.compress(a, &root);
        self.compress(b, &root);
        let moved = self.links.get_mut(&child).map(|l| std::mem::take(&mut l.in_force));
        if let Some(moved) = moved.filter(|m| !m.is_empty()) {
            self.links.entry(root.clone()).or_default().in_force.extend(moved);
        }
        self.links.entry(child).or_default().parent = Some(root);
    }

    /// Joins `id` with each of `ids`, the smallest first: each root then
    /// joins under the first one's, which the join points it at. Joined
    /// largest first, each would become the parent of the root before it,
    /// a path as long as the list that no later join walks (a version
    /// naming a batch of 60 versions, newest first, made a path of 59).
    fn join_all(&mut self, id: &str, ids: &[String]) {
        let mut ids: Vec<&String> = ids.iter().collect();
        crate::order::sort(&mut ids);
        for old in ids {
            self.join(id, old);
        }
    }

    /// Points every memory on the way from `id` up to `root` at `root`:
    /// a lineage of n versions would otherwise grow a path of up to n
    /// links, walked for each memory a new version names. Which memory is
    /// the root is unchanged, and the same operations in the same order
    /// make the same forest.
    fn compress(&mut self, id: &str, root: &str) {
        let mut at = id.to_string();
        while at != root {
            let Some(links) = self.links.get_mut(&at) else { break };
            match links.parent.replace(root.to_string()) {
                Some(up) if up != at => at = up,
                _ => break,
            }
        }
    }

    /// The longest way from a memory up to its lineage's root.
    #[cfg(test)]
    pub(crate) fn deepest_lineage(&self) -> usize {
        let depth = |id: &String| {
            let mut at = id;
            let mut n = 0;
            while let Some(up) = self.links.get(at).and_then(|l| l.parent.as_ref()).filter(|up| *up != at) {
                (at, n) = (up, n + 1);
            }
            n
        };
        self.links.keys().map(depth).max().unwrap_or(0)
    }

    fn in_force_in(&self, id: &str) -> Vec<String> {
        self.links.get(&self.root(id)).map_or(Vec::new(), |l| l.in_force.iter().cloned().collect())
    }

    fn enter_force(&mut self, id: &str) {
        if let Some(s) = self.links.get(id).and_then(|l| l.slot) {
            self.slots.insert(s, id.to_string());
        }
        let root = self.root(id);
        self.links.entry(root).or_default().in_force.insert(id.to_string());
    }

    /// The memories in force that `ids` have become, each once: itself,
    /// what replaced it, or, where an undo took it back, what came back in
    /// its place. One walk for them all: a new version names every version
    /// before it, so a walk of its own for each would go down a lineage of
    /// n versions n times, and a log of one long lineage would fold in
    /// cubic time. The newest named first: the walk from each older one
    /// then stops at the newer one it reached already (oldest first, each
    /// walk went down the whole lineage again).
    fn heads_of(&self, ids: &[String]) -> Vec<String> {
        let (mut heads, mut seen) = (Vec::new(), BTreeSet::new());
        for id in ids.iter().rev() {
            self.walk_to_heads(id, &mut seen, &mut heads);
        }
        heads.reverse();
        heads
    }

    fn walk_to_heads(&self, id: &str, seen: &mut BTreeSet<String>, heads: &mut Vec<String>) {
        let mut next = vec![id.to_string()];
        while let Some(id) = next.pop() {
            let Some(e) = self.memories.get(&id).filter(|_| seen.insert(id.clone())) else { continue };
            match &e.superseded_by {
                _ if e.is_valid() => heads.push(id),
                Some(by) => next.push(by.clone()),
                None => next.extend(self.replaced_by(&id).iter().cloned()),
            }
        }
    }

    fn leave_force(&mut self, id: &str, by: Option<&str>, stamp: Stamp) {
        let Some(e) = self.memories.get_mut(id) else { return };
        if !e.is_valid() {
            return;
        }
        e.superseded_by = by.map(str::to_string);
        e.valid_to = Some(stamp.ms().max(e.valid_since()));
        self.touched.0.push(id.to_string());
        let key = said(&e.scope, &e.content);
        if self.saying.get(&key).is_some_and(|holder| holder == id) {
            self.saying.remove(&key);
        }
        let root = self.root(id);
        if let Some(links) = self.links.get_mut(&root) {
            links.in_force.remove(id);
        }
    }

    fn retract(&mut self, id: &str, stamp: Stamp) {
        if self.forgotten_at(id, stamp) {
            return;
        }
        let Some(e) = self.memories.get_mut(id) else { return };
        let was_in_force = e.is_valid();
        e.metadata.insert(UNDONE.into(), "true".into());
        if !was_in_force {
            return;
        }
        self.leave_force(id, None, stamp);
        for old in self.replaced_by(id).to_vec() {
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
                    self.touched.0.push(old.clone());
                    self.enter_force(&old);
                    self.saying.insert(key, old);
                }
            }
        }
    }

    fn forget(&mut self, id: &str, stamp: Stamp) {
        self.forgot(id, stamp);
        self.touch(id);
        let root = self.root(id);
        if let Some(links) = self.links.get_mut(&root) {
            links.in_force.remove(id);
        }
        if let Some(e) = self.memories.remove(id) {
            let key = said(&e.scope, &e.content);
            if self.saying.get(&key).is_some_and(|holder| *holder == e.id) {
                self.saying.remove(&key);
            }
        }
        if let Some(links) = self.links.get_mut(id) {
            links.replaced.clear();
        }
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
        self.forgotten.contains_key(id) && !self.memories.contains_key(id)
    }

    /// Judged messages whose mark lasts past `now`.
    pub fn is_processed(&self, hash: &str, now: i64) -> bool {
        self.processed.get(hash).is_some_and(|until| *until > now)
    }

    /// Judged messages with the time each mark lasts until.
    pub fn processed(&self) -> impl Iterator<Item = (&String, &i64)> {
        self.processed.iter()
    }

    /// The memories `id` replaced directly.
    pub fn replaced_by(&self, id: &str) -> &[String] {
        self.links.get(id).map_or(&[], |l| l.replaced.as_slice())
    }
}

/// A log held in memory: its operations in id order (a sorted vector: the
/// log grows at its end, and a `BTreeMap` of them cost the wasm 10 KB) and
/// their view, kept in step.
#[derive(Debug, Clone, Default)]
pub struct Log {
    ops: Vec<(OpId, Op)>,
    view: View,
    refolded: bool,
}

impl Log {
    /// Adds operations (any order, any already held); says how many were new.
    /// Operations after every one held are applied to the view; one that
    /// sorts earlier (a writer's delayed operation) makes the view again.
    ///
    /// A forget also makes the view again: what it forgets counts as never
    /// written, so what those writes did to other memories is undone.
    pub fn insert(&mut self, ops: impl IntoIterator<Item = Op>) -> usize {
        self.insert_named(ops.into_iter().map(|op| (op.id(), op)))
    }

    /// [`Log::insert`] of operations whose ids are already made.
    pub fn insert_named(&mut self, ops: impl IntoIterator<Item = (OpId, Op)>) -> usize {
        let held = self.ops.len();
        let mut refold = false;
        for (id, op) in ops {
            let in_order = self.ops.last().is_none_or(|(last, _)| *last < id);
            if !in_order {
                if self.find(&id).is_ok() {
                    continue;
                }
                refold = true;
            }
            refold |= matches!(op.action, Action::Forget { .. } | Action::Purge);
            if !refold {
                self.view.apply(&op);
            }
            self.ops.push((id, op));
        }
        if refold {
            crate::order::sort_by(&mut self.ops, |a, b| a.0.cmp(&b.0));
            self.ops.dedup_by(|a, b| a.0 == b.0);
            self.fold_again();
        }
        self.ops.len() - held
    }

    fn find(&self, id: &OpId) -> Result<usize, usize> {
        self.ops.binary_search_by(|(other, _)| other.cmp(id))
    }

    /// Whether the view was made again since the last call: which memories
    /// changed is then not known one by one.
    pub fn take_refolded(&mut self) -> bool {
        std::mem::take(&mut self.refolded)
    }

    pub fn view_mut(&mut self) -> &mut View {
        &mut self.view
    }

    /// Erases the text of every operation writing a memory forgotten
    /// since ([`View::is_erasable`]); gives their ids. The view stays as
    /// it is.
    pub fn erase_forgotten(&mut self) -> Vec<OpId> {
        let mut erased = Vec::new();
        for (id, op) in self.ops.iter_mut() {
            if self.view.is_erasable(op) {
                if let Some(e) = op.erased() {
                    *op = e;
                    erased.push(id.clone());
                }
            }
        }
        erased
    }

    /// Holds the erased twins `twins` (each of an operation held) in place
    /// of their originals, and makes the view again; gives their ids,
    /// sorted.
    pub fn take_erased(&mut self, twins: Vec<(OpId, Op)>) -> Vec<OpId> {
        let mut ids = Vec::with_capacity(twins.len());
        for (id, twin) in twins {
            if let Ok(at) = self.find(&id) {
                self.ops[at].1 = twin;
                ids.push(id);
            }
        }
        crate::order::sort(&mut ids);
        self.fold_again();
        ids
    }

    /// Takes out the operations `ids` (sorted) and makes the view again;
    /// gives those it held.
    pub fn remove(&mut self, ids: &[OpId]) -> Vec<OpId> {
        let mut removed = Vec::new();
        self.ops.retain(|(id, _)| {
            let out = ids.binary_search(id).is_ok();
            if out {
                removed.push(id.clone());
            }
            !out
        });
        if !removed.is_empty() {
            self.fold_again();
        }
        removed
    }

    /// Makes the view again from the operations (the slots the last fold
    /// found kept for this one).
    fn fold_again(&mut self) {
        let slots = std::mem::take(&mut self.view.slot_of);
        self.view = View::of_sorted(self.ops.iter().map(|(_, op)| op), slots);
        self.refolded = true;
    }

    pub fn get(&self, id: &OpId) -> Option<&Op> {
        self.find(id).ok().map(|at| &self.ops[at].1)
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    /// Every operation held, in id order.
    pub fn ops(&self) -> impl Iterator<Item = (&OpId, &Op)> {
        self.ops.iter().map(|(id, op)| (id, op))
    }
}
