//! A prompt as a framework hands it over whole on every model call (the AI
//! SDK's prompt, the Agents SDK's model input), read by the rules a turn is
//! recorded and recalled with, so each framework adapter only converts its
//! messages and forwards ([`read_prompt`]).

use serde::Serialize;

use super::session::NewMessage;
use crate::entry::Role;

/// What a prompt says about its turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct PromptTurn {
    /// The request's system text: the adapter's own, then the prompt's
    /// system messages, joined by blank lines (empty ones left out); absent
    /// when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The positions of the turn's new messages, in order: those after the
    /// prompt's last assistant message (the user's new message, or a tool
    /// step's results), its system messages aside. A retried call hands
    /// them over again: `Memory::add_new` skips what the session ends with.
    pub new_messages: Vec<u32>,
    /// The newest user message's text, what the turn recalls with; absent
    /// when there is none (or it is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<String>,
}

/// Reads a prompt's turn; `system` is the adapter's own system text.
pub fn read_prompt(messages: &[NewMessage], system: Option<&str>) -> PromptTurn {
    let mut text = String::new();
    let mut join = |t: &str| {
        if !t.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(t);
        }
    };
    join(system.unwrap_or_default());
    let (mut new_messages, mut newest_user) = (Vec::new(), None);
    for (i, m) in messages.iter().enumerate() {
        match m.role.unwrap_or(Role::User) {
            Role::System => join(&m.content),
            Role::Assistant => new_messages.clear(),
            role => {
                if role == Role::User {
                    newest_user = Some(m.content.as_str());
                }
                new_messages.push(i as u32);
            }
        }
    }
    PromptTurn {
        system: (!text.is_empty()).then_some(text),
        new_messages,
        recall: newest_user.filter(|t| !t.is_empty()).map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::ToolCall;

    fn message(role: Role, content: &str) -> NewMessage {
        NewMessage { role: Some(role), content: content.into(), ..NewMessage::default() }
    }

    #[test]
    fn the_turn_is_what_follows_the_last_assistant_message_and_system_texts_join() {
        let prompt = [
            message(Role::System, "Be brief."),
            message(Role::User, "hi"),
            message(Role::Assistant, "hello"),
            message(Role::System, ""),
            message(Role::User, "what is the weather?"),
            message(Role::System, "Answer in French."),
        ];
        let turn = read_prompt(&prompt, Some("You are a helper."));
        assert_eq!(turn.system.as_deref(), Some("You are a helper.\n\nBe brief.\n\nAnswer in French."));
        assert_eq!(turn.new_messages, [4]);
        assert_eq!(turn.recall.as_deref(), Some("what is the weather?"));
        // A tool step: its results are the new messages; the user's message is still what recalls.
        let step = [
            message(Role::User, "run the tests"),
            NewMessage {
                tool_calls: vec![ToolCall { id: "c1".into(), name: "test".into(), arguments: "{}".into() }],
                ..message(Role::Assistant, "")
            },
            message(Role::Tool, "ok"),
            message(Role::Tool, "2 passed"),
        ];
        let turn = read_prompt(&step, None);
        assert_eq!((turn.system, turn.new_messages), (None, vec![2, 3]));
        assert_eq!(turn.recall.as_deref(), Some("run the tests"));
        // No assistant message yet: the whole prompt is new; a missing role is a user's.
        let first = [NewMessage { content: "hey".into(), ..NewMessage::default() }];
        assert_eq!(
            read_prompt(&first, Some("")),
            PromptTurn { system: None, new_messages: vec![0], recall: Some("hey".into()) }
        );
        assert_eq!(read_prompt(&[], None), PromptTurn::default());
    }
}
