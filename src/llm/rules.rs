//! The rule judge: the fallback when the model fails, answers nothing or
//! is absent (seed 002). It is the rule extractor ([`crate::extract`]) over
//! the judged batch: the new user messages give memories, in the third
//! person with their sources; the messages around them are context.

use crate::entry::MemoryEntry;
use crate::extract::{extract, ExtractOptions, Turn};
use crate::llm::parse::{Candidate, Layer};

/// Candidates from the new user messages of a batch (`(message, new)`).
pub fn judge(context: &[(MemoryEntry, bool)]) -> Vec<Candidate> {
    let turns: Vec<Turn> = context
        .iter()
        .map(|(e, new)| Turn {
            id: &e.id,
            role: e.role,
            content: &e.content,
            timestamp: e.timestamp,
            new: *new,
        })
        .collect();
    extract(&turns, &ExtractOptions::default())
        .into_iter()
        .map(|m| Candidate {
            content: m.content,
            category: m.category,
            layer: Layer::User,
            importance: m.importance,
            sources: m.sources,
            temporal: None,
            // Rules write no aliases: the index adds the concepts of the
            // text's own words (`retrieval::concepts`).
            aliases: String::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Kind, Role, Scope};

    fn msg(role: Role, text: &str) -> (MemoryEntry, bool) {
        (MemoryEntry::new(text, Kind::Conversation, role, Scope::Session, 1_683_554_160_000), true)
    }

    #[test]
    fn new_user_statements_become_third_person_candidates_with_sources() {
        let batch = [
            msg(Role::Assistant, "What's new with you?"),
            msg(Role::User, "Hi! My name is Ada and I prefer Rust for backend work. What's the weather?"),
            msg(Role::Assistant, "I like helping. My name is Bot."),
            (
                MemoryEntry::new(
                    "I have three cats at home, all of them rescued.",
                    Kind::Conversation,
                    Role::User,
                    Scope::Session,
                    1,
                ),
                false,
            ),
            msg(Role::User, "Remember that my flight is on May 3rd"),
        ];
        let c = judge(&batch);
        let contents: Vec<&str> = c.iter().map(|c| c.content.as_str()).collect();
        assert_eq!(
            contents,
            ["User's name is Ada and they prefer Rust for backend work", "User's flight is on May 3rd"]
        );
        assert_eq!(c[0].sources, [batch[1].0.id.clone()]);
        assert_eq!(c[0].category, crate::entry::Category::Profile);
    }

    #[test]
    fn chinese_statements_and_no_questions() {
        let c = judge(&[
            msg(Role::Assistant, "你最近怎么样？"),
            msg(Role::User, "我最近在学吉他，每天练习一个小时。你喜欢什么乐器吗？"),
        ]);
        let contents: Vec<&str> = c.iter().map(|c| c.content.as_str()).collect();
        assert_eq!(contents, ["用户最近在学吉他，每天练习一个小时"]);
    }
}
