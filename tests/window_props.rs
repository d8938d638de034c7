//! Property tests of window assembly on random conversations: tool calls
//! (complete, incomplete, orphaned results), system messages, CJK, empty and
//! huge messages.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use agent_memory::entry::{MemoryEntry, Role};
use agent_memory::tokens::Estimate;
use agent_memory::working::message::entry_tokens;
use agent_memory::working::window::{assemble, Item, WindowRequest};
use common::{build, event};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(500)))]

    #[test]
    fn window_contract(events in prop::collection::vec(event(), 0..40),
                       max in 0u32..3000, summary in prop::option::of(0u32..800), complete: bool) {
        let mut entries = build(&events);
        let tokens: Vec<u32> = entries.iter_mut().map(|e| entry_tokens(&Estimate, e)).collect();
        let chat: Vec<Item> = entries.iter().zip(&tokens)
            .filter(|(e, _)| e.role != Role::System)
            .map(|(entry, &tokens)| Item { entry, tokens })
            .collect();
        let w = assemble(WindowRequest { history: &chat, history_is_complete: complete, summary_tokens: summary, max_window_tokens: max });

        // Within budget, the summary counted inside it.
        let sent: u32 = w.indices.iter().map(|&i| chat[i].tokens).sum();
        prop_assert_eq!(sent, w.tokens);
        let summary_sent = if w.summary_used { summary.unwrap() } else { 0 };
        prop_assert!(w.tokens + summary_sent <= max);

        // Order kept; never opens with an assistant message.
        prop_assert!(w.indices.windows(2).all(|p| p[0] < p[1]));
        if let Some(&first) = w.indices.first() {
            prop_assert_eq!(chat[first].entry.role, Role::User);
        }

        // Every tool result follows its call; every call has all its results.
        let sent: Vec<&MemoryEntry> = w.indices.iter().map(|&i| chat[i].entry).collect();
        for (k, m) in sent.iter().enumerate() {
            if m.role == Role::Tool {
                let call = sent[..k].iter().rev().find(|p| p.role != Role::Tool);
                prop_assert!(call.is_some_and(|c| c.tool_calls.iter().any(|t| Some(&t.id) == m.tool_call_id.as_ref())));
            }
            if !m.tool_calls.is_empty() {
                let results: Vec<_> = sent[k + 1..].iter().take_while(|r| r.role == Role::Tool).collect();
                for call in &m.tool_calls {
                    prop_assert_eq!(results.iter().filter(|r| r.tool_call_id.as_ref() == Some(&call.id)).count(), 1);
                }
            }
        }

        // The window is the newest stretch of what is sendable: nothing
        // sendable newer than its first message is missing.
        if let Some(&first) = w.indices.first() {
            let last_user = chat.iter().rposition(|i| i.entry.role == Role::User);
            prop_assert!(last_user.is_some_and(|u| u >= first));
        }

        // Everything fits and nothing was evicted: all valid units are sent.
        let total: u32 = tokens.iter().zip(&entries).filter(|(_, e)| e.role != Role::System).map(|(t, _)| t).sum();
        if total <= max && (complete || summary.is_none()) && w.left_out.orphan_tool_results == 0
            && w.left_out.incomplete_tool_calls == 0 && w.left_out.leading_assistant == 0 {
            prop_assert_eq!(w.indices.len(), chat.len());
        }
    }
}
