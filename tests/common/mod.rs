//! Random conversations for the property tests: tool calls (complete,
//! incomplete, orphaned results), system messages, CJK, empty and huge messages.
#![allow(dead_code)]

use agent_memory::entry::{Kind, MemoryEntry, Role, Scope, ToolCall};
use agent_memory::working::message::ChatMessage;
use proptest::prelude::*;

#[derive(Debug, Clone)]
pub enum Event {
    User(String),
    Assistant(String),
    System(String),
    /// A tool call with `calls` ids, of which `answered` get results, plus
    /// `stray` results answering nothing.
    Tools {
        calls: usize,
        answered: usize,
        stray: usize,
    },
    Orphan,
}

pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{1,40}",
        "[\u{4e00}-\u{4eff}]{1,30}",
        "[a-z]{1,10}".prop_map(|s| s.repeat(400)),
    ]
}

pub fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => text().prop_map(Event::User),
        4 => text().prop_map(Event::Assistant),
        1 => text().prop_map(Event::System),
        2 => (1usize..4, 0usize..4, 0usize..2).prop_map(|(calls, a, stray)| Event::Tools { calls, answered: a.min(calls), stray }),
        1 => Just(Event::Orphan),
    ]
}

pub fn build(events: &[Event]) -> Vec<MemoryEntry> {
    let mut out = Vec::new();
    let mut next_id = 0;
    let new =
        |content: &str, role: Role| MemoryEntry::new(content, Kind::Conversation, role, Scope::Session, 0);
    for ev in events {
        match ev {
            Event::User(t) => out.push(new(t, Role::User)),
            Event::Assistant(t) => out.push(new(t, Role::Assistant)),
            Event::System(t) => out.push(new(t, Role::System)),
            Event::Tools { calls, answered, stray } => {
                let mut a = new("", Role::Assistant);
                let ids: Vec<String> = (0..*calls)
                    .map(|_| {
                        next_id += 1;
                        format!("call_{next_id}")
                    })
                    .collect();
                a.tool_calls = ids
                    .iter()
                    .map(|id| ToolCall { id: id.clone(), name: "f".into(), arguments: "{}".into() })
                    .collect();
                out.push(a);
                for id in ids.iter().take(*answered) {
                    let mut r = new("result", Role::Tool);
                    r.tool_call_id = Some(id.clone());
                    out.push(r);
                }
                for _ in 0..*stray {
                    let mut r = new("stray", Role::Tool);
                    r.tool_call_id = Some("nobody".into());
                    out.push(r);
                }
            }
            Event::Orphan => {
                let mut r = new("orphan", Role::Tool);
                r.tool_call_id = Some("gone".into());
                out.push(r);
            }
        }
    }
    out
}

/// Checks that a `messages` array is one a provider accepts: a system
/// message only first, every tool result right after its call, every call
/// answered, and the first chat message from the user.
pub fn check_valid_messages(messages: &[ChatMessage]) -> Result<(), String> {
    for (k, m) in messages.iter().enumerate() {
        if m.role == Role::System && k != 0 {
            return Err(format!("system message at {k}"));
        }
        if m.role == Role::Tool {
            let call = messages[..k].iter().rev().find(|p| p.role != Role::Tool);
            if !call.is_some_and(|c| c.tool_calls.iter().any(|t| Some(&t.id) == m.tool_call_id.as_ref())) {
                return Err(format!("tool result at {k} without its call"));
            }
        }
        for call in &m.tool_calls {
            let answered = messages[k + 1..]
                .iter()
                .take_while(|r| r.role == Role::Tool)
                .filter(|r| r.tool_call_id.as_ref() == Some(&call.id))
                .count();
            if answered != 1 {
                return Err(format!("call {} at {k} answered {answered} times", call.id));
            }
        }
    }
    if let Some(first) = messages.iter().find(|m| m.role != Role::System) {
        if first.role != Role::User {
            return Err("the first chat message is not the user's".into());
        }
    }
    Ok(())
}

/// Cases per property: `default`, or `FUZZ_CASES` when set (the fuzzing
/// benchmark runs every target long).
pub fn cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
