//! The token budget: how much of the model's context window the conversation
//! may use, when to compress, and what the LLM calls have cost so far.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the context window is split. Defaults are the design's: a 200k
/// window with 500 tokens for the system prompt, 800 for tool definitions,
/// 2000 for the response, and compression past 80% of the rest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BudgetOptions {
    /// Default 200000.
    pub context_window: u32,
    /// Default 500.
    pub reserved_for_system: u32,
    /// Default 800.
    pub reserved_for_tools: u32,
    /// Default 2000.
    pub reserved_for_response: u32,
    /// Share of the conversation budget past which compression is due, in
    /// (0, 1]. Default 0.8: the 20% margin absorbs the error of estimated
    /// counts.
    pub compression_threshold: f64,
}

impl Default for BudgetOptions {
    fn default() -> Self {
        BudgetOptions {
            context_window: 200_000,
            reserved_for_system: 500,
            reserved_for_tools: 800,
            reserved_for_response: 2_000,
            compression_threshold: 0.8,
        }
    }
}

/// Token usage reported by LLM calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Usage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// The usage report, structured (the text form is [`TokenBudget::usage_report`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UsageReport {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    pub context_window: u32,
    pub available_for_conversation: u32,
    pub compression_threshold: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TokenBudget {
    options: BudgetOptions,
    usage: Usage,
}

impl TokenBudget {
    /// Validates the split: the reservations must leave room for a
    /// conversation, and the threshold must be a ratio in (0, 1].
    pub fn new(options: BudgetOptions) -> Result<TokenBudget> {
        let reserved = options.reserved_for_system as u64
            + options.reserved_for_tools as u64
            + options.reserved_for_response as u64;
        if options.context_window == 0 {
            return Err(Error::invalid("contextWindow must be a positive integer"));
        }
        if reserved >= options.context_window as u64 {
            return Err(Error::invalid(format!(
                "reservations ({reserved} tokens) leave no room for the conversation in a {}-token context window",
                options.context_window
            )));
        }
        let t = options.compression_threshold;
        if !t.is_finite() || t <= 0.0 || t > 1.0 {
            return Err(Error::invalid("compressionThreshold must be a number in (0, 1]"));
        }
        Ok(TokenBudget { options, usage: Usage::default() })
    }

    pub fn options(&self) -> &BudgetOptions {
        &self.options
    }

    /// Context window less the reservations: 196,700 with the defaults.
    pub fn available_for_conversation(&self) -> u32 {
        let o = &self.options;
        o.context_window - o.reserved_for_system - o.reserved_for_tools - o.reserved_for_response
    }

    /// The token count past which compression is due.
    pub fn compression_trigger(&self) -> u32 {
        (self.available_for_conversation() as f64 * self.options.compression_threshold).floor() as u32
    }

    /// True when `conversation_tokens` passes the threshold.
    pub fn needs_compression(&self, conversation_tokens: u64) -> bool {
        conversation_tokens > self.compression_trigger() as u64
    }

    /// `conversation_tokens` as a share of the conversation budget.
    pub fn usage_ratio(&self, conversation_tokens: u64) -> f64 {
        conversation_tokens as f64 / self.available_for_conversation() as f64
    }

    pub fn record_usage(&mut self, input_tokens: u64, output_tokens: u64) {
        self.add_usage(Usage { calls: 1, input_tokens, output_tokens });
    }

    /// Adds the usage of several calls at once.
    pub fn add_usage(&mut self, usage: Usage) {
        self.usage.calls += usage.calls;
        self.usage.input_tokens += usage.input_tokens;
        self.usage.output_tokens += usage.output_tokens;
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    pub fn report(&self) -> UsageReport {
        UsageReport {
            calls: self.usage.calls,
            input_tokens: self.usage.input_tokens,
            output_tokens: self.usage.output_tokens,
            total_tokens: self.usage.total_tokens(),
            context_window: self.options.context_window,
            available_for_conversation: self.available_for_conversation(),
            compression_threshold: self.options.compression_threshold,
        }
    }

    /// One line for logs: `Token usage: 3 calls | input: 1200 | output: 340 | total: 1540`.
    pub fn usage_report(&self) -> String {
        let u = &self.usage;
        format!(
            "Token usage: {} calls | input: {} | output: {} | total: {}",
            u.calls,
            u.input_tokens,
            u.output_tokens,
            u.total_tokens()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let b = TokenBudget::new(BudgetOptions::default()).unwrap();
        assert_eq!(b.available_for_conversation(), 196_700);
        assert_eq!(b.compression_trigger(), 157_360);
        assert!(!b.needs_compression(157_360));
        assert!(b.needs_compression(157_361));
        assert!((b.usage_ratio(98_350) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn rejects_impossible_splits() {
        let bad = |f: fn(&mut BudgetOptions)| {
            let mut o = BudgetOptions::default();
            f(&mut o);
            TokenBudget::new(o).unwrap_err()
        };
        assert!(bad(|o| o.context_window = 0).message.contains("contextWindow"));
        assert!(bad(|o| o.context_window = 3_300).message.contains("no room"));
        assert!(bad(|o| o.compression_threshold = f64::NAN).message.contains("compressionThreshold"));
        assert!(bad(|o| o.compression_threshold = 0.0).message.contains("compressionThreshold"));
        assert!(bad(|o| o.compression_threshold = 1.5).message.contains("compressionThreshold"));
    }

    #[test]
    fn records_usage_and_reports_it() {
        let mut b = TokenBudget::new(BudgetOptions { context_window: 8_192, ..Default::default() }).unwrap();
        b.record_usage(1_000, 200);
        b.record_usage(200, 140);
        assert_eq!(b.usage(), Usage { calls: 2, input_tokens: 1_200, output_tokens: 340 });
        assert_eq!(b.usage_report(), "Token usage: 2 calls | input: 1200 | output: 340 | total: 1540");
        let r = b.report();
        assert_eq!(r.total_tokens, 1_540);
        assert_eq!(r.available_for_conversation, 4_892);
    }
}
