//! Rule extraction: long-term memories from a conversation without a
//! model. The session-end fallback when the model fails or is absent, and
//! what an offline or privacy-first app runs instead of one.
//!
//! Each sentence of the user's messages ([`sentences`]) that is not a
//! question is scored from simple signals ([`signals`]); those at or above
//! [`THRESHOLD`] become memories: small talk trimmed from their start,
//! relative dates resolved against the message's time ([`dates`]), the
//! first person made third ([`person`]), each with the id of the message it
//! came from (`sources`). Repeats are left to the dedup on write.
//! `npm run bench:extract` scores it on LoCoMo's observations.

pub mod dates;
pub mod person;
pub mod sentences;
pub mod signals;

use serde::{Deserialize, Serialize};

use crate::entry::{Category, Role, MAX_MEMORY_CHARS};
use crate::error::{Error, Result};
use crate::text::truncate_chars;
use sentences::{is_question, sentences};

/// Sentences scoring at least this are kept: on the dev split, where
/// evidence recall and precision cross 0.75 and 0.70.
pub const THRESHOLD: f64 = -0.33;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn<'a> {
    pub id: &'a str,
    pub role: Role,
    pub content: &'a str,
    pub timestamp: i64,
    /// Whether to extract from it (a user message not yet processed); the
    /// others are context.
    pub new: bool,
}

/// A message as a host hands it to [`extract_messages`]
/// (`extractMemories` in JS); an entry of `sessionHistory()` is read for
/// these fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ExtractMessage {
    /// Default: its index in the conversation.
    #[serde(default)]
    pub id: Option<String>,
    pub role: Role,
    pub content: String,
    /// ms since the epoch: what "yesterday" is resolved against; default now.
    #[serde(default)]
    pub timestamp: Option<i64>,
}

/// A memory drawn by rule from the user's messages, with the ids of its
/// messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ExtractedMemory"))]
pub struct Extracted {
    pub content: String,
    /// The ids of the messages it was drawn from.
    pub sources: Vec<String>,
    pub category: Category,
    /// 0.3 to 0.9, from the score.
    pub importance: f32,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExtractOptions {
    /// Who the memories are about; default "User" ("用户" in Chinese).
    pub user_name: Option<String>,
    /// Keep sentences scoring at least this; default -0.33 (lower keeps more).
    pub threshold: f64,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions { user_name: None, threshold: THRESHOLD }
    }
}

/// [`extract`] over a conversation as a host hands it: every user message
/// is new; a message without an id is named by its index, one without a
/// time was said at `now_ms`. The threshold must be a finite number.
pub fn extract_messages(
    messages: &[ExtractMessage],
    options: &ExtractOptions,
    now_ms: i64,
) -> Result<Vec<Extracted>> {
    if !options.threshold.is_finite() {
        return Err(Error::invalid("threshold must be a finite number"));
    }
    let ids: Vec<String> =
        messages.iter().enumerate().map(|(i, m)| m.id.clone().unwrap_or_else(|| i.to_string())).collect();
    let turns: Vec<Turn> = messages
        .iter()
        .zip(&ids)
        .map(|(m, id)| Turn {
            id,
            role: m.role,
            content: &m.content,
            timestamp: m.timestamp.unwrap_or(now_ms),
            new: true,
        })
        .collect();
    Ok(extract(&turns, options))
}

fn category(text: &str) -> Category {
    let lower = format!(" {} ", text.to_lowercase().replace('\u{2019}', "'"));
    let any = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if any(&[
        " my name ",
        " call me ",
        " i'm a ",
        " i am a ",
        " i work ",
        " i live ",
        " i'm from ",
        " allergic",
        " my wife",
        " my husband",
        " my son",
        " my daughter",
        " my kids",
        " my mom",
        " my dad",
        "我叫",
        "我是",
        "我住",
        "过敏",
        "老家",
        "我的妈妈",
        "我妈",
        "我儿子",
        "我女儿",
        "我老婆",
        "我老公",
    ]) {
        Category::Profile
    } else if any(&[
        " like ",
        " love ",
        " prefer",
        " enjoy",
        " hate ",
        " favorite",
        " favourite",
        " into ",
        "喜欢",
        "爱",
        "讨厌",
        "偏好",
        "习惯",
    ]) {
        Category::Preference
    } else if any(&[
        " plan",
        " training for",
        " going to ",
        " gonna ",
        " will ",
        " want to ",
        " hope to ",
        " goal",
        "打算",
        "计划",
        "准备",
        "想要",
        "目标",
        "下个月",
        "明年",
    ]) {
        Category::Task
    } else {
        Category::Fact
    }
}

/// The memories of the new user messages of `turns`, in order.
pub fn extract(turns: &[Turn], options: &ExtractOptions) -> Vec<Extracted> {
    let mut out = Vec::new();
    for (k, turn) in turns.iter().enumerate() {
        if !turn.new || turn.role != Role::User {
            continue;
        }
        let previous = k.checked_sub(1).map_or("", |p| turns[p].content);
        let next = turns.get(k + 1).map_or("", |n| n.content);
        for (index, sentence) in sentences(turn.content).into_iter().enumerate() {
            if is_question(sentence) || too_short(sentence, turn.timestamp) {
                continue;
            }
            let context = signals::Context { sentence, index, message: turn.content, previous, next };
            let score = signals::score(&context);
            if score < options.threshold {
                continue;
            }
            let body = sentence[signals::small_talk_prefix(sentence)..].trim();
            let body = &body[signals::request_prefix(body)..];
            let body = body.trim_end_matches(['.', '。', ';', '；', '!', '！', ' ']);
            let resolved = dates::resolve(body, turn.timestamp);
            let zh = resolved.chars().any(crate::script::is_cjk_letter);
            let name =
                options.user_name.clone().unwrap_or_else(|| if zh { "用户" } else { "User" }.to_string());
            let third = person::chinese(&person::english(&resolved, &name), &name);
            let importance = (0.3 + 0.6 / (1.0 + (-score).exp())) as f32;
            out.push(Extracted {
                content: truncate_chars(&capitalized(&third), MAX_MEMORY_CHARS),
                sources: vec![turn.id.to_string()],
                category: category(sentence),
                importance,
            });
        }
    }
    out
}

/// Fewer than 4 words (or 5 CJK characters) say too little to keep, but
/// for three words with a date ("I went yesterday": an event, dated).
fn too_short(sentence: &str, said_at: i64) -> bool {
    let cjk = sentence.chars().filter(|&c| crate::script::is_cjk_letter(c)).count();
    if cjk > 0 {
        return cjk < 5;
    }
    match sentence.split_whitespace().count() {
        0..=2 => true,
        3 => dates::resolve(sentence, said_at) == sentence,
        _ => false,
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn<'a>(id: &'a str, role: Role, content: &'a str) -> Turn<'a> {
        // 2023-05-08, a Monday.
        Turn { id, role, content, timestamp: 1_683_554_160_000, new: true }
    }

    #[test]
    fn facts_in_the_third_person_with_their_source_and_date() {
        let turns = [
            turn("m1", Role::Assistant, "Hey Caroline! What's up with you? Anything new?"),
            turn(
                "m2",
                Role::User,
                "I went to a LGBTQ support group yesterday and it was so powerful. What about you?",
            ),
            turn("m3", Role::Assistant, "Wow, that's cool! What happened?"),
            turn("m4", Role::User, "Thanks!"),
        ];
        let got = extract(&turns, &ExtractOptions::default());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].content, "User went to a LGBTQ support group on 7 May 2023 and it was so powerful");
        assert_eq!(got[0].sources, ["m2"]);
        let named = ExtractOptions { user_name: Some("Caroline".into()), ..Default::default() };
        assert!(extract(&turns, &named)[0].content.starts_with("Caroline went"));
    }

    #[test]
    fn assistant_messages_old_messages_questions_and_small_talk_give_nothing() {
        let mut old =
            turn("m2", Role::User, "I have two cats and a dog at home, all rescued from a shelter.");
        old.new = false;
        let turns = [
            turn("m1", Role::Assistant, "I love helping people with their code every day."),
            old,
            turn("m3", Role::User, "Do you like cats? Haha, yes!"),
        ];
        assert!(extract(&turns, &ExtractOptions::default()).is_empty());
    }

    /// One everyday statement, said on 8 May 2023: its one memory and category.
    fn one(text: &str) -> (String, Category) {
        let got = extract(&[turn("m", Role::User, text)], &ExtractOptions::default());
        assert_eq!(got.len(), 1, "{text}: {got:?}");
        (got[0].content.clone(), got[0].category)
    }

    #[test]
    fn pets_and_their_names() {
        assert_eq!(one("My dog is called Pixel.").0, "User's dog is called Pixel");
        assert_eq!(one("I have a dog called Pixel.").0, "User has a dog called Pixel");
        assert_eq!(one("My cat's name is Miso.").0, "User's cat's name is Miso");
        assert_eq!(
            one("I have a golden retriever called Biscuit").0,
            "User has a golden retriever called Biscuit"
        );
        assert_eq!(one("我的狗叫豆豆。").0, "用户的狗叫豆豆");
        assert_eq!(one("我养了一只猫，名字叫咪咪。").0, "用户养了一只猫，名字叫咪咪");
    }

    #[test]
    fn plans_and_dated_events() {
        assert_eq!(
            one("I am training for the Berlin marathon in September."),
            ("User is training for the Berlin marathon in September".into(), Category::Task)
        );
        assert_eq!(one("I went yesterday").0, "User went on 7 May 2023");
        assert_eq!(one("I went hiking with my sister.").0, "User went hiking with their sister");
        assert_eq!(
            one("我在准备九月份的柏林马拉松。"),
            ("用户在准备九月份的柏林马拉松".into(), Category::Task)
        );
        assert_eq!(one("我昨天和姐姐去爬山了。").0, "用户2023年5月7日和姐姐去爬山了");
        // Two words say too little, dated or not.
        assert!(extract(&[turn("m", Role::User, "Went yesterday")], &ExtractOptions::default()).is_empty());
    }

    #[test]
    fn short_statements_about_ones_own_life_are_kept() {
        // Owned parts of a life the everyday lexicon knows: family, dates,
        // health, home, pets; "we" and "our" for the household.
        for (said, kept) in [
            ("My husband Tom is a firefighter.", "User's husband Tom is a firefighter"),
            ("My birthday is 3 July.", "User's birthday is 3 July"),
            (
                "We live in a terraced house in Bristol.",
                "User and their family live in a terraced house in Bristol",
            ),
            ("Our spaniel Rolo hates the rain.", "User's spaniel Rolo hates the rain"),
            ("我外公是退休的木匠。", "用户外公是退休的木匠"),
            ("我的血型是A型。", "用户的血型是A型"),
            ("我家乡在四川。", "用户家乡在四川"),
            ("我们家的狗叫豆豆。", "用户和家人朋友家的狗叫豆豆"),
            ("We've got a spaniel called Rolo.", "User and their family have got a spaniel called Rolo"),
        ] {
            assert_eq!(one(said).0, kept);
        }
        // Not owned, or not a part of a life: still nothing. "We" alone is
        // as often the user and the assistant; a verb is not owned.
        for said in [
            "My goodness, what a day.",
            "Oh my god, the dog ran off.",
            "我觉得今天有点冷。",
            "我吃过了，不饿。",
            "We should talk more often.",
            "We need to move on.",
            "We can work on the essay later.",
        ] {
            assert!(extract(&[turn("m", Role::User, said)], &ExtractOptions::default()).is_empty(), "{said}");
        }
    }

    #[test]
    fn two_facts_in_one_sentence_read_as_a_person_writes_them() {
        assert_eq!(
            one("I live in Berlin and work as a nurse.").0,
            "User lives in Berlin and works as a nurse"
        );
        assert_eq!(
            one("My name is Ada and I'm allergic to peanuts.").0,
            "User's name is Ada and they are allergic to peanuts"
        );
        assert_eq!(
            one("I live in Lisbon and I work as a pastry chef.").0,
            "User lives in Lisbon and they work as a pastry chef"
        );
        assert_eq!(one("我住在柏林，是一名护士。").0, "用户住在柏林，是一名护士");
        assert_eq!(one("我最喜欢的食物是饺子").0, "用户最喜欢的食物是饺子");
    }

    #[test]
    fn chinese_and_explicit_requests() {
        let turns = [
            turn("a", Role::Assistant, "你最近怎么样？"),
            turn("b", Role::User, "我上个月开始学做川菜了，每个周末都在家练习麻婆豆腐。"),
            turn("c", Role::User, "Remember that my flight is on May 3rd."),
        ];
        let got = extract(&turns, &ExtractOptions::default());
        let contents: Vec<&str> = got.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(
            contents,
            ["用户2023年4月开始学做川菜了，每个周末都在家练习麻婆豆腐", "User's flight is on May 3rd"]
        );
        assert_eq!(got[0].sources, ["b"]);
        assert_eq!(got[1].category, Category::Fact);
    }

    #[test]
    fn a_host_conversation_names_its_messages_by_index_and_dates_them_now() {
        let messages: Vec<ExtractMessage> = serde_json::from_str(
            r#"[{"role":"assistant","content":"Hi! Anything new?"},
                {"role":"user","content":"I adopted a cat named Miso yesterday."},
                {"id":"m9","role":"user","content":"My name is Ada and I work as a nurse.","timestamp":1683554160000}]"#,
        )
        .unwrap();
        // 2023-05-09 as "now": yesterday was the 8th.
        let out = extract_messages(&messages, &ExtractOptions::default(), 1_683_640_560_000).unwrap();
        let sources: Vec<&str> = out.iter().flat_map(|e| e.sources.iter().map(String::as_str)).collect();
        assert_eq!(sources, ["1", "m9"], "{out:?}");
        assert!(out[0].content.contains("2023"), "{}", out[0].content);
        let json = serde_json::to_value(&out[0]).unwrap();
        assert!(json["category"].is_string() && json["importance"].is_number(), "{json}");
        let options: ExtractOptions = serde_json::from_str(r#"{"userName":"Ada"}"#).unwrap();
        assert_eq!((options.user_name.as_deref(), options.threshold), (Some("Ada"), THRESHOLD));
        assert!(serde_json::from_str::<ExtractOptions>(r#"{"treshold":1}"#).is_err());
        assert!(serde_json::from_str::<ExtractMessage>(r#"{"role":"user","content":"x","kind":"message"}"#)
            .is_err());
        let nan = ExtractOptions { threshold: f64::NAN, ..Default::default() };
        assert_eq!(
            extract_messages(&messages, &nan, 0).unwrap_err().code,
            crate::error::ErrorCode::InvalidInput
        );
    }
}
