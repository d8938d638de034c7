//! An incremental inverted index scored by Okapi BM25.
//!
//! Documents may carry a second, weaker field (`context`: for a
//! conversation turn, its neighbours), counted into term frequency and
//! length at a weight, BM25F-style. Removal marks a document dead and fixes
//! the statistics at once; postings are compacted when dead ones pile up.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::analyzer::{ascii_term, each_token, Token};
use super::concepts::{concept_of, is_concept};

use serde::{Deserialize, Serialize};

/// What the concept of a word weighs in its document, against the word.
const CONCEPT_WEIGHT: f32 = 0.5;

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "IndexOptions"))]
pub struct Bm25Params {
    /// Default 1.2.
    pub k1: f32,
    /// Default 0.75.
    pub b: f32,
    /// Weight of the context field relative to the text. Default 0.5.
    pub context_weight: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.2, b: 0.75, context_weight: 0.5 }
    }
}

impl Bm25Params {
    /// Parameters BM25 is defined for: `k1` >= 0, `b` in [0, 1], a context
    /// weight >= 0.
    pub fn validate(&self) -> crate::error::Result<()> {
        if self.k1.is_finite()
            && self.k1 >= 0.0
            && (0.0..=1.0).contains(&self.b)
            && self.context_weight >= 0.0
        {
            Ok(())
        } else {
            Err(crate::error::Error::invalid("k1 must be >= 0, b in [0, 1], contextWeight >= 0"))
        }
    }
}

/// A document's lexical match for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub doc: u32,
    pub bm25: f32,
    /// The IDF of the query terms it contains (context terms at their
    /// weight): over [`Index::query_weight`], the share of the query it
    /// matches, whatever its length.
    pub matched_idf: f32,
}

#[derive(Debug, Clone, Copy)]
struct Doc {
    len: f32,
    alive: bool,
}

#[derive(Debug, Default)]
pub struct Index {
    term_ids: HashMap<String, u32>,
    /// Term ids by lowercase ASCII word (`None`: a stop word): a word seen
    /// before is indexed with one lookup, no stemming and no term string.
    /// Words of up to 8 letters, most of them, are keyed by their bytes
    /// as one number: no string to hash or compare.
    short_words: HashMap<u64, Option<u32>>,
    words: HashMap<Box<str>, Option<u32>>,
    /// Per term: `(doc, weighted tf)`, in insertion order.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per term: live documents containing it.
    df: Vec<u32>,
    docs: Vec<Doc>,
    live: u32,
    total_len: f64,
    dead_postings: usize,
    /// Per doc: its term ids, for removal and for MMR's similarity.
    doc_terms: Vec<Vec<u32>>,
    /// Per term: the id of the concept term it stands for, or `u32::MAX`.
    concept: Vec<u32>,
    /// Per term: whether it is a concept's.
    concept_ids: Vec<bool>,
}

/// A word of 1 to 8 ASCII letters as one number (a letter is never 0, so
/// no two words share one).
fn packed(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    (bytes.len() <= 8).then(|| bytes.iter().rev().fold(0u64, |n, &b| n << 8 | b as u64))
}

impl Index {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, given a new one if it is new.
    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(term) {
            return id;
        }
        let id = self.term_ids.len() as u32;
        self.term_ids.insert(term.to_string(), id);
        self.postings.push(Vec::new());
        self.df.push(0);
        self.concept.push(u32::MAX);
        self.concept_ids.push(is_concept(term));
        if let Some(c) = concept_of(term) {
            self.concept[id as usize] = self.term_id(c);
        }
        id
    }

    /// The term ids of `text` in order (repeats kept), new terms given ids:
    /// what [`Index::add`] takes. Its terms are [`analyze`]'s.
    pub fn intern(&mut self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        each_token(text, &mut |token| match token {
            Token::AsciiWord(w) => {
                let short = packed(w);
                let known = match short {
                    Some(k) => self.short_words.get(&k),
                    None => self.words.get(w),
                };
                let id = match known {
                    Some(&id) => id,
                    None => {
                        let id = ascii_term(w).map(|t| self.term_id(&t));
                        match short {
                            Some(k) => self.short_words.insert(k, id),
                            None => self.words.insert(w.into(), id),
                        };
                        id
                    }
                };
                ids.extend(id);
            }
            Token::Term(t) => ids.push(self.term_id(t)),
        });
        ids
    }

    /// Whether term `id` is a concept's (see [`is_concept`]).
    fn is_concept_id(&self, id: u32) -> bool {
        self.concept_ids.get(id as usize).copied().unwrap_or(false)
    }

    /// Adds a document of interned terms; returns its number. `context`
    /// terms count at `context_weight`.
    pub fn add(&mut self, text_terms: &[u32], context_terms: &[u32], context_weight: f32) -> u32 {
        let doc = self.docs.len() as u32;
        // (term, weight) pairs, summed per term after a sort: documents are
        // short, so this beats a map and allocates once.
        let mut tf: Vec<(u32, f32)> = Vec::with_capacity(text_terms.len() + context_terms.len());
        for (terms, weight) in [(text_terms, 1.0f32), (context_terms, context_weight)] {
            for &t in terms {
                tf.push((t, weight));
                // The concept a word stands for is one more word of its
                // field, and so is the broader concept of a narrow one.
                let mut c = self.concept[t as usize];
                while c != u32::MAX {
                    tf.push((c, weight * CONCEPT_WEIGHT));
                    c = self.concept[c as usize];
                }
            }
        }
        // A document's length is its words': the concepts they stand for
        // are not more text, and would make a document of everyday words
        // longer (weaker) than one of the same length in other words.
        let len = tf.iter().filter(|&&(t, _)| !self.is_concept_id(t)).map(|&(_, w)| w).sum::<f32>();
        tf.sort_unstable_by_key(|&(id, _)| id);
        let mut ids: Vec<u32> = Vec::with_capacity(tf.len());
        let mut i = 0;
        while i < tf.len() {
            let id = tf[i].0;
            let mut weight = 0.0;
            while i < tf.len() && tf[i].0 == id {
                weight += tf[i].1;
                i += 1;
            }
            self.postings[id as usize].push((doc, weight));
            self.df[id as usize] += 1;
            ids.push(id);
        }
        self.docs.push(Doc { len, alive: true });
        self.doc_terms.push(ids);
        self.live += 1;
        self.total_len += len as f64;
        doc
    }

    pub fn remove(&mut self, doc: u32) {
        let Some(d) = self.docs.get_mut(doc as usize) else { return };
        if !d.alive {
            return;
        }
        d.alive = false;
        self.live -= 1;
        self.total_len -= d.len as f64;
        for &id in &self.doc_terms[doc as usize] {
            self.df[id as usize] -= 1;
            self.dead_postings += 1;
        }
        if self.dead_postings > 1024
            && self.dead_postings * 2 > self.postings.iter().map(Vec::len).sum::<usize>()
        {
            let docs = &self.docs;
            for p in &mut self.postings {
                p.retain(|(d, _)| docs[*d as usize].alive);
            }
            self.dead_postings = 0;
        }
    }

    pub fn is_alive(&self, doc: u32) -> bool {
        self.docs.get(doc as usize).is_some_and(|d| d.alive)
    }

    pub fn live_docs(&self) -> u32 {
        self.live
    }

    /// The document's distinct term ids (sorted).
    pub fn terms_of(&self, doc: u32) -> &[u32] {
        &self.doc_terms[doc as usize]
    }

    /// `idf = ln(1 + (N - n + 0.5) / (n + 0.5))`.
    fn idf(&self, df: u32) -> f32 {
        let n = self.live as f32;
        (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
    }

    /// BM25 scores of the live documents matching any of `terms`, unsorted.
    /// Scores accumulate in a dense array indexed by document (no hashing
    /// on the hot path); only touched entries are read back.
    /// The IDF of the query's distinct terms, summed (a term no document
    /// has counts at its highest, being the most telling): what a document
    /// containing every term would match. Concepts are not counted: they
    /// stand for words that are, and a match on one is credited on top.
    pub fn query_weight(&self, terms: &[String]) -> f32 {
        let mut seen = HashSet::default();
        terms
            .iter()
            .filter(|t| !is_concept(t) && seen.insert(t.as_str()))
            .map(|t| self.idf(self.term_ids.get(t).map_or(0, |&id| self.df[id as usize])))
            .sum()
    }

    /// The IDF of the query's distinct terms that some document for which
    /// `counts` holds contains (in its text or, at its weight, context):
    /// over [`Index::query_weight`], the share of the query the documents
    /// answer together.
    pub fn matched_weight(&self, terms: &[String], counts: impl Fn(u32) -> bool) -> f32 {
        let ids = self.query_ids(terms);
        let best = |id: u32| {
            self.postings[id as usize]
                .iter()
                .filter(|&&(d, _)| self.docs[d as usize].alive && counts(d))
                .map(|&(_, tf)| tf.min(1.0))
                .fold(0.0f32, f32::max)
        };
        let mut sum = 0.0;
        for &id in &ids {
            // A concept counts where it stands in for its words: none matched.
            if !self.stood_for(id, &ids).iter().any(|&w| best(w) > 0.0) {
                sum += self.idf(self.df[id as usize]) * best(id);
            }
        }
        sum
    }

    /// The ids of the query's distinct terms the index knows.
    fn query_ids(&self, terms: &[String]) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::with_capacity(terms.len());
        for t in terms {
            if let Some(&id) = self.term_ids.get(t) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids
    }

    /// The query's words that query term `id` stands for, directly or
    /// through a narrower concept: none for a word. A concept counts only
    /// where it stands in for its words, none of them held (or known to
    /// the index at all); a word always counts.
    fn stood_for(&self, id: u32, query: &[u32]) -> Vec<u32> {
        let stands_for = |w: u32| {
            let mut c = self.concept[w as usize];
            while c != u32::MAX && c != id {
                c = self.concept[c as usize];
            }
            c == id
        };
        query.iter().copied().filter(|&w| !self.concept_ids[w as usize] && stands_for(w)).collect()
    }

    pub fn score(&self, terms: &[String], params: &Bm25Params) -> Vec<Scored> {
        if self.live == 0 {
            return Vec::new();
        }
        let avgdl = (self.total_len / self.live as f64) as f32;
        let mut acc = vec![0f32; self.docs.len()];
        let mut matched = vec![0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        let ids = self.query_ids(terms);
        for &id in &ids {
            let idf = self.idf(self.df[id as usize]);
            let words = self.stood_for(id, &ids);
            for &(doc, tf) in &self.postings[id as usize] {
                let d = self.docs[doc as usize];
                if !d.alive {
                    continue;
                }
                // A concept counts where it stands in for the query's words
                // it stands for, none held: where one is, the word counted
                // already (twice would outweigh the query's other words).
                let holds = |w: &u32| self.doc_terms[doc as usize].binary_search(w).is_ok();
                if words.iter().any(holds) {
                    continue;
                }
                let norm = params.k1 * (1.0 - params.b + params.b * d.len / avgdl.max(f32::EPSILON));
                let slot = &mut acc[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += idf * tf * (params.k1 + 1.0) / (tf + norm);
                // A term of the text counts whole, one of the context at its weight.
                matched[doc as usize] += idf * tf.min(1.0);
            }
        }
        touched
            .into_iter()
            .map(|d| Scored { doc: d, bm25: acc[d as usize], matched_idf: matched[d as usize] })
            .filter(|s| s.bm25 > 0.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::concepts;

    fn terms(s: &str) -> Vec<String> {
        crate::retrieval::analyzer::analyze_query(s)
    }

    /// Adds `text` (with `context` at 0.3) to `idx`.
    fn add(idx: &mut Index, text: &str, context: &str) -> u32 {
        let (text, context) = (idx.intern(text), idx.intern(context));
        idx.add(&text, &context, 0.3)
    }

    #[test]
    fn bm25_matches_hand_computed_values() {
        let mut idx = Index::new();
        add(&mut idx, "owl sat mat", "");
        add(&mut idx, "fox sat", "");
        add(&mut idx, "owl owl fox moth", "");
        let p = Bm25Params::default();
        let mut s: Vec<(u32, f32)> = idx.score(&terms("owl"), &p).iter().map(|s| (s.doc, s.bm25)).collect();
        s.sort_by_key(|x| x.0);
        // N = 3, n(owl) = 2: idf = ln(1 + 1.5 / 2.5) = ln 1.6; avgdl = 3.
        let idf = 1.6f32.ln();
        let doc0 = idf * 1.0 * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 3.0 / 3.0));
        let doc2 = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.25 + 0.75 * 4.0 / 3.0));
        assert_eq!(s.len(), 2);
        assert!((s[0].1 - doc0).abs() < 1e-5, "{} vs {doc0}", s[0].1);
        assert!((s[1].1 - doc2).abs() < 1e-5, "{} vs {doc2}", s[1].1);
    }

    #[test]
    fn interned_terms_are_the_analyzers_whether_a_word_was_seen_or_not() {
        let mut idx = Index::new();
        for text in [
            "The Cats were running, quickly!",
            "cats RUN the",
            "我喜欢用 Rust 写代码",
            "Café 42 don't",
            "running",
        ] {
            let ids = idx.intern(text);
            let names: Vec<&str> = ids
                .iter()
                .map(|&id| idx.term_ids.iter().find(|(_, &i)| i == id).map(|(t, _)| t.as_str()).unwrap())
                .collect();
            assert_eq!(names, crate::retrieval::analyzer::analyze(text), "{text}");
        }
    }

    #[test]
    fn removal_updates_statistics() {
        let mut idx = Index::new();
        let a = add(&mut idx, "alpha beta", "");
        add(&mut idx, "beta gamma", "");
        idx.remove(a);
        assert_eq!(idx.live_docs(), 1);
        assert!(idx.score(&terms("alpha"), &Bm25Params::default()).is_empty());
        let s = idx.score(&terms("beta"), &Bm25Params::default());
        // One live doc containing beta: idf = ln(1 + 0.5 / 1.5).
        assert_eq!(s.len(), 1);
        assert!((s[0].bm25 - (1.0f32 + 0.5 / 1.5).ln()).abs() < 1e-5);
        assert_eq!(s[0].matched_idf, idx.query_weight(&terms("beta")));
    }

    #[test]
    fn context_terms_weigh_less_than_text() {
        let mut idx = Index::new();
        let text = add(&mut idx, "paris trip", "");
        let ctx = add(&mut idx, "lovely photos", "paris trip");
        let scored = idx.score(&terms("paris"), &Bm25Params::default());
        let s: HashMap<u32, Scored> = scored.into_iter().map(|s| (s.doc, s)).collect();
        assert!(s[&text].bm25 > s[&ctx].bm25 && s[&ctx].bm25 > 0.0);
        assert!((s[&ctx].matched_idf - 0.3 * s[&text].matched_idf).abs() < 1e-6);
    }

    #[test]
    fn a_narrow_concept_ranks_its_words_above_its_broader_ones() {
        let mut idx = Index::new();
        let wife = add(&mut idx, "My wife Mei teaches piano", "");
        let sister = add(&mut idx, "My sister Ana teaches yoga", "");
        add(&mut idx, "The kettle broke again", "");
        let scored = idx.score(&concepts::expand(terms("Who is my spouse?")), &Bm25Params::default());
        let s: HashMap<u32, f32> = scored.into_iter().map(|s| (s.doc, s.bm25)).collect();
        // Both are family; only the wife is a spouse.
        assert!(s[&wife] > s[&sister] && s[&sister] > 0.0, "{s:?}");
    }

    #[test]
    fn a_concept_counts_only_where_its_word_is_not_held() {
        let mut idx = Index::new();
        let dog = add(&mut idx, "the dog barked at the dance", "");
        let puppy = add(&mut idx, "the puppy barked at the dance", "");
        add(&mut idx, "studio lights", "");
        let q = concepts::expand(terms("dog dance"));
        let s: HashMap<u32, Scored> =
            idx.score(&q, &Bm25Params::default()).into_iter().map(|s| (s.doc, s)).collect();
        // The word's own match counts once, not again through its concept
        // (which would outweigh "dance"), and beats the concept's stand-in.
        let alone = idx.score(&terms("dog dance"), &Bm25Params::default());
        let alone: HashMap<u32, f32> = alone.into_iter().map(|s| (s.doc, s.bm25)).collect();
        assert!((s[&dog].bm25 - alone[&dog]).abs() < 1e-6);
        assert!(s[&dog].bm25 > s[&puppy].bm25 && s[&puppy].bm25 > alone[&puppy]);
    }

    #[test]
    fn concepts_do_not_lengthen_a_document() {
        let mut idx = Index::new();
        let a = add(&mut idx, "dog owl", "");
        let b = add(&mut idx, "moth owl", "");
        // "dog" brings two concepts (dog, pet); both documents are two words long.
        assert_eq!(idx.docs[a as usize].len, idx.docs[b as usize].len);
        let s: HashMap<u32, f32> =
            idx.score(&terms("owl"), &Bm25Params::default()).into_iter().map(|s| (s.doc, s.bm25)).collect();
        assert_eq!(s[&a], s[&b]);
    }
}
