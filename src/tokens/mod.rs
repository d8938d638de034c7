//! Token counting: the `Tokenizer` port, its three implementations (the fast
//! estimate, exact cl100k, exact o200k), and the budget helpers built on it.
//!
//! Exact tokenizers are built from packs ([`pack`]) that the host loads on
//! demand; until one is loaded the estimate counts, and every count says
//! which tokenizer produced it ([`TokenizerId`]).

pub mod estimate;
mod merge;
pub mod pack;
pub mod pretokenize;
mod vocab;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use estimate::estimate_tokens;

/// A count as a host's 32-bit number, saturating at `u32::MAX`: a text of
/// more tokens than that is "too many", never a wrapped small count.
pub fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
use pretokenize::{pieces, Pattern};
use vocab::Vocabulary;

/// Which counter produced a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum TokenizerId {
    Estimate,
    Cl100k,
    O200k,
}

impl TokenizerId {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenizerId::Estimate => "estimate",
            TokenizerId::Cl100k => "cl100k",
            TokenizerId::O200k => "o200k",
        }
    }

    pub fn parse(s: &str) -> Result<TokenizerId> {
        match s {
            "estimate" => Ok(TokenizerId::Estimate),
            "cl100k" | "cl100k_base" => Ok(TokenizerId::Cl100k),
            "o200k" | "o200k_base" => Ok(TokenizerId::O200k),
            other => Err(Error::invalid(format!(
                "unknown tokenizer {other:?}: expected \"estimate\", \"cl100k\" or \"o200k\""
            ))),
        }
    }
}

/// The port every budget goes through.
pub trait Tokenizer {
    fn id(&self) -> TokenizerId;

    /// Tokens in `text`.
    fn count(&self, text: &str) -> usize;

    /// `Some(count)` if `text` has at most `limit` tokens, else `None`. Stops
    /// early: asking whether a long text fits a small budget costs about the
    /// budget, not the text.
    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize>;
}

/// The design's character-based estimate (with the CJK ranges corrected).
#[derive(Debug, Default, Clone, Copy)]
pub struct Estimate;

impl Tokenizer for Estimate {
    fn id(&self) -> TokenizerId {
        TokenizerId::Estimate
    }

    fn count(&self, text: &str) -> usize {
        estimate_tokens(text)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        estimate::estimate_tokens_up_to(text, limit)
    }
}

/// An exact byte-pair-encoding tokenizer built from a pack, giving the same
/// counts as tiktoken's `cl100k_base` / `o200k_base`.
pub struct BpeTokenizer {
    id: TokenizerId,
    pattern: Pattern,
    vocabulary: Vocabulary,
}

impl BpeTokenizer {
    /// Decodes a pack (see [`pack`]); fails with `TOKENIZER_PACK` on a bad one.
    pub fn from_pack(bytes: &[u8]) -> Result<BpeTokenizer> {
        let p = pack::decode(bytes)?;
        Ok(BpeTokenizer { id: p.id, pattern: p.pattern, vocabulary: p.vocabulary })
    }
}

impl Tokenizer for BpeTokenizer {
    fn id(&self) -> TokenizerId {
        self.id
    }

    fn count(&self, text: &str) -> usize {
        pieces(text, self.pattern).map(|p| merge::count_piece(&self.vocabulary, p.as_bytes())).sum()
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        let mut total = 0;
        for p in pieces(text, self.pattern) {
            total += merge::count_piece(&self.vocabulary, p.as_bytes());
            if total > limit {
                return None;
            }
        }
        Some(total)
    }
}

/// The longest prefix of `text`, cut at a character boundary, with at most
/// `limit` tokens.
pub fn truncate_to_tokens<'a>(tok: &dyn Tokenizer, text: &'a str, limit: usize) -> &'a str {
    if tok.count_up_to(text, limit).is_some() {
        return text;
    }
    // Binary search on character boundaries. Counts of prefixes are monotone
    // up to BPE's local effects, so the result is verified, and walked back
    // a character at a time in the rare case it is not.
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if tok.count_up_to(&text[..bounds[mid]], limit).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut k = lo;
    while k > 0 && tok.count_up_to(&text[..bounds[k]], limit).is_none() {
        k -= 1;
    }
    &text[..bounds[k]]
}

/// Whole lines of `text`, from the start, while their tokens (each line
/// counted with its line break, as the enterprise design does) fit in
/// `limit`. A memory block cut this way never ends mid-memory.
pub fn truncate_to_lines(tok: &dyn Tokenizer, text: &str, limit: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let with_break: std::borrow::Cow<str> =
            if line.ends_with('\n') { line.into() } else { format!("{line}\n").into() };
        let n = tok.count(&with_break);
        if used + n > limit {
            break;
        }
        out.push_str(line);
        used += n;
    }
    // Lines counted apart can in rare cases count more together than apart
    // (whitespace merging goes the other way); drop lines until it is exact.
    while tok.count_up_to(&out, limit).is_none() {
        let cut = out.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
        out.truncate(cut);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_past_u32_saturates_instead_of_wrapping() {
        assert_eq!(count_u32(7), 7);
        assert_eq!(count_u32(u32::MAX as usize), u32::MAX);
        // Only a 64-bit usize goes past u32 (the component's host, native).
        #[cfg(target_pointer_width = "64")]
        assert_eq!(count_u32(u32::MAX as usize + 2), u32::MAX, "`as u32` would give 1");
    }

    #[test]
    fn estimate_fits_and_truncates() {
        let t = Estimate;
        assert_eq!(t.count_up_to("abcdefgh", 2), Some(2));
        assert_eq!(t.count_up_to("abcdefghi", 2), None);
        assert_eq!(t.count_up_to(&"x".repeat(100_000), 10), None);
        assert_eq!(truncate_to_tokens(&t, "abcdefghij", 2), "abcdefgh");
        assert_eq!(truncate_to_tokens(&t, "你好世界和平", 2), "你好世");
        assert_eq!(truncate_to_tokens(&t, "short", 100), "short");
    }

    #[test]
    fn line_truncation_keeps_whole_lines() {
        let t = Estimate;
        let text = "aaa\nbbbbbbb\ncc\n";
        // "aaa\n" = 1, "bbbbbbb\n" = 2, "cc\n" = 1
        assert_eq!(truncate_to_lines(&t, text, 1), "aaa\n");
        assert_eq!(truncate_to_lines(&t, text, 2), "aaa\n");
        assert_eq!(truncate_to_lines(&t, text, 3), "aaa\nbbbbbbb\n");
        assert_eq!(truncate_to_lines(&t, text, 0), "");
    }

    #[test]
    fn ids_parse() {
        assert_eq!(TokenizerId::parse("o200k_base").unwrap(), TokenizerId::O200k);
        assert!(TokenizerId::parse("gpt2").is_err());
    }
}
