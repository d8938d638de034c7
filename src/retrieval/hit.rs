//! What a search returns: a hit, its score breakdown and where it came from.

use serde::Serialize;

use crate::entry::Scope;

/// Why a hit scored what it did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Explain {
    pub bm25: f64,
    /// The IDF-weighted share of the query's terms the hit contains, in
    /// [0, 1], whatever its length (a term no document has weighs the
    /// most; a term of the neighbours' context counts at its weight).
    pub coverage: f64,
    pub vector: Option<f64>,
    /// The fused relevance in [0, 1].
    pub relevance: f64,
    pub decay: f64,
    pub source_weight: f64,
    pub importance_weight: f64,
    /// Subtracted by MMR for similarity to better hits.
    pub mmr_penalty: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct Hit {
    pub id: String,
    pub score: f64,
    pub text: String,
    pub scope: Scope,
    pub timestamp: i64,
    pub long_term: bool,
    pub explain: Explain,
    /// Where the hit came from, when its document says (`source`,
    /// `session`, `role`: a long-term fact, a session summary, a past turn).
    #[cfg_attr(feature = "ts", ts(skip))] // flat and optional in TS: src/wasm/types.rs
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// A fact's provenance: the ids of the messages it was drawn from.
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// The text was cut to `truncateChars` (the long-term block reports it).
    #[serde(skip)]
    pub cut: bool,
}

/// A hit's text: at most `chars` characters, and whether it was cut.
pub fn cut_text(text: &str, chars: u32) -> (String, bool) {
    match text.char_indices().nth(chars as usize) {
        Some((end, _)) => (text[..end].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// What a hit of long-term recall is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "source")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Origin {
    /// A long-term memory.
    Fact,
    /// The summary of a session.
    Summary { session: String },
    /// A message of a past conversation.
    Turn { session: String, role: crate::entry::Role },
}
