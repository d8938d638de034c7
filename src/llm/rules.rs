//! The rule judge: the fallback when the model fails or answers nothing
//! (seed 002). It looks only at the new user messages, sentence by
//! sentence, for the first-person statements that carry lasting facts
//! ("my name is", "I prefer", "我喜欢", "记住"), and keeps each as said.
//! It finds less than a model would, but what it finds is the user's own
//! words, so it never invents a memory.

use crate::entry::{MemoryEntry, Role};
use crate::llm::parse::{truncate_chars, Candidate, Category, Layer, MAX_MEMORY_CHARS};

/// Phrases, lowercased, and what they signal. Longer phrases come first
/// where one contains another, so the first match is the most specific.
const PATTERNS: &[(&str, Category)] = &[
    ("remember that", Category::Fact),
    ("please remember", Category::Fact),
    ("don't forget", Category::Fact),
    ("my name is", Category::Profile),
    ("call me ", Category::Profile),
    ("i work as", Category::Profile),
    ("i work at", Category::Profile),
    ("i work for", Category::Profile),
    ("i live in", Category::Profile),
    ("i'm from", Category::Profile),
    ("i am from", Category::Profile),
    ("i'm a ", Category::Profile),
    ("i am a ", Category::Profile),
    ("i am an ", Category::Profile),
    ("i'm an ", Category::Profile),
    ("my favorite", Category::Preference),
    ("my favourite", Category::Preference),
    ("i prefer", Category::Preference),
    ("i like", Category::Preference),
    ("i love", Category::Preference),
    ("i enjoy", Category::Preference),
    ("i hate", Category::Preference),
    ("i dislike", Category::Preference),
    ("i don't like", Category::Preference),
    ("i do not like", Category::Preference),
    ("i always", Category::Preference),
    ("i never", Category::Preference),
    ("i usually", Category::Preference),
    ("i'm allergic", Category::Profile),
    ("i am allergic", Category::Profile),
    ("i plan to", Category::Task),
    ("i'm planning", Category::Task),
    ("my goal", Category::Task),
    ("i'm working on", Category::Fact),
    ("i am working on", Category::Fact),
    ("i own", Category::Fact),
    ("记住", Category::Fact),
    ("别忘了", Category::Fact),
    ("我的名字", Category::Profile),
    ("我叫", Category::Profile),
    ("我住在", Category::Profile),
    ("我来自", Category::Profile),
    ("我是", Category::Profile),
    ("我最喜欢", Category::Preference),
    ("我更喜欢", Category::Preference),
    ("我不喜欢", Category::Preference),
    ("我喜欢", Category::Preference),
    ("我偏好", Category::Preference),
    ("我讨厌", Category::Preference),
    ("我习惯", Category::Preference),
    ("我一般", Category::Preference),
    ("我通常", Category::Preference),
    ("我总是", Category::Preference),
    ("我从不", Category::Preference),
    ("我爱", Category::Preference),
    ("我常用", Category::Preference),
    ("我打算", Category::Task),
    ("我计划", Category::Task),
    ("我的目标", Category::Task),
    ("我正在", Category::Fact),
    ("我有", Category::Fact),
];

/// Sentences of a message: split after `.!?。！？;；` and newlines.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | ';' | '；' | '\n') {
            let end = i + c.len_utf8();
            out.push(&text[start..end]);
            start = end;
        }
    }
    out.push(&text[start..]);
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

fn is_question(sentence: &str) -> bool {
    sentence.ends_with('?') || sentence.ends_with('？') || sentence.ends_with('吗')
}

/// Candidates from the new user messages, at most one per sentence.
pub fn judge<'a>(new_messages: impl IntoIterator<Item = &'a MemoryEntry>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for m in new_messages.into_iter().filter(|m| m.role == Role::User) {
        for sentence in sentences(&m.content) {
            if is_question(sentence) {
                continue;
            }
            let lower = sentence.to_lowercase();
            // "I'm" spelt with a typographic apostrophe is common on phones.
            let lower = lower.replace('\u{2019}', "'");
            let padded = format!(" {lower}");
            let hit = PATTERNS.iter().find(|(p, _)| {
                if p.is_ascii() {
                    padded.contains(&format!(" {p}"))
                } else {
                    lower.contains(p)
                }
            });
            if let Some(&(_, category)) = hit {
                let content = truncate_chars(
                    sentence.trim_end_matches(['.', '。', ';', '；', '!', '！']),
                    MAX_MEMORY_CHARS,
                );
                out.push(Candidate {
                    content,
                    category,
                    layer: Layer::User,
                    importance: match category {
                        Category::Profile => 0.8,
                        Category::Preference => 0.7,
                        Category::Task => 0.4,
                        _ => 0.5,
                    },
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Kind, Scope};

    fn msg(role: Role, text: &str) -> MemoryEntry {
        MemoryEntry::new(text, Kind::Conversation, role, Scope::Session, 0)
    }

    #[test]
    fn finds_first_person_facts_in_user_messages() {
        let msgs = [
            msg(Role::User, "Hi! My name is Ada. I prefer Rust for backend work. What's the weather?"),
            msg(Role::Assistant, "I like helping. My name is Bot."),
            msg(Role::User, "Do I like tea? Okay thanks."),
            msg(Role::User, "Remember that my flight is on May 3rd"),
        ];
        let c = judge(&msgs);
        let contents: Vec<&str> = c.iter().map(|c| c.content.as_str()).collect();
        assert_eq!(
            contents,
            ["My name is Ada", "I prefer Rust for backend work", "Remember that my flight is on May 3rd"]
        );
        assert_eq!(c[0].category, Category::Profile);
        assert_eq!(c[1].category, Category::Preference);
    }

    #[test]
    fn finds_chinese_statements_and_skips_questions() {
        let msgs = [msg(Role::User, "我喜欢用 Rust 写代码。我叫小王！你喜欢什么语言吗？今天天气不错")];
        let c = judge(&msgs);
        let contents: Vec<&str> = c.iter().map(|c| c.content.as_str()).collect();
        assert_eq!(contents, ["我喜欢用 Rust 写代码", "我叫小王"]);
    }

    #[test]
    fn words_inside_other_words_do_not_match() {
        // "hi like" is not "i like".
        assert!(judge(&[msg(Role::User, "Chi likes tea and Phi loves coffee")]).is_empty());
    }
}
