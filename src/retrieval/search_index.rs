//! The search index: documents with their BM25 postings and unit vectors,
//! and the search over them (candidates, fusion, the scoring terms, MMR,
//! per-scope caps). A search reads the index and nothing else.

use rustc_hash::FxHashMap as HashMap;
use serde::Deserialize;

use crate::entry::Scope;
use crate::error::{Error, Result};

use super::analyzer::analyze_query;
use super::concepts;
use super::fusion::{fuse, Candidate};
use super::index::{Bm25Params, Index};
use super::options::{Decay, SearchOptions};
use super::vector::{dot, normalized};
use super::{cut_text, Explain, Hit, Origin};

/// A past turn that asks weighs this much: it holds the asker's words, and
/// its answer, the turn after it, what was asked for.
const ASKING_TURN: f64 = 0.8;

/// A document to index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    pub id: String,
    pub text: String,
    /// Neighbouring text that helps find this one, at a lower weight.
    pub context: Option<String>,
    pub scope: Scope,
    pub timestamp: i64,
    pub importance: f32,
    pub long_term: bool,
    pub embedding: Option<Vec<f32>>,
    /// What the document is, when its owner says: its hits carry it.
    pub origin: Option<Origin>,
    /// A fact's provenance (the messages it was drawn from): its hits carry it.
    pub sources: Vec<String>,
}

/// A document as a host hands it to a [`SearchIndex`] (`SearchIndex.add`
/// in JS): what it leaves out takes its default, and
/// [`DocInput::into_doc`] checks the rest. Its vector is the binding's to
/// read (a `Float32Array` is no JSON).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "IndexDocument", optional_fields))]
pub struct DocInput {
    pub id: String,
    pub text: String,
    /// Neighbouring text that helps find this document, at a lower weight.
    #[serde(default)]
    pub context: Option<String>,
    /// Default "user".
    #[serde(default = "user")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    pub scope: Scope,
    /// ms since the epoch; default now.
    #[serde(default)]
    pub timestamp: Option<f64>,
    /// 0 to 1; default 0.5.
    #[serde(default = "half")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    pub importance: f32,
    /// Long-term memories get `longTermWeight`; default true.
    #[serde(default = "yes")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    pub long_term: bool,
}

fn user() -> Scope {
    Scope::User
}

fn half() -> f32 {
    0.5
}

fn yes() -> bool {
    true
}

impl DocInput {
    /// The document to index, at `now_ms` unless it has a time. A time must
    /// be a finite number and an importance lie in [0, 1].
    pub fn into_doc(self, embedding: Option<Vec<f32>>, now_ms: i64) -> Result<IndexDoc> {
        let timestamp = self.timestamp.unwrap_or(now_ms as f64);
        if !timestamp.is_finite() || !(0.0..=1.0).contains(&self.importance) {
            return Err(Error::invalid("timestamp must be a finite number, importance a number from 0 to 1"));
        }
        let DocInput { id, text, context, scope, importance, long_term, .. } = self;
        let (timestamp, origin, sources) = (timestamp as i64, None, Vec::new());
        Ok(IndexDoc {
            id,
            text,
            context,
            scope,
            timestamp,
            importance,
            long_term,
            embedding,
            origin,
            sources,
        })
    }
}

struct Meta {
    doc: IndexDoc,
    vector_row: Option<usize>,
}

#[derive(Default)]
pub struct SearchIndex {
    index: Index,
    params: Bm25Params,
    docs: Vec<Option<Meta>>,
    by_id: HashMap<String, u32>,
    /// Per vector row, the document it belongs to (increasing: rows and
    /// documents are appended together), so a hybrid search streams the
    /// vectors in memory order.
    row_doc: Vec<u32>,
    /// Unit vectors, contiguous, `dim` floats each.
    vectors: Vec<f32>,
    dim: usize,
    /// Set once a vector was given to a document after later ones had
    /// theirs: a hybrid search then sorts its candidates back.
    rows_out_of_doc_order: bool,
}

impl SearchIndex {
    // Not inlined: an empty index is many fields, built in one place.
    #[inline(never)]
    pub fn new(params: Bm25Params) -> Self {
        SearchIndex { params, ..Default::default() }
    }

    /// An index on parameters a host gave, refused unless BM25 is defined
    /// for them ([`Bm25Params::validate`]).
    pub fn checked(params: Bm25Params) -> Result<Self> {
        params.validate().map(|()| SearchIndex::new(params))
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The ids of the indexed documents, in no order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(String::as_str)
    }

    /// Adds (or replaces) a document.
    pub fn add(&mut self, doc: IndexDoc) -> Result<()> {
        let terms = self.index.intern(&doc.text);
        self.add_interned(doc, &terms)
    }

    /// The terms of `text` as this index numbers them, for
    /// [`SearchIndex::add_interned`]: a text can be analyzed apart from its
    /// indexing (while its store is still being read).
    pub fn intern(&mut self, text: &str) -> Vec<u32> {
        self.index.intern(text)
    }

    /// [`SearchIndex::add`] of a document whose text this index interned.
    pub fn add_interned(&mut self, doc: IndexDoc, terms: &[u32]) -> Result<()> {
        let unit = doc.embedding.as_deref().map(|v| self.unit(v)).transpose()?;
        self.remove(&doc.id);
        let context = doc.context.as_deref().map(|c| self.index.intern(c)).unwrap_or_default();
        let n = self.index.add(terms, &context, self.params.context_weight);
        self.by_id.insert(doc.id.clone(), n);
        // The normalized copy in `vectors` is what search reads; keeping the
        // raw one too would double the memory of a hybrid index.
        let doc = IndexDoc { embedding: None, ..doc };
        let vector_row = unit.map(|unit| self.push_row(n, &unit));
        self.docs.push(Some(Meta { doc, vector_row }));
        Ok(())
    }

    /// A unit copy of an embedding, checked against the index's dimension.
    fn unit(&self, v: &[f32]) -> Result<Vec<f32>> {
        if self.dim != 0 && v.len() != self.dim {
            return Err(Error::invalid(format!(
                "embedding has {} dimensions; this index holds {}-dimensional vectors",
                v.len(),
                self.dim
            )));
        }
        normalized(v).ok_or_else(|| Error::invalid("embedding must be finite and non-zero"))
    }

    fn push_row(&mut self, n: u32, unit: &[f32]) -> usize {
        self.dim = unit.len();
        if self.row_doc.last().is_some_and(|&last| last > n) {
            self.rows_out_of_doc_order = true;
        }
        self.row_doc.push(n);
        self.vectors.extend_from_slice(unit);
        self.row_doc.len() - 1
    }

    /// Gives an indexed document its embedding in place (a vector computed
    /// after the text was indexed); false when no document has that id.
    pub fn set_embedding(&mut self, id: &str, embedding: &[f32]) -> Result<bool> {
        let Some(&n) = self.by_id.get(id) else { return Ok(false) };
        let unit = self.unit(embedding)?;
        let row = match self.docs[n as usize].as_ref().and_then(|m| m.vector_row) {
            Some(row) => {
                self.vectors[row * self.dim..(row + 1) * self.dim].copy_from_slice(&unit);
                row
            }
            None => self.push_row(n, &unit),
        };
        if let Some(meta) = self.docs[n as usize].as_mut() {
            meta.vector_row = Some(row);
        }
        Ok(true)
    }

    /// The documents without an embedding, as `(id, text)`.
    pub fn without_embedding(&self) -> impl Iterator<Item = (&str, &str)> {
        self.docs
            .iter()
            .flatten()
            .filter(|m| m.vector_row.is_none())
            .map(|m| (m.doc.id.as_str(), m.doc.text.as_str()))
    }

    /// Documents with an embedding.
    pub fn embedded(&self) -> usize {
        self.docs.iter().flatten().filter(|m| m.vector_row.is_some()).count()
    }

    /// The text a document was indexed with.
    pub fn text_of(&self, id: &str) -> Option<&str> {
        let n = *self.by_id.get(id)?;
        self.docs[n as usize].as_ref().map(|m| m.doc.text.as_str())
    }

    /// The provenance a document was indexed with.
    pub fn sources_of(&self, id: &str) -> Option<&[String]> {
        let n = *self.by_id.get(id)?;
        self.docs[n as usize].as_ref().map(|m| m.doc.sources.as_slice())
    }

    pub fn remove(&mut self, id: &str) -> bool {
        match self.by_id.remove(id) {
            Some(n) => {
                self.index.remove(n);
                self.docs[n as usize] = None;
                true
            }
            None => false,
        }
    }

    pub fn search(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        now: i64,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        opts.validate()?;
        let now = opts.now.unwrap_or(now);
        let qv = match query_vector {
            Some(v) if self.dim != 0 => {
                if v.len() != self.dim {
                    return Err(Error::invalid(format!(
                        "query vector has {} dimensions, expected {}",
                        v.len(),
                        self.dim
                    )));
                }
                Some(
                    normalized(v)
                        .ok_or_else(|| Error::invalid("query vector must be finite and non-zero"))?,
                )
            }
            _ => None,
        };

        // Candidates: lexical matches, and with vectors every embedded doc.
        let terms = concepts::expand(analyze_query(query));
        let lexical = self.index.score(&terms, &self.params);
        let query_weight = self.index.query_weight(&terms) as f64;
        let floored = opts.min_coverage > 0.0 || opts.min_cosine > 0.0;
        let in_scope = |m: &Meta| opts.scopes.as_ref().is_none_or(|allowed| allowed.contains(&m.doc.scope));
        let mut cands: Vec<Candidate> = Vec::new();
        // The share of the query each match covers (only the returned head
        // reads it: a map of the matches, not an array of every document).
        let coverage: HashMap<u32, f64> = lexical
            .iter()
            .map(|s| {
                let share =
                    if query_weight > 0.0 { (s.matched_idf as f64 / query_weight).min(1.0) } else { 0.0 };
                (s.doc, share)
            })
            .collect();
        match &qv {
            None => {
                for s in lexical {
                    if self.docs[s.doc as usize].as_ref().is_some_and(in_scope) {
                        cands.push((s.doc, s.bm25 as f64, None));
                    }
                }
            }
            Some(q) => {
                // Lexical scores by document number (BM25 of a match is > 0).
                let mut lex = vec![0f32; self.docs.len()];
                for s in lexical {
                    lex[s.doc as usize] = s.bm25;
                }
                let d = self.dim;
                for (row, &n) in self.row_doc.iter().enumerate() {
                    let Some(m) = self.docs[n as usize].as_ref() else { continue };
                    if !in_scope(m) || m.vector_row != Some(row) {
                        continue;
                    }
                    let vector = dot(q, &self.vectors[row * d..(row + 1) * d]) as f64;
                    let bm25 = std::mem::replace(&mut lex[n as usize], 0.0);
                    cands.push((n, bm25 as f64, Some(vector)));
                }
                // Lexical matches without a vector; then back to document
                // order, which ties are broken by.
                let before = cands.len();
                for (n, &bm25) in lex.iter().enumerate() {
                    if bm25 > 0.0 && self.docs[n].as_ref().is_some_and(in_scope) {
                        cands.push((n as u32, bm25 as f64, None));
                    }
                }
                if cands.len() > before || self.rows_out_of_doc_order {
                    cands.sort_unstable_by_key(|c| c.0);
                }
            }
        }
        // The absolute floor asks whether the candidates answer the query
        // at all: together, a share of its terms (a query of two topics may
        // have each answered by another memory), or one of them by meaning.
        let answered = || {
            let lexical = query_weight > 0.0
                && self.index.matched_weight(&terms, |d| self.docs[d as usize].as_ref().is_some_and(in_scope))
                    as f64
                    / query_weight
                    >= opts.min_coverage;
            lexical || cands.iter().any(|c| c.2.is_some_and(|v| v >= opts.min_cosine))
        };
        if cands.is_empty() || (floored && !answered()) {
            return Ok(Vec::new());
        }

        let relevance = fuse(&cands, opts);
        let weights = |n: u32| {
            let m = &self.docs[n as usize].as_ref().expect("candidate is live").doc;
            let age_days = (now - m.timestamp).max(0) as f64 / 86_400_000.0;
            let decay = match opts.decay {
                Decay::None => 1.0,
                Decay::Linear24h => 1.0 - 0.5 * (age_days * 24.0).min(24.0) / 24.0,
                Decay::HalfLife => 0.5f64.powf(age_days / opts.half_life_days).max(opts.decay_floor),
            };
            let asks =
                matches!(m.origin, Some(Origin::Turn { .. })) && m.text.trim_end().ends_with(['?', '？']);
            let source_weight = if m.long_term {
                opts.long_term_weight
            } else if asks {
                ASKING_TURN
            } else {
                1.0
            };
            let importance_weight = 1.0 + opts.importance_weight * (m.importance as f64 - 0.5);
            (decay, source_weight, importance_weight)
        };
        // Scores first, lean: with vectors every embedded memory is a
        // candidate, and only the head that can be returned is explained.
        let mut scored: Vec<(u32, f64, usize)> = Vec::with_capacity(cands.len());
        for (i, (&(n, _, _), &rel)) in cands.iter().zip(&relevance).enumerate() {
            if rel < opts.min_score {
                continue;
            }

            let (decay, source_weight, importance_weight) = weights(n);
            let score = rel * decay * source_weight * importance_weight;
            if score > 0.0 {
                scored.push((n, score, i));
            }
        }
        let order = |a: &(u32, f64, usize), b: &(u32, f64, usize)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let head =
            if opts.per_scope_top_k.is_some() { usize::MAX } else { (opts.top_k as usize * 4).max(50) };
        if scored.len() > head {
            scored.select_nth_unstable_by(head, order);
            scored.truncate(head);
        }
        let mut hits: Vec<(u32, f64, Explain)> = scored
            .into_iter()
            .map(|(n, score, i)| {
                let (_, bm25, vector) = cands[i];
                let (decay, source_weight, importance_weight) = weights(n);
                let explain = Explain {
                    bm25,
                    coverage: coverage.get(&n).copied().unwrap_or(0.0),
                    vector,
                    relevance: relevance[i],
                    decay,
                    source_weight,
                    importance_weight,
                    mmr_penalty: 0.0,
                };
                (n, score, explain)
            })
            .collect();
        // Best first; ties keep insertion (chronological) order.
        crate::order::sort_by(&mut hits, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(best) = hits.first().map(|h| h.1) {
            hits.retain(|h| h.1 >= opts.relativity * best);
        }
        if let Some(lambda) = opts.mmr_lambda {
            hits = self.mmr(hits, lambda, (opts.top_k as usize * 4).max(20));
        }

        let mut per_scope: HashMap<String, u32> = HashMap::default();
        let mut out = Vec::new();
        for (n, score, explain) in hits {
            if out.len() >= opts.top_k as usize {
                break;
            }
            let m = &self.docs[n as usize].as_ref().expect("hit is live").doc;
            if let Some(cap) = opts.per_scope_top_k {
                let c = per_scope.entry(m.scope.to_string()).or_default();
                if *c >= cap {
                    continue;
                }
                *c += 1;
            }
            let (text, cut) = cut_text(&m.text, opts.truncate_chars);
            out.push(Hit {
                id: m.id.clone(),
                score,
                text,
                scope: m.scope.clone(),
                timestamp: m.timestamp,
                long_term: m.long_term,
                explain,
                origin: m.origin.clone(),
                sources: m.sources.clone(),
                cut,
            });
        }
        Ok(out)
    }

    /// Maximal marginal relevance over the best `pool` hits: each pick
    /// maximizes `lambda * score - (1 - lambda) * max similarity to the picks`
    /// (cosine where both have vectors, else term-set Jaccard).
    fn mmr(&self, hits: Vec<(u32, f64, Explain)>, lambda: f64, pool: usize) -> Vec<(u32, f64, Explain)> {
        let (head, tail) = hits.split_at(hits.len().min(pool));
        let mut left: Vec<(u32, f64, Explain)> = head.to_vec();
        let mut picked: Vec<(u32, f64, Explain)> = Vec::with_capacity(left.len());
        while !left.is_empty() {
            let (best, value, penalty) = left
                .iter()
                .enumerate()
                .map(|(i, (n, s, _))| {
                    let sim = picked.iter().map(|(p, _, _)| self.similarity(*n, *p)).fold(0.0, f64::max);
                    (i, lambda * s - (1.0 - lambda) * sim, (1.0 - lambda) * sim)
                })
                .fold((0, f64::MIN, 0.0), |acc, x| if x.1 > acc.1 { x } else { acc });
            let (n, _, mut explain) = left.remove(best);
            explain.mmr_penalty = penalty;
            picked.push((n, value, explain));
        }
        picked.extend_from_slice(tail);
        picked
    }

    fn similarity(&self, a: u32, b: u32) -> f64 {
        let (ma, mb) = (self.docs[a as usize].as_ref(), self.docs[b as usize].as_ref());
        if let (Some(ra), Some(rb)) = (ma.and_then(|m| m.vector_row), mb.and_then(|m| m.vector_row)) {
            let d = self.dim;
            return dot(&self.vectors[ra * d..(ra + 1) * d], &self.vectors[rb * d..(rb + 1) * d]) as f64;
        }
        let (ta, tb) = (self.index.terms_of(a), self.index.terms_of(b));
        let inter = ta.iter().filter(|t| tb.binary_search(t).is_ok()).count();
        let union = ta.len() + tb.len() - inter;
        if union == 0 {
            0.0
        } else {
            inter as f64 / union as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::Fusion;

    const DAY: i64 = 86_400_000;

    fn doc(id: &str, text: &str, ts: i64) -> IndexDoc {
        IndexDoc {
            id: id.into(),
            text: text.into(),
            context: None,
            scope: Scope::User,
            timestamp: ts,
            importance: 0.5,
            long_term: true,
            embedding: None,
            origin: None,
            sources: Vec::new(),
        }
    }

    fn ids(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.id.as_str()).collect()
    }

    #[test]
    fn a_chinese_preference_is_found() {
        let mut r = SearchIndex::new(Bm25Params::default());
        r.add(doc("1", "我喜欢用 Rust 写代码", 0)).unwrap();
        r.add(doc("2", "今天天气很好，我们去公园散步", 0)).unwrap();
        r.add(doc("3", "我的猫叫小白", 0)).unwrap();
        let hits = r.search("我喜欢用什么语言写代码?", None, DAY, &SearchOptions::default()).unwrap();
        assert_eq!(hits[0].id, "1");
        let one_char = r.search("猫", None, DAY, &SearchOptions::default()).unwrap();
        assert_eq!(ids(&one_char), ["3"]);
    }

    #[test]
    fn a_past_turn_that_asks_weighs_less_than_the_one_that_answers() {
        let mut r = SearchIndex::new(Bm25Params::default());
        let turn = |id: &str, text: &str| IndexDoc {
            scope: Scope::Session,
            long_term: false,
            origin: Some(Origin::Turn { session: "s1".into(), role: crate::entry::Role::User }),
            ..doc(id, text, 0)
        };
        r.add(turn("ask", "What thesis topic did you take?")).unwrap();
        r.add(turn("answer", "My thesis topic: heat islands.")).unwrap();
        r.add(turn("other", "The kettle broke again.")).unwrap();
        let hits = r.search("thesis topic", None, DAY, &SearchOptions::default()).unwrap();
        // The shorter asking turn matches the words better; its answer comes first.
        let ask = hits.iter().find(|h| h.id == "ask").unwrap();
        let answer = hits.iter().find(|h| h.id == "answer").unwrap();
        assert!(ask.explain.relevance > answer.explain.relevance, "{hits:?}");
        assert_eq!(ids(&hits)[..2], ["answer", "ask"]);
        assert_eq!((ask.explain.source_weight, answer.explain.source_weight), (ASKING_TURN, 1.0));
        // A fact that ends with a question mark is not a turn: it keeps its weight.
        let mut f = SearchIndex::new(Bm25Params::default());
        f.add(doc("fact", "Why is the sky blue?", 0)).unwrap();
        let hits = f.search("sky blue", None, DAY, &SearchOptions::default()).unwrap();
        assert_eq!(hits[0].explain.source_weight, SearchOptions::default().long_term_weight);
    }

    #[test]
    fn decay_presets() {
        let mut r = SearchIndex::new(Bm25Params::default());
        r.add(doc("old", "rust compiler notes", 0)).unwrap();
        r.add(doc("new", "rust compiler notes", 10 * DAY)).unwrap();
        let now = 10 * DAY;
        let none = r.search("rust compiler", None, now, &SearchOptions::default()).unwrap();
        assert_eq!(ids(&none), ["old", "new"], "no decay: ties keep insertion order");
        let linear = SearchOptions { decay: Decay::Linear24h, ..Default::default() };
        let hits = r.search("rust compiler", None, now, &linear).unwrap();
        assert_eq!(ids(&hits), ["new", "old"]);
        assert!((hits[1].explain.decay - 0.5).abs() < 1e-9);
        let half = SearchOptions {
            decay: Decay::HalfLife,
            half_life_days: 10.0,
            decay_floor: 0.0,
            ..Default::default()
        };
        let hits = r.search("rust compiler", None, now, &half).unwrap();
        assert!((hits[1].explain.decay - 0.5).abs() < 1e-9);
    }

    #[test]
    fn thresholds_weights_and_scopes() {
        let mut r = SearchIndex::new(Bm25Params::default());
        r.add(doc("strong", "hiking hiking boots mountain trail", 0)).unwrap();
        r.add(doc("weak", "bought boots", 0)).unwrap();
        let mut agent = doc("agent", "mountain trail lessons", 0);
        agent.scope = Scope::Agent("guide".into());
        agent.long_term = false;
        r.add(agent).unwrap();
        let all = r.search("hiking boots mountain trail", None, 0, &SearchOptions::default()).unwrap();
        assert_eq!(all[0].id, "strong");
        assert!((all[0].explain.relevance - 1.0).abs() < 1e-9);
        let rel = SearchOptions { relativity: 0.9, ..Default::default() };
        assert_eq!(ids(&r.search("hiking boots mountain trail", None, 0, &rel).unwrap()), ["strong"]);
        let floor = SearchOptions { min_score: 0.99, ..Default::default() };
        assert_eq!(r.search("hiking boots mountain trail", None, 0, &floor).unwrap().len(), 1);
        let scoped = SearchOptions { scopes: Some(vec![Scope::Agent("guide".into())]), ..Default::default() };
        assert_eq!(ids(&r.search("mountain trail", None, 0, &scoped).unwrap()), ["agent"]);
        let per = SearchOptions { per_scope_top_k: Some(1), ..Default::default() };
        assert_eq!(r.search("mountain trail boots", None, 0, &per).unwrap().len(), 2);
        assert!(all.iter().find(|h| h.id == "agent").unwrap().explain.source_weight == 1.0);
    }

    #[test]
    fn mmr_demotes_near_duplicates() {
        let mut r = SearchIndex::new(Bm25Params::default());
        r.add(doc("a", "paris trip museum louvre", 0)).unwrap();
        r.add(doc("b", "paris trip museum louvre again", 0)).unwrap();
        r.add(doc("c", "paris food croissant", 0)).unwrap();
        let plain = r.search("paris trip", None, 0, &SearchOptions::default()).unwrap();
        assert_eq!(ids(&plain)[..2], ["a", "b"]);
        let mmr = SearchOptions { mmr_lambda: Some(0.3), ..Default::default() };
        let hits = r.search("paris trip", None, 0, &mmr).unwrap();
        assert_eq!(ids(&hits), ["a", "c", "b"]);
        assert!(hits[2].explain.mmr_penalty > 0.0);
    }

    #[test]
    fn vectors_given_later_rank_as_vectors_given_at_add() {
        let texts = ["red apples", "green pears", "ripe red cherries", "blue sky"];
        let vec_of = |i: usize| vec![i as f32 + 1.0, 4.0 - i as f32, 0.5];
        let mut at_add = SearchIndex::new(Bm25Params::default());
        let mut later = SearchIndex::new(Bm25Params::default());
        for (i, t) in texts.iter().enumerate() {
            let mut d = doc(&i.to_string(), t, 0);
            later.add(d.clone()).unwrap();
            d.embedding = Some(vec_of(i));
            at_add.add(d).unwrap();
        }
        assert_eq!(later.without_embedding().count(), 4);
        // Newest first, and one given twice: rows out of document order.
        for i in [3, 2, 0, 1, 0] {
            assert!(later.set_embedding(&i.to_string(), &vec_of(i)).unwrap());
        }
        assert!(!later.set_embedding("missing", &vec_of(0)).unwrap());
        assert!(later.set_embedding("1", &[1.0]).is_err(), "dimension checked");
        assert_eq!((later.without_embedding().count(), later.embedded()), (0, 4));
        let q = [1.0f32, 1.0, 1.0];
        let a = at_add.search("red", Some(&q), 0, &SearchOptions::default()).unwrap();
        let b = later.search("red", Some(&q), 0, &SearchOptions::default()).unwrap();
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(
            a.iter().map(|h| h.score).collect::<Vec<_>>(),
            b.iter().map(|h| h.score).collect::<Vec<_>>()
        );
    }

    #[test]
    fn hybrid_fusion_uses_vectors_and_rrf() {
        let mut r = SearchIndex::new(Bm25Params::default());
        let mut a = doc("lex", "quantum chromodynamics", 0);
        a.embedding = Some(vec![1.0, 0.0]);
        let mut b = doc("vec", "strong force between quarks", 0);
        b.embedding = Some(vec![0.0, 1.0]);
        r.add(a).unwrap();
        r.add(b).unwrap();
        let q = [0.0f32, 1.0];
        let lexical_heavy = SearchOptions { alpha: 0.9, ..Default::default() };
        assert_eq!(r.search("quantum chromodynamics", Some(&q), 0, &lexical_heavy).unwrap()[0].id, "lex");
        let vector_heavy = SearchOptions { alpha: 0.1, ..Default::default() };
        let hits = r.search("quantum chromodynamics", Some(&q), 0, &vector_heavy).unwrap();
        assert_eq!(hits[0].id, "vec");
        assert_eq!(hits[0].explain.vector, Some(1.0));
        let rrf = SearchOptions { fusion: Fusion::Rrf, ..Default::default() };
        assert_eq!(r.search("quantum chromodynamics", Some(&q), 0, &rrf).unwrap().len(), 2);
        let mut bad = doc("bad", "x", 0);
        bad.embedding = Some(vec![1.0, 0.0, 0.0]);
        assert!(r.add(bad).is_err());
    }

    #[test]
    fn removal_and_replacement() {
        let mut r = SearchIndex::new(Bm25Params::default());
        r.add(doc("1", "green lamp", 0)).unwrap();
        r.add(doc("1", "black stone", 0)).unwrap();
        assert!(r.search("lamp", None, 0, &SearchOptions::default()).unwrap().is_empty());
        assert_eq!(r.len(), 1);
        assert!(r.remove("1"));
        assert!(r.search("stone", None, 0, &SearchOptions::default()).unwrap().is_empty());
    }

    #[test]
    fn a_host_document_takes_the_defaults_and_is_checked() {
        let input = |json: &str| serde_json::from_str::<DocInput>(json).unwrap();
        let d = input(r#"{"id":"a","text":"green lamp"}"#).into_doc(None, 42).unwrap();
        assert_eq!((d.scope, d.timestamp, d.importance, d.long_term), (Scope::User, 42, 0.5, true));
        assert_eq!((d.context, d.origin, d.sources), (None, None, vec![]));
        let d = input(
            r#"{"id":"a","text":"t","scope":"agent:x","timestamp":7.9,"importance":1,"longTerm":false}"#,
        )
        .into_doc(Some(vec![1.0]), 42)
        .unwrap();
        assert_eq!((d.scope.to_string().as_str(), d.timestamp, d.importance), ("agent:x", 7, 1.0));
        assert_eq!((d.long_term, d.embedding), (false, Some(vec![1.0])));
        for bad in [
            DocInput { importance: 1.5, ..input(r#"{"id":"a","text":"t"}"#) },
            DocInput { timestamp: Some(f64::NAN), ..input(r#"{"id":"a","text":"t"}"#) },
        ] {
            assert_eq!(bad.into_doc(None, 0).unwrap_err().code, crate::error::ErrorCode::InvalidInput);
        }
        assert!(SearchIndex::checked(Bm25Params { b: 2.0, ..Default::default() }).is_err());
        assert!(SearchIndex::checked(Bm25Params::default()).is_ok());
    }
}
