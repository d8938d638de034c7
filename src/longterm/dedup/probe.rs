//! A first look at a pair, from a few numbers per memory.
//!
//! Comparing a new memory with every stored one of its scope is the cost of
//! a write into a large namespace, and nearly every pair is unrelated. A
//! fingerprint and its memory sit apart on the heap, so merely reading
//! them for each pair costs cache misses before any bound is computed. A
//! [`Probe`] packs what the bounds need (lengths, counts, the bigram bloom,
//! the character histogram, the polarity, hashes of the normalized text,
//! of the polarity-free core, of a state's subject and predicate and of the
//! scope) into 160 bytes kept in one
//! array: [`may_relate`] rules a pair out
//! from those alone, and only the pairs it keeps are compared in full. It
//! never rules out a pair [`relation_of`] would relate, so the answers are
//! the same as comparing every pair.

use std::hash::{BuildHasher, Hash};

use super::{DedupOptions, Fingerprint};

/// What [`may_relate`] reads of a memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    bloom: [u64; 4],
    histogram: [u8; 64],
    /// A hash of the scope: equal for equal scopes (the full comparison
    /// checks the scope itself).
    scope: u64,
    /// A hash of the text's polarity-free core, `None` when it has none.
    core: Option<u64>,
    /// A hash of the subject and predicate of the state it sets, if any.
    state: Option<u64>,
    /// A hash of the normalized text: equal texts hash alike.
    normalized: u64,
    normalized_len: u32,
    chars: u32,
    bigrams: u32,
    one_char: bool,
    negative: bool,
}

fn hash_of(value: impl Hash) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(value)
}

impl Probe {
    /// The probe of a memory with fingerprint `fp` in `scope` (any value
    /// that is equal exactly for equal scopes).
    pub fn new(fp: &Fingerprint, scope: impl Hash) -> Probe {
        let (negative, core) = fp.details.polarity();
        Probe {
            bloom: fp.bloom,
            histogram: fp.histogram,
            scope: hash_of(scope),
            core: (!core.is_empty()).then(|| hash_of(core)),
            state: fp.details.state().map(|s| hash_of((&s.subject, s.predicate))),
            normalized: hash_of(&fp.normalized),
            normalized_len: fp.normalized.len() as u32,
            chars: fp.chars as u32,
            bigrams: fp.bigrams.len() as u32,
            one_char: fp.one_char,
            negative,
        }
    }
}

/// The positions in `probes` of the probes [`may_relate`] keeps for `new`,
/// into `out` (cleared first): `remember`'s scan over every memory in
/// force, here so it is compiled with the hot paths (src/lib.rs).
pub fn related(new: &Probe, probes: &[Probe], opts: &DedupOptions, out: &mut Vec<usize>) {
    out.clear();
    out.extend(probes.iter().enumerate().filter(|(_, p)| may_relate(new, p, opts)).map(|(i, _)| i));
}

/// False only when the two memories are unrelated ([`relation_of`]
/// answers [`Relation::Unrelated`], or their scopes differ); true when one
/// of its tests may hold, each bound here being one [`similarity_of`]
/// takes before its exact measures.
///
/// [`relation_of`]: super::relation_of
/// [`Relation::Unrelated`]: super::Relation::Unrelated
/// [`similarity_of`]: super::similarity_of
#[inline(always)]
pub fn may_relate(new: &Probe, old: &Probe, opts: &DedupOptions) -> bool {
    if new.scope != old.scope {
        return false;
    }
    // Opposite polarity of the same core: a contradiction at any similarity.
    if new.negative != old.negative && new.core.is_some() && new.core == old.core {
        return true;
    }
    // One state's subject and predicate: a new value at any similarity.
    if new.state.is_some() && new.state == old.state {
        return true;
    }
    if new.normalized_len == 0 || old.normalized_len == 0 {
        return false;
    }
    // A text inside another has its bigrams' bloom bits inside the other's.
    if new.normalized == old.normalized || within(new, old) || within(old, new) {
        return true;
    }
    let (small, large) = (new.bigrams.min(old.bigrams), new.bigrams.max(old.bigrams));
    let union_bits = super::union_bits(&new.bloom, &old.bloom);
    // The ratios' bounds multiplied out, with a margin for the rounding of
    // the divisions they stand for: a pair at a threshold is kept.
    let most_shared = (new.bigrams + old.bigrams).saturating_sub(union_bits);
    let jaccard = opts.jaccard - 1e-9;
    if large > 0
        && small as f64 >= jaccard * large as f64
        && (union_bits == 0 || most_shared as f64 >= jaccard * union_bits as f64)
    {
        return true;
    }
    let short = opts.short_text_chars as u64;
    if (new.chars as u64) > short || (old.chars as u64) > short {
        return false;
    }
    let longest = new.chars.max(old.chars) as f64;
    let max_edits = ((1.0 - opts.levenshtein) * longest + 1e-9).floor();
    if !(new.one_char || old.one_char || union_bits as f64 - small as f64 <= 2.0 * max_edits) {
        return false;
    }
    let min_distance = super::histogram_distance(&new.histogram, &old.histogram).div_ceil(2) as f64;
    min_distance <= (1.0 - opts.levenshtein + 1e-9) * longest
}

/// Whether `small`'s normalized text may occur inside `large`'s.
#[inline(always)]
fn within(small: &Probe, large: &Probe) -> bool {
    small.normalized_len < large.normalized_len
        && (small.one_char || super::bloom_within(&small.bloom, &large.bloom))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::longterm::dedup::{relation_of, Relation};

    /// Texts near one another and far apart: reworded, contained, with a
    /// number or a polarity changed, CJK, one character, empty.
    fn texts() -> Vec<String> {
        let mut pick = crate::seeded::picker(0x5eed_0f9a_1c00);
        let words = [
            "the", "user", "likes", "does", "not", "like", "spicy", "food", "lives", "in", "Lisbon",
            "Berlin", "has", "2", "3", "kids", "cats", "named", "Miso", "prefers", "dark", "mode", "never",
            "coffee", "tea", "every", "morning", "on", "Monday", "Tuesday", "喜欢", "不", "吃辣", "住在",
            "北京", "x",
        ];
        let mut out: Vec<String> = vec![String::new(), "a".into(), "不".into(), "Likes tea".into()];
        for _ in 0..400 {
            let n = 1 + pick(9);
            let t: Vec<&str> = (0..n).map(|_| words[pick(words.len())]).collect();
            let text = t.join(" ");
            // A neighbour of each: a word dropped, added or swapped.
            let mut near = t.clone();
            match pick(3) {
                0 if near.len() > 1 => drop(near.remove(pick(near.len()))),
                1 => near.insert(pick(near.len() + 1), words[pick(words.len())]),
                _ => near[pick(t.len())] = words[pick(words.len())],
            }
            out.push(text);
            out.push(near.join(" "));
        }
        out
    }

    #[test]
    fn never_rules_out_a_pair_the_full_comparison_relates() {
        let texts = texts();
        let fps: Vec<Fingerprint> = texts.iter().map(|t| Fingerprint::new(t)).collect();
        let probes: Vec<Probe> = fps.iter().map(|fp| Probe::new(fp, "user")).collect();
        let options = [
            DedupOptions::default(),
            DedupOptions::EXACT,
            DedupOptions { jaccard: 0.5, levenshtein: 0.6, short_text_chars: 30 },
        ];
        let (mut related, mut kept) = (0, 0);
        for opts in &options {
            for (i, a) in fps.iter().enumerate() {
                for (j, b) in fps.iter().enumerate() {
                    let keep = may_relate(&probes[i], &probes[j], opts);
                    kept += keep as u32;
                    if relation_of(a, b, opts) != Relation::Unrelated {
                        related += 1;
                        assert!(keep, "{:?} vs {:?} under {opts:?}", texts[i], texts[j]);
                    }
                }
            }
        }
        // The test sees both kinds of pair, and the probe rules most out.
        let pairs = (options.len() * fps.len() * fps.len()) as u32;
        assert!(related > 1000, "{related} related pairs");
        assert!(kept < pairs / 2, "{kept} of {pairs} kept");
    }

    #[test]
    fn other_scopes_are_ruled_out() {
        let fp = Fingerprint::new("Likes tea");
        assert!(may_relate(&Probe::new(&fp, "user"), &Probe::new(&fp, "user"), &DedupOptions::default()));
        assert!(!may_relate(&Probe::new(&fp, "user"), &Probe::new(&fp, "agent:a"), &DedupOptions::default()));
    }
}
