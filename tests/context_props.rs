//! Property tests of whole requests: on random conversations, budgets,
//! system prompts, long-term blocks and summaries, the `messages` array is
//! always one a provider accepts, and its exact token total never exceeds the
//! context window less the response reservation.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use agent_memory::budget::{BudgetOptions, TokenBudget};
use agent_memory::error::ErrorCode;
use agent_memory::retrieval::block::LongTermBlock;
use agent_memory::tokens::Estimate;
use agent_memory::working::context::{build as build_context, is_asked, total_tokens, ContextInput};
use agent_memory::working::message::entry_tokens;
use agent_memory::working::window::Item;
use common::{build, check_valid_messages, event, text};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(400)))]

    #[test]
    fn requests_are_valid_and_within_budget(
        events in prop::collection::vec(event(), 0..40),
        window in 3_400u32..12_000,
        system in prop::option::of(text()),
        long_term in prop::option::of(text()),
        summary in prop::option::of(text()),
        query in prop::option::of(text()),
        complete: bool,
        long_term_budget in 0u32..2_000,
        summary_budget in 0u32..2_000,
    ) {
        let mut entries = build(&events);
        let tokens: Vec<u32> = entries.iter_mut().map(|e| entry_tokens(&Estimate, e)).collect();
        let history: Vec<Item> = entries.iter().zip(&tokens).map(|(entry, &tokens)| Item { entry, tokens }).collect();
        let budget = TokenBudget::new(BudgetOptions { context_window: window, ..Default::default() }).unwrap();
        let long_term = long_term.map(LongTermBlock::from);
        let result = build_context(ContextInput {
            tokenizer: &Estimate,
            budget: &budget,
            system: system.as_deref(),
            tools_json: Some(r#"[{"type":"function","function":{"name":"f","parameters":{}}}]"#),
            history: &history,
            history_is_complete: complete,
            uncovered_older: 0,
            summary: summary.as_deref(),
            summary_budget,
            long_term: long_term.as_ref(),
            long_term_budget,
            query: query.as_deref(),
            max_window_tokens: None,
        });
        match result {
            Ok(ctx) => {
                let limit = window - 2_000;
                let exact = total_tokens(&Estimate, &ctx.messages) + ctx.report.tools;
                prop_assert_eq!(exact, ctx.report.total);
                prop_assert!(exact <= limit, "{} > {}", exact, limit);
                prop_assert!(ctx.report.summary <= summary_budget, "summary {} > {}", ctx.report.summary, summary_budget);
                prop_assert!(ctx.report.long_term <= long_term_budget, "long-term {} > {}", ctx.report.long_term, long_term_budget);
                if let Err(e) = check_valid_messages(&ctx.messages) {
                    prop_assert!(false, "{}", e);
                }
                // The query ends the request, unless the turn holds it
                // already (a tool step, a retry): then it is not sent twice.
                if let Some(q) = query.as_deref().filter(|q| !is_asked(entries.iter(), q)) {
                    prop_assert_eq!(&ctx.messages.last().unwrap().content, q);
                }
            }
            Err(e) => prop_assert_eq!(e.code, ErrorCode::LimitExceeded),
        }
    }
}
