//! Local near-duplicate detection for memories, in the enterprise design's
//! order: exact (after normalization), containment, character Jaccard
//! (>= 0.7), and, for short texts, Levenshtein similarity (>= 0.8).
//!
//! "Character Jaccard" is computed over character bigrams, not single
//! characters: any two English sentences of some length share most of the
//! alphabet, so a unigram Jaccard would call unrelated facts duplicates,
//! while bigrams keep the measure meaningful for English and CJK alike.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Thresholds, with the design's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DedupOptions {
    pub jaccard: f64,
    pub levenshtein: f64,
    /// Texts up to this many characters (both) are compared by Levenshtein.
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

fn bigrams(text: &str) -> HashSet<(char, char)> {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    if chars.len() == 1 {
        return HashSet::from([(chars[0], '\0')]);
    }
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Jaccard similarity of the two texts' character bigram sets.
pub fn jaccard(a: &str, b: &str) -> f64 {
    let (x, y) = (bigrams(a), bigrams(b));
    if x.is_empty() && y.is_empty() {
        return 1.0;
    }
    let inter = x.intersection(&y).count();
    inter as f64 / (x.len() + y.len() - inter) as f64
}

/// The first test that matches, in the design's order, or `None`.
pub fn similarity(new: &str, existing: &str, opts: &DedupOptions) -> Option<Similarity> {
    let (n, e) = (normalize(new), normalize(existing));
    if n.is_empty() || e.is_empty() {
        return None;
    }
    if n == e {
        return Some(Similarity::Exact);
    }
    if e.contains(&n) {
        return Some(Similarity::ContainedInExisting);
    }
    if n.contains(&e) {
        return Some(Similarity::ContainsExisting);
    }
    let j = jaccard(&n, &e);
    if j >= opts.jaccard {
        return Some(Similarity::Jaccard { score: j });
    }
    if n.chars().count() <= opts.short_text_chars && e.chars().count() <= opts.short_text_chars {
        let l = strsim::normalized_levenshtein(&n, &e);
        if l >= opts.levenshtein {
            return Some(Similarity::Levenshtein { score: l });
        }
    }
    None
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
    fn thresholds_are_configurable() {
        let strict = DedupOptions { jaccard: 0.99, levenshtein: 0.99, short_text_chars: 100 };
        assert_eq!(similarity("likes tea", "like tea", &strict), None);
    }
}
