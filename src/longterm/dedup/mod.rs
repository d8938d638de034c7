//! Local near-duplicate detection for memories, in the enterprise design's
//! order: exact (after normalization), containment, character Jaccard
//! (>= 0.7), and, for short texts, Levenshtein similarity (>= 0.8).
//!
//! "Character Jaccard" is computed over character bigrams, not single
//! characters: any two English sentences of some length share most of the
//! alphabet, so a unigram Jaccard would call unrelated facts duplicates,
//! while bigrams keep the measure meaningful for English and CJK alike.

mod details;
mod levenshtein;
mod probe;

pub use details::{Change, Details};
pub use probe::{may_relate, related, Probe};

use serde::{Deserialize, Serialize};

use crate::hash::Fnv64;

/// Thresholds, with the design's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DedupOptions {
    /// Character-bigram Jaccard threshold. Default 0.7.
    pub jaccard: f64,
    /// Levenshtein similarity threshold for short texts. Default 0.8.
    pub levenshtein: f64,
    /// Texts up to this many characters (both) are compared by Levenshtein. Default 100.
    pub short_text_chars: usize,
}

impl DedupOptions {
    /// Only exact and containment matches: for a text a model already
    /// compared with its neighbours and judged new ("prefers tea" and
    /// "prefers jazz" are close by characters, far apart in meaning).
    pub const EXACT: DedupOptions =
        DedupOptions { jaccard: f64::INFINITY, levenshtein: f64::INFINITY, short_text_chars: 0 };
}

impl Default for DedupOptions {
    fn default() -> Self {
        DedupOptions { jaccard: 0.7, levenshtein: 0.8, short_text_chars: 100 }
    }
}

/// How a new text relates to an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Similarity {
    Exact,
    /// The existing text contains the new one: nothing new to store.
    ContainedInExisting,
    /// The new text contains the existing one: it is a more complete version.
    ContainsExisting,
    Jaccard {
        score: f64,
    },
    Levenshtein {
        score: f64,
    },
}

/// Lowercased, whitespace collapsed, trailing punctuation dropped: "I like
/// Rust." and "i like rust" are the same memory.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    let trimmed = out.trim_end_matches(|c: char| c.is_ascii_punctuation() || "。！？，；：、…".contains(c));
    trimmed.to_string()
}

/// Character bigrams (whitespace skipped), packed and sorted, for merge
/// intersections; a one-character text is its own single "bigram".
fn bigrams(text: &str) -> Vec<u64> {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out: Vec<u64> = if chars.len() == 1 {
        vec![(chars[0] as u64) << 32]
    } else {
        chars.windows(2).map(|w| (w[0] as u64) << 32 | w[1] as u64).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

fn jaccard_sorted(x: &[u64], y: &[u64]) -> f64 {
    if x.is_empty() && y.is_empty() {
        return 1.0;
    }
    let inter = shared(x, y);
    inter as f64 / (x.len() + y.len() - inter) as f64
}

/// How many elements two sorted, deduplicated lists share.
#[inline(always)]
fn shared(x: &[u64], y: &[u64]) -> usize {
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter
}

/// Jaccard similarity of the two texts' character bigram sets.
pub fn jaccard(a: &str, b: &str) -> f64 {
    jaccard_sorted(&bigrams(a), &bigrams(b))
}

/// What dedup needs of a text, computed once per memory: comparing a new
/// memory against every stored one then costs a few cheap bounds per pair,
/// and the exact measures run only where the bounds cannot rule a match out.
#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    normalized: String,
    chars: usize,
    bigrams: Vec<u64>,
    /// Characters counted into 64 buckets by code point. Each edit changes
    /// the histogram's L1 distance by at most 2 (merging characters into
    /// buckets only lowers it), so half the L1 distance bounds the edit
    /// distance from below.
    histogram: [u8; 64],
    /// The bigrams hashed into 256 bits. A text inside another has its
    /// bigrams inside the other's, so its bits are too: most pairs are
    /// ruled out of containment without a substring search.
    bloom: [u64; 4],
    /// Fewer than two non-space characters: no real bigram to compare.
    one_char: bool,
    details: Details,
    /// A hash of the text it was made of, to tell it still stands for a
    /// memory's text without making it again.
    text: u64,
}

fn bloom(bigrams: &[u64]) -> [u64; 4] {
    let mut bits = [0u64; 4];
    for &b in bigrams {
        let h = (b.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
        bits[h / 64] |= 1 << (h % 64);
    }
    bits
}

// The per-pair helpers below run for every stored memory a new one is
// compared with. The wasm build inlines little (see .cargo/config.toml), so
// they are forced inline and written as plain loops over fixed-size arrays:
// an iterator adapter's closure there stays a call per element, which keeps
// the loop from being unrolled or vectorized.

/// Whether `small`'s normalized text may occur inside `large`'s.
#[inline(always)]
fn may_be_within(small: &Fingerprint, large: &Fingerprint) -> bool {
    if small.normalized.len() >= large.normalized.len() {
        return false;
    }
    small.one_char || bloom_within(&small.bloom, &large.bloom)
}

/// Whether every bit of `small` is set in `large`.
#[inline(always)]
fn bloom_within(small: &[u64; 4], large: &[u64; 4]) -> bool {
    let mut outside = 0;
    for i in 0..4 {
        outside |= small[i] & !large[i];
    }
    outside == 0
}

/// The bits set in either bloom.
#[inline(always)]
fn union_bits(a: &[u64; 4], b: &[u64; 4]) -> u32 {
    let mut bits = 0;
    for i in 0..4 {
        bits += (a[i] | b[i]).count_ones();
    }
    bits
}

/// The L1 distance of two character histograms.
#[inline(always)]
fn histogram_distance(a: &[u8; 64], b: &[u8; 64]) -> u32 {
    let mut l1 = 0u32;
    for i in 0..64 {
        l1 += a[i].abs_diff(b[i]) as u32;
    }
    l1
}

impl Fingerprint {
    pub fn new(text: &str) -> Fingerprint {
        let normalized = normalize(text);
        let mut histogram = [0u8; 64];
        let mut chars = 0;
        for c in normalized.chars() {
            let b = &mut histogram[c as usize % 64];
            *b = b.saturating_add(1);
            chars += 1;
        }
        let bigrams = bigrams(&normalized);
        let bloom = bloom(&bigrams);
        let one_char = normalized.chars().filter(|c| !c.is_whitespace()).count() < 2;
        let details = Details::new(text);
        Fingerprint {
            normalized,
            chars,
            bigrams,
            histogram,
            bloom,
            one_char,
            details,
            text: Fnv64::of(text.as_bytes()),
        }
    }

    /// Whether it was made of `text`.
    pub fn is_of(&self, text: &str) -> bool {
        self.text == Fnv64::of(text.as_bytes())
    }
}

/// How a new memory relates to a stored one of its scope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Relation {
    /// The stored memory already says it.
    Duplicate(Similarity),
    /// The new memory contains the stored one: a fuller version.
    Fuller,
    /// Similar, but a detail differs (a number, a date, a name), or it
    /// says the opposite: an update of the stored memory, never a duplicate.
    Changed(Change),
    Unrelated,
}

/// [`similarity_of`], then the details ([`Details`]) that make a similar
/// text a different fact.
pub fn relation_of(new: &Fingerprint, existing: &Fingerprint, opts: &DedupOptions) -> Relation {
    let (d, old) = (&new.details, &existing.details);
    // Two events on different dates both happened, however alike.
    if let (Some(a), Some(b)) = (d.occasion(), old.occasion()) {
        if a.text != b.text {
            return Relation::Unrelated;
        }
    }
    // A new value of one single-valued state replaces the old one, however
    // different the words ("Lives in Porto" after "Lives in Lisbon").
    if let (Some(a), Some(b)) = (d.state(), old.state()) {
        if a.subject == b.subject && a.predicate == b.predicate && a.value != b.value {
            return Relation::Changed(d.change_from(old).unwrap_or(Change::Value));
        }
    }
    let change = || new.details.change_from(&existing.details);
    match similarity_of(new, existing, opts) {
        Some(Similarity::Exact) => Relation::Duplicate(Similarity::Exact),
        Some(Similarity::ContainsExisting) => match change() {
            Some(Change::Polarity) => Relation::Changed(Change::Polarity),
            _ => Relation::Fuller,
        },
        Some(Similarity::ContainedInExisting) => match change() {
            Some(Change::Polarity) => Relation::Changed(Change::Polarity),
            _ => Relation::Duplicate(Similarity::ContainedInExisting),
        },
        Some(similar) => match change() {
            Some(c) => Relation::Changed(c),
            None => Relation::Duplicate(similar),
        },
        None if new.details.contradicts(&existing.details) => Relation::Changed(Change::Polarity),
        None => Relation::Unrelated,
    }
}

/// [`relation_of`] on texts.
pub fn relation(new: &str, existing: &str, opts: &DedupOptions) -> Relation {
    relation_of(&Fingerprint::new(new), &Fingerprint::new(existing), opts)
}

/// [`similarity`] on fingerprints: the same answer, faster.
pub fn similarity_of(new: &Fingerprint, existing: &Fingerprint, opts: &DedupOptions) -> Option<Similarity> {
    let (n, e) = (&new.normalized, &existing.normalized);
    if n.is_empty() || e.is_empty() {
        return None;
    }
    if n == e {
        return Some(Similarity::Exact);
    }
    if may_be_within(new, existing) && e.contains(n.as_str()) {
        return Some(Similarity::ContainedInExisting);
    }
    if may_be_within(existing, new) && n.contains(e.as_str()) {
        return Some(Similarity::ContainsExisting);
    }
    let (small, large) =
        (new.bigrams.len().min(existing.bigrams.len()), new.bigrams.len().max(existing.bigrams.len()));
    // Two upper bounds on the Jaccard before the exact one: the ratio of
    // the set sizes, and |A∩B| <= |A| + |B| - |A∪B| with the union at least
    // as large as the bits it sets in the bloom.
    let union_bits = union_bits(&new.bloom, &existing.bloom);
    let most_shared = (new.bigrams.len() + existing.bigrams.len()).saturating_sub(union_bits as usize);
    let jaccard_bound = if union_bits == 0 { 1.0 } else { most_shared as f64 / union_bits as f64 };
    // The bigrams both share, counted at most once per pair, when a
    // measure needs them.
    let mut shared_once = None;
    if large > 0 && small as f64 / large as f64 >= opts.jaccard && jaccard_bound >= opts.jaccard {
        let inter = *shared_once.insert(shared(&new.bigrams, &existing.bigrams));
        let j = inter as f64 / (small + large - inter) as f64;
        if j >= opts.jaccard {
            return Some(Similarity::Jaccard { score: j });
        }
    }
    if new.chars <= opts.short_text_chars && existing.chars <= opts.short_text_chars {
        // Each edit removes at most two bigrams of a text, so a text has at
        // most 2d bigrams the other lacks (whitespace is skipped in bigrams,
        // which only lowers the count); the bloom bounds that count from
        // below. Then the histogram bound; then the exact measure.
        let longest = new.chars.max(existing.chars) as f64;
        let max_edits = ((1.0 - opts.levenshtein) * longest + 1e-9).floor();
        let unique_bound = union_bits as f64 - new.bigrams.len().min(existing.bigrams.len()) as f64;
        let bigram_bound_ok = new.one_char || existing.one_char || unique_bound <= 2.0 * max_edits;
        let l1 =
            if bigram_bound_ok { histogram_distance(&new.histogram, &existing.histogram) } else { u32::MAX };
        let min_distance = l1.div_ceil(2) as f64;
        // The bloom's bound once more, with the bigrams the texts really
        // share: the larger set's bigrams missing from the other are at most
        // two per edit. Most pairs of unrelated texts of the same alphabet
        // get this far and stop here, short of the exact measure.
        let within_shared_bound = |inter: usize| (large - inter) as f64 <= 2.0 * max_edits;
        if bigram_bound_ok
            && 1.0 - min_distance / longest >= opts.levenshtein
            && (new.one_char
                || existing.one_char
                || within_shared_bound(
                    shared_once.unwrap_or_else(|| shared(&new.bigrams, &existing.bigrams)),
                ))
        {
            if let Some(l) = levenshtein::normalized_similarity(n, e, opts.levenshtein) {
                return Some(Similarity::Levenshtein { score: l });
            }
        }
    }
    None
}

/// The first test that matches, in the design's order, or `None`.
pub fn similarity(new: &str, existing: &str, opts: &DedupOptions) -> Option<Similarity> {
    similarity_of(&Fingerprint::new(new), &Fingerprint::new(existing), opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim(a: &str, b: &str) -> Option<Similarity> {
        similarity(a, b, &DedupOptions::default())
    }

    #[test]
    fn exact_after_normalization() {
        assert_eq!(sim("I like Rust.", "i  like rust"), Some(Similarity::Exact));
        assert_eq!(sim("我喜欢用 Java。", "我喜欢用 java"), Some(Similarity::Exact));
    }

    #[test]
    fn containment_both_ways() {
        assert_eq!(sim("likes Rust", "The user likes Rust and Go"), Some(Similarity::ContainedInExisting));
        assert_eq!(sim("The user likes Rust and Go", "likes Rust"), Some(Similarity::ContainsExisting));
    }

    #[test]
    fn jaccard_catches_reworded_duplicates() {
        let s =
            sim("The user prefers dark mode in every editor", "The user prefers dark mode in all editors");
        assert!(matches!(s, Some(Similarity::Jaccard { .. })), "{s:?}");
        assert!(jaccard("abc", "abc") == 1.0);
    }

    #[test]
    fn levenshtein_for_short_texts() {
        let s = sim("Lives in Berlin", "Lives in Berlín!");
        assert!(
            matches!(s, Some(Similarity::Levenshtein { .. }) | Some(Similarity::Jaccard { .. })),
            "{s:?}"
        );
        // Bigram Jaccard 0.625, edit similarity 0.89.
        assert!(matches!(sim("likes tea", "like tea"), Some(Similarity::Levenshtein { .. })));
    }

    #[test]
    fn unrelated_facts_are_not_duplicates() {
        assert_eq!(
            sim("The user works as a nurse in Lisbon", "The user has two cats named Miso and Tofu"),
            None
        );
        assert_eq!(sim("I like Rust", "I like Go"), None);
        assert_eq!(sim("喜欢喝咖啡", "讨厌下雨天"), None);
        assert_eq!(sim("", "anything"), None);
    }

    #[test]
    fn the_bounds_never_change_an_answer() {
        // Every pair of a varied set, by fingerprint and by the plain measures.
        let texts = [
            "likes tea",
            "like tea",
            "Lives in Berlin",
            "Lives in Berlín!",
            "I like Rust",
            "I like Go",
            "The user prefers dark mode in every editor",
            "The user prefers dark mode in all editors",
            "喜欢喝咖啡",
            "喜欢喝咖啡吗",
            "讨厌下雨天",
            "a",
            "ab",
            "ba",
            "abcdefghij",
            "abcdefghik",
            "Rust",
            "rust.",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(similarity(a, b, &DedupOptions::default()), reference(a, b), "{a:?} vs {b:?}");
            }
        }
    }

    /// The design's rules computed the plain way, with strsim.
    fn reference(a: &str, b: &str) -> Option<Similarity> {
        let opts = DedupOptions::default();
        let (na, nb) = (normalize(a), normalize(b));
        if na.is_empty() || nb.is_empty() {
            None
        } else if na == nb {
            Some(Similarity::Exact)
        } else if nb.contains(&na) {
            Some(Similarity::ContainedInExisting)
        } else if na.contains(&nb) {
            Some(Similarity::ContainsExisting)
        } else if jaccard(&na, &nb) >= opts.jaccard {
            Some(Similarity::Jaccard { score: jaccard(&na, &nb) })
        } else {
            let l = strsim::normalized_levenshtein(&na, &nb);
            let short = na.chars().count() <= 100 && nb.chars().count() <= 100;
            (short && l >= opts.levenshtein).then_some(Similarity::Levenshtein { score: l })
        }
    }

    #[test]
    fn the_bounds_agree_with_the_reference_on_random_near_duplicates() {
        let mut seed: u64 = 7;
        let mut rand = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let alphabet: Vec<char> = "abcde fgh喜欢咖".chars().collect();
        for _ in 0..3000 {
            let len = 1 + rand(60);
            let a: String = (0..len).map(|_| alphabet[rand(alphabet.len())]).collect();
            // A few random edits of `a`.
            let mut b: Vec<char> = a.chars().collect();
            for _ in 0..rand(8) {
                let at = rand(b.len() + 1);
                match rand(3) {
                    0 if at < b.len() => b[at] = alphabet[rand(alphabet.len())],
                    1 if at < b.len() => {
                        b.remove(at);
                    }
                    _ => b.insert(at, alphabet[rand(alphabet.len())]),
                }
            }
            let b: String = b.into_iter().collect();
            let (fast, plain) = (similarity(&a, &b, &DedupOptions::default()), reference(&a, &b));
            // Scores may differ in the last bits between the two libraries.
            let kind = |s: Option<Similarity>| s.map(|s| std::mem::discriminant(&s));
            assert_eq!(kind(fast), kind(plain), "{a:?} vs {b:?}: {fast:?} / {plain:?}");
        }
    }

    #[test]
    fn thresholds_are_configurable() {
        let strict = DedupOptions { jaccard: 0.99, levenshtein: 0.99, short_text_chars: 100 };
        assert_eq!(similarity("likes tea", "like tea", &strict), None);
    }

    #[test]
    fn near_duplicates_that_differ_in_a_detail_are_never_duplicates() {
        // Random facts built from one template; one detail changed each
        // time (a number, a weekday, a name, a negation), everything else
        // equal: far above the thresholds, and never a duplicate.
        let names = ["Alice", "Bob", "Chen", "Dana", "Emeka"];
        let days = ["Monday", "Tuesday", "Friday", "Sunday"];
        let mut next = crate::seeded::picker(0x2545_f491_4f6c_dd1d);
        let opts = DedupOptions::default();
        for _ in 0..500 {
            let (name, day, n) = (names[next(5)], days[next(4)], next(50));
            let fact = |name: &str, day: &str, n: usize, neg: bool| {
                let verb = if neg { "does not meet" } else { "meets" };
                format!("The user {verb} {name} every {day} at {n}:30 in room {}", n + 100)
            };
            let old = fact(name, day, n, false);
            let changed = match next(4) {
                0 => fact(name, day, n + 1, false),
                1 => fact(name, days[(days.iter().position(|d| *d == day).unwrap() + 1) % 4], n, false),
                2 => fact(names[(names.iter().position(|m| *m == name).unwrap() + 1) % 5], day, n, false),
                _ => fact(name, day, n, true),
            };
            assert!(
                !matches!(relation(&changed, &old, &opts), Relation::Duplicate(_)),
                "{changed:?} vs {old:?}"
            );
            // The same fact, differently cased and punctuated, stays a duplicate.
            let same = format!("{}.", old.to_uppercase());
            assert!(matches!(relation(&same, &old, &opts), Relation::Duplicate(_)), "{same:?}");
        }
    }
}
