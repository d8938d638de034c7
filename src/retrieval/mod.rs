//! Retrieval: what the model remembers for a query.
//!
//! Lexical BM25 over the analyzed text (see [`analyzer`]), cosine over
//! embeddings when the host gives an embedder, fused by min-max weighting or
//! reciprocal rank; then the design's scoring terms as options: time decay,
//! the long-term source weight, importance, a relativity threshold, a score
//! floor, MMR, per-scope top-k and per-entry truncation. Every hit carries
//! its score breakdown (`explain`).
//!
//! Options in [`SearchOptions`]; the index and its search in `search_index`,
//! the fusion of the two signals in `fusion`, the vector maths in `vector`,
//! the count of searches per day in [`SearchCounts`] (kept by the index's
//! owner: a search only reads); the long-term block a request carries in
//! [`block`].

pub mod analyzer;
pub mod block;
pub mod concepts;
mod fusion;
mod hit;
pub mod index;
mod options;
mod search_index;
mod searches;
mod vector;

pub use hit::{cut_text, Explain, Hit, Origin};
pub use index::Bm25Params;
pub use options::{Decay, Fusion, SearchOptions};
pub use search_index::{DocInput, IndexDoc, SearchIndex};
pub use searches::SearchCounts;
