//! Window assembly: which messages of a session's history go into a request.
//!
//! A pure function with a contract the property tests check on random
//! conversations:
//! - the window is a contiguous run of the newest messages, walked from the
//!   newest, within `max_window_tokens` (the summary, when sent, counted
//!   inside it);
//! - when the whole history fits and nothing before it was evicted, all of it
//!   is sent and the summary is not needed;
//! - an assistant message with tool calls and its tool results are one unit,
//!   never split; a tool result without its call, or a call missing some
//!   results, is left out (providers reject both with HTTP 400);
//! - the window never starts with an assistant message.
//!
//! System messages are not windowed: the caller merges them into the pinned
//! system prompt (see `context`).

use serde::Serialize;

use crate::entry::{MemoryEntry, Role};

/// One history message with its token cost (overhead included).
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub entry: &'a MemoryEntry,
    pub tokens: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct WindowRequest<'a> {
    /// Chat history, oldest first, without system messages.
    pub history: &'a [Item<'a>],
    /// True when `history` is everything the session said (nothing older was
    /// evicted into a summary).
    pub history_is_complete: bool,
    /// Tokens of the summary message, if the session has one.
    pub summary_tokens: Option<u32>,
    pub max_window_tokens: u32,
}

/// What was left out of the window, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LeftOut {
    /// Older messages that did not fit.
    pub older_messages: u32,
    /// Tool results whose call is not in the history.
    pub orphan_tool_results: u32,
    /// Assistant tool calls some of whose results are missing (with the
    /// results they did have).
    pub incomplete_tool_calls: u32,
    /// Assistant messages that would have opened the window.
    pub leading_assistant: u32,
    /// The summary, when it alone is larger than the window.
    pub summary: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Indices into the history, oldest first.
    pub indices: Vec<usize>,
    /// Tokens of the chosen messages (not counting the summary).
    pub tokens: u32,
    pub summary_used: bool,
    pub left_out: LeftOut,
}

/// A run of history messages that must travel together.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    /// Messages of the run that belong to the unit (strays excluded).
    messages: u32,
    tokens: u32,
    starts_with_assistant: bool,
}

/// Groups history into units, dropping what no provider would accept.
/// Returns the units and the sorted indices of stray tool results inside
/// them (results that answer no call of the preceding assistant message).
fn units(history: &[Item], left_out: &mut LeftOut) -> (Vec<Unit>, Vec<usize>) {
    let mut out = Vec::with_capacity(history.len());
    let mut strays = Vec::new();
    let mut i = 0;
    while i < history.len() {
        let e = history[i].entry;
        let single = |assistant| Unit {
            start: i,
            end: i + 1,
            messages: 1,
            tokens: history[i].tokens,
            starts_with_assistant: assistant,
        };
        match e.role {
            Role::System => i += 1,
            Role::Tool => {
                left_out.orphan_tool_results += 1;
                i += 1;
            }
            Role::User => {
                out.push(single(false));
                i += 1;
            }
            Role::Assistant if e.tool_calls.is_empty() => {
                out.push(single(true));
                i += 1;
            }
            Role::Assistant => {
                // The results follow the call: take the run of tool messages,
                // each call's first result belongs to the unit.
                let mut j = i + 1;
                let mut answered: Vec<&str> = Vec::with_capacity(e.tool_calls.len());
                let mut tokens = history[i].tokens;
                let mut run_strays = Vec::new();
                while j < history.len() && history[j].entry.role == Role::Tool {
                    let id = history[j].entry.tool_call_id.as_deref().unwrap_or_default();
                    if e.tool_calls.iter().any(|c| c.id == id) && !answered.contains(&id) {
                        answered.push(id);
                        tokens += history[j].tokens;
                    } else {
                        run_strays.push(j);
                    }
                    j += 1;
                }
                left_out.orphan_tool_results += run_strays.len() as u32;
                if answered.len() == e.tool_calls.len() {
                    let messages = (j - i - run_strays.len()) as u32;
                    out.push(Unit { start: i, end: j, messages, tokens, starts_with_assistant: true });
                    strays.extend(run_strays);
                } else {
                    left_out.incomplete_tool_calls += 1;
                }
                i = j;
            }
        }
    }
    (out, strays)
}

/// Chooses the window. See the module doc for the contract.
pub fn assemble(req: WindowRequest) -> Window {
    let mut left_out = LeftOut::default();
    let (all, strays) = units(req.history, &mut left_out);
    let total: u64 = all.iter().map(|u| u.tokens as u64).sum();

    let fits_whole = total <= req.max_window_tokens as u64;
    let (mut from, summary_used) = if fits_whole && (req.history_is_complete || req.summary_tokens.is_none())
    {
        (0, false)
    } else {
        let summary = match req.summary_tokens {
            Some(s) if s <= req.max_window_tokens => Some(s),
            Some(_) => {
                left_out.summary = true;
                None
            }
            None => None,
        };
        let budget = req.max_window_tokens - summary.unwrap_or(0);
        let mut used = 0u32;
        let mut from = all.len();
        while from > 0 && used + all[from - 1].tokens <= budget {
            used += all[from - 1].tokens;
            from -= 1;
        }
        (from, summary.is_some())
    };
    left_out.older_messages = all[..from].iter().map(|u| u.messages).sum();
    while from < all.len() && all[from].starts_with_assistant {
        left_out.leading_assistant += all[from].messages;
        from += 1;
    }

    let chosen = &all[from..];
    let mut indices = Vec::with_capacity(chosen.iter().map(|u| u.messages as usize).sum());
    let mut tokens = 0;
    for u in chosen {
        tokens += u.tokens;
        indices.extend((u.start..u.end).filter(|i| strays.binary_search(i).is_err()));
    }
    Window { indices, tokens, summary_used, left_out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Kind, Scope, ToolCall};

    fn msg(role: Role, content: &str) -> MemoryEntry {
        MemoryEntry::new(content, Kind::Conversation, role, Scope::Session, 0)
    }

    fn call(ids: &[&str]) -> MemoryEntry {
        let mut e = msg(Role::Assistant, "");
        e.tool_calls = ids
            .iter()
            .map(|id| ToolCall { id: id.to_string(), name: "f".into(), arguments: "{}".into() })
            .collect();
        e
    }

    fn result(id: &str) -> MemoryEntry {
        let mut e = msg(Role::Tool, "42");
        e.tool_call_id = Some(id.to_string());
        e
    }

    fn items(entries: &[MemoryEntry], tokens: u32) -> Vec<Item<'_>> {
        entries.iter().map(|entry| Item { entry, tokens }).collect()
    }

    fn req<'a>(history: &'a [Item<'a>], max: u32, summary: Option<u32>, complete: bool) -> WindowRequest<'a> {
        WindowRequest {
            history,
            history_is_complete: complete,
            summary_tokens: summary,
            max_window_tokens: max,
        }
    }

    #[test]
    fn whole_history_is_sent_when_it_fits() {
        let h = [msg(Role::User, "a"), msg(Role::Assistant, "b"), msg(Role::User, "c")];
        let it = items(&h, 10);
        let w = assemble(req(&it, 30, Some(5), true));
        assert_eq!(w.indices, [0, 1, 2]);
        assert!(!w.summary_used);
        assert_eq!(w.tokens, 30);
    }

    #[test]
    fn recent_window_plus_summary_when_it_does_not_fit() {
        let h = [
            msg(Role::User, "a"),
            msg(Role::Assistant, "b"),
            msg(Role::User, "c"),
            msg(Role::Assistant, "d"),
        ];
        let it = items(&h, 10);
        // 40 > 35: summary (10) + the newest 2 messages (20) fit in 35.
        let w = assemble(req(&it, 35, Some(10), true));
        assert!(w.summary_used);
        assert_eq!(w.indices, [2, 3]);
        assert_eq!(w.left_out.older_messages, 2);
    }

    #[test]
    fn summary_is_sent_when_older_messages_were_evicted() {
        let h = [msg(Role::User, "a"), msg(Role::Assistant, "b")];
        let it = items(&h, 10);
        let w = assemble(req(&it, 100, Some(10), false));
        assert!(w.summary_used);
        assert_eq!(w.indices, [0, 1]);
    }

    #[test]
    fn drops_leading_assistant() {
        let h = [
            msg(Role::User, "a"),
            msg(Role::Assistant, "b"),
            msg(Role::Assistant, "c"),
            msg(Role::User, "d"),
        ];
        let it = items(&h, 10);
        let w = assemble(req(&it, 30, None, true));
        // The newest 3 fit, but the window would open with an assistant message.
        assert_eq!(w.indices, [3]);
        assert_eq!(w.left_out.leading_assistant, 2);
        assert_eq!(w.left_out.older_messages, 1);
    }

    #[test]
    fn tool_calls_travel_with_their_results() {
        let h =
            [msg(Role::User, "q"), call(&["1", "2"]), result("1"), result("2"), msg(Role::Assistant, "done")];
        let it = items(&h, 10);
        // Room for 3 messages: the call unit (3 messages) would not fit with the answer.
        let w = assemble(req(&it, 30, None, true));
        assert!(w.indices.is_empty());
        assert_eq!(w.left_out.leading_assistant, 1);
        let w = assemble(req(&it, 50, None, true));
        assert_eq!(w.indices, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn orphans_and_incomplete_calls_are_left_out() {
        let h = [
            result("x"),
            msg(Role::User, "q"),
            call(&["1", "2"]),
            result("1"),
            msg(Role::User, "q2"),
            call(&["3"]),
            result("3"),
            result("9"),
        ];
        let it = items(&h, 10);
        let w = assemble(req(&it, 1000, None, true));
        assert_eq!(w.indices, [1, 4, 5, 6]);
        assert_eq!(w.left_out.orphan_tool_results, 2);
        assert_eq!(w.left_out.incomplete_tool_calls, 1);
    }

    #[test]
    fn oversized_summary_is_left_out() {
        let h = [msg(Role::User, "a")];
        let it = items(&h, 10);
        let w = assemble(req(&it, 20, Some(50), false));
        assert!(!w.summary_used);
        assert!(w.left_out.summary);
        assert_eq!(w.indices, [0]);
    }
}
