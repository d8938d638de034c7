//! Sorting off the hot paths through one compiled sort.
//!
//! Each `sort_by` call site with its own element type or comparator is a
//! new instance of the standard library's sorts (driftsort and its small
//! sorts, 3-8 KB of wasm each); the module held 18 of them, about 115 KB.
//! [`sort_by`] sorts a permutation of positions instead, with the caller's
//! comparator behind a `dyn` reference, so every caller shares one instance
//! of the sort and pays only the few instructions that apply the
//! permutation. The price, an indirect call per comparison, matters only in
//! loops: the tokenizer, the search index and dedup keep their own sorts.
//! Collecting into a `BTreeMap` or `BTreeSet` sorts as well (one more
//! instance per element type): [`map_of`] and [`set_of`] insert instead.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` stably (equal items keep their order) by `compare`.
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let mut order = permutation(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    apply(items, &mut order);
}

/// Sorts `items` stably in their natural order.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// A map of `items`, inserted one at a time (a later key wins, as in
/// `collect`).
pub fn map_of<K: Ord, V>(items: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(items);
    map
}

/// A set of `items`, inserted one at a time.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// The positions `0..n` in the order `compare` gives them, ties in
/// position order: the one instance of the sort.
fn permutation(n: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| compare(a, b).then(a.cmp(&b)));
    order
}

/// Rearranges `items` so that position `k` holds what was at `order[k]`,
/// in place, one cycle of the permutation at a time; leaves `order` as the
/// identity.
fn apply<T>(items: &mut [T], order: &mut [usize]) {
    for start in 0..items.len() {
        let mut at = start;
        // Each swap brings `at` its item and moves the cycle's first item
        // on, to the position that wants it last.
        while order[at] != start {
            let next = order[at];
            items.swap(at, next);
            order[at] = at;
            at = next;
        }
        order[at] = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_standard_stable_sort() {
        let mut pick = crate::seeded::picker(0x0dde_5017);
        for n in [0, 1, 2, 3, 7, 20, 64, 257, 1000] {
            // Few distinct keys, so ties are many and stability shows.
            let items: Vec<(u8, usize)> = (0..n).map(|i| (pick(5) as u8, i)).collect();
            let mut ours = items.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut theirs = items.clone();
            theirs.sort_by_key(|t| t.0);
            assert_eq!(ours, theirs, "n = {n}");
            let mut reversed = items.clone();
            sort_by(&mut reversed, |a, b| b.0.cmp(&a.0));
            theirs.sort_by_key(|t| std::cmp::Reverse(t.0));
            assert_eq!(reversed, theirs, "n = {n}, descending");
        }
    }

    #[test]
    fn maps_and_sets_hold_what_collect_would() {
        let pairs = [("b", 1), ("a", 2), ("b", 3)];
        assert_eq!(map_of(pairs), pairs.into_iter().collect::<BTreeMap<_, _>>());
        assert_eq!(set_of(["b", "a", "b"]), ["b", "a", "b"].into_iter().collect::<BTreeSet<_>>());
    }

    #[test]
    fn sorts_owned_values_in_natural_order() {
        let mut words: Vec<String> = ["pear", "apple", "fig", "apple", "date"].map(String::from).to_vec();
        sort(&mut words);
        assert_eq!(words, ["apple", "apple", "date", "fig", "pear"]);
    }
}
