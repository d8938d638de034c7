//! What a search may ask: how many hits, which scopes, how age, source and
//! importance weigh, the floors, MMR and fusion. Checked once, before any
//! document is scored, so a bad option fails the call rather than a hit.

use serde::{Deserialize, Serialize};

use crate::entry::Scope;
use crate::error::{Error, Result};

/// How age lowers a score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Decay {
    /// No decay. The default: measured on LoCoMo, any decay costs recall
    /// when memories span weeks (see docs/benchmarks.md).
    #[default]
    None,
    /// The design's preset: 1.0 at age 0, linearly to 0.5 at 24 hours, 0.5 after.
    Linear24h,
    /// `0.5 ^ (age / halfLifeDays)`, floored at `decayFloor`.
    HalfLife,
}

/// How lexical and vector scores combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Fusion {
    /// Min-max normalize each signal over the candidates, then weight.
    #[default]
    Minmax,
    /// Reciprocal rank fusion: sum of `1 / (rrfK + rank)`.
    Rrf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchOptions {
    /// Default 10.
    pub top_k: u32,
    /// Only these scopes (default: all).
    pub scopes: Option<Vec<Scope>>,
    /// At most this many hits per scope.
    pub per_scope_top_k: Option<u32>,
    /// "Now" for time decay, ms since the epoch (default: the clock).
    pub now: Option<i64>,
    /// Default "none" (measured best on LoCoMo); "linear24h" is the design's preset.
    pub decay: Decay,
    /// Default 30.
    pub half_life_days: f64,
    /// Default 0.5.
    pub decay_floor: f64,
    /// Multiplier for long-term memories over session messages (the design's 1.2, the default).
    pub long_term_weight: f64,
    /// How much importance moves a score: `x (1 + w (importance - 0.5))`. Default 0.
    pub importance_weight: f64,
    /// Drop hits scoring below this share of the best hit. Default 0.
    pub relativity: f64,
    /// Drop hits scoring below this (scores are in [0, 1] before weights). Default 0.
    pub min_score: f64,
    /// An absolute floor on the query: nothing is returned unless the hits
    /// together match at least this share of it lexically (the IDF-weighted
    /// share of its terms some hit contains; `explain.coverage` is each
    /// hit's own) or one reaches `min_cosine` with its vector. `min_score` and `relativity`,
    /// relative to the best hit, always let the best through; this lets a
    /// query that nothing answers return nothing. 0 and 0: no floor.
    pub min_coverage: f64,
    pub min_cosine: f64,
    /// MMR trade-off between relevance (1.0) and novelty; off when absent.
    pub mmr_lambda: Option<f64>,
    /// Default "minmax".
    pub fusion: Fusion,
    /// Weight of the lexical signal in min-max fusion. Default 0.5.
    pub alpha: f64,
    /// Default 60.
    pub rrf_k: f64,
    /// Hit texts are cut to this many characters. Default 1000.
    pub truncate_chars: u32,
    /// Answer as of this time (ms): long-term memories in force then (also
    /// ones superseded since) and turns said by then; decay counts from it.
    pub as_of: Option<i64>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            top_k: 10,
            scopes: None,
            per_scope_top_k: None,
            now: None,
            decay: Decay::None,
            half_life_days: 30.0,
            decay_floor: 0.5,
            long_term_weight: 1.2,
            importance_weight: 0.0,
            relativity: 0.0,
            min_score: 0.0,
            min_coverage: 0.0,
            min_cosine: 0.0,
            mmr_lambda: None,
            fusion: Fusion::Minmax,
            alpha: 0.5,
            rrf_k: 60.0,
            truncate_chars: 1000,
            as_of: None,
        }
    }
}

impl SearchOptions {
    pub(super) fn validate(&self) -> Result<()> {
        let finite = [
            self.half_life_days,
            self.decay_floor,
            self.long_term_weight,
            self.importance_weight,
            self.relativity,
            self.min_score,
            self.min_coverage,
            self.min_cosine,
            self.alpha,
            self.rrf_k,
        ];
        if finite.iter().any(|x| !x.is_finite()) || self.half_life_days <= 0.0 || self.rrf_k <= 0.0 {
            return Err(Error::invalid(
                "search options must be finite numbers (halfLifeDays and rrfK positive)",
            ));
        }
        if self.mmr_lambda.is_some_and(|l| !(0.0..=1.0).contains(&l)) {
            return Err(Error::invalid("mmrLambda must be in [0, 1]"));
        }
        if self.as_of.is_some_and(|t| !(0..=crate::entry::MAX_TIMESTAMP_MS).contains(&t)) {
            return Err(Error::invalid("asOf must be ms since the epoch, from 1970 to 9999"));
        }
        Ok(())
    }
}
