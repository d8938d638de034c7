//! Parsing what models answer. Models wrap JSON in code fences, add a
//! sentence after it, use strings for numbers, or leave fields out; the
//! parsers take what is usable and repair the rest (seed 002: fill defaults,
//! drop empty contents, cut each memory to 200 characters).

use serde_json::Value;

use crate::entry::{Category, Temporal, MAX_MEMORY_CHARS};
use crate::text::truncate_chars;

/// Memories one judge answer may add: a batch of conversation holds a few
/// dozen facts at most, and an answer listing thousands (a runaway or
/// hostile model) would hold the namespace lock while each is deduplicated.
pub const MAX_JUDGED_MEMORIES: usize = 64;

/// The category a model named, under any of the names models use for it.
fn category_named(s: &str) -> Option<Category> {
    Some(match s.trim().to_ascii_lowercase().as_str() {
        "profile" | "identity" | "personal" => Category::Profile,
        "preference" | "preferences" | "like" | "habit" => Category::Preference,
        "fact" | "facts" | "knowledge" | "event" => Category::Fact,
        "task" | "tasks" | "goal" | "plan" | "todo" => Category::Task,
        "experience" | "lesson" | "feedback" => Category::Experience,
        _ => return None,
    })
}

/// The middle of the prompt's importance range for a category, used when
/// the model gave none.
fn default_importance(category: Category) -> f32 {
    match category {
        Category::Profile => 0.8,
        Category::Preference => 0.7,
        Category::Fact => 0.5,
        Category::Task => 0.4,
        Category::Experience => 0.6,
    }
}

/// Which layer a candidate belongs to (the session layer is never a target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    User,
    Agent,
}

/// A memory the judge proposes.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub content: String,
    pub category: Category,
    pub layer: Layer,
    /// 0.0 to 1.0 (the prompt's 1-10 divided by 10).
    pub importance: f32,
    /// The ids of the messages it was drawn from.
    pub sources: Vec<String>,
    /// State or event, as the model said; `None`: the rules decide when
    /// it is stored.
    pub temporal: Option<Temporal>,
    /// Words to find it by that its text does not hold (the model's, at
    /// most [`MAX_ALIASES`], comma-separated): indexed beside the text.
    pub aliases: String,
}

/// At most this many aliases of a memory are kept, each cut to 40 characters.
pub const MAX_ALIASES: usize = 8;

/// How many opening brackets [`extract_json`] tries as the start of the
/// value. Each try scans to the end of the text, so trying every one made
/// a reply of brackets quadratic (64 KB of `[` took 1.8 s natively, longer
/// in a page, found by fuzzing); a real reply has its JSON within its
/// first few brackets, and past the cap the judge falls back to its rules.
const MAX_STARTS: usize = 32;

/// Where a JSON value may start: the first [`MAX_STARTS`] opening brackets.
fn candidate_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.match_indices(['{', '[']).map(|(i, _)| i).take(MAX_STARTS)
}

/// The first JSON value in `text`: the whole text, or the inside of a code
/// fence, or the first balanced `{…}` / `[…]` (strings and escapes
/// respected), so trailing prose is ignored.
pub fn extract_json(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(v) = serde_json::from_str(trimmed) {
        return Some(v);
    }
    let bytes = trimmed.as_bytes();
    for open in candidate_starts(trimmed) {
        if let Some(end) = balanced_end(&bytes[open..]) {
            if let Ok(v) = serde_json::from_str(&trimmed[open..open + end]) {
                return Some(v);
            }
        }
    }
    None
}

/// The length of the balanced bracket group at the start of `s`.
fn balanced_end(s: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, &b) in s.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A number, or a number written as a string (`"0.8"`), read as JSON reads
/// numbers: `str::parse::<f64>` would link a second float parser, 10 KB of
/// tables, into the wasm.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => serde_json::from_str(s.trim()).ok(),
        _ => None,
    }
}

/// Importance on the prompt's 1-10 scale to 0-1; a model that answered on
/// a 0-1 scale already is understood too.
fn importance(v: Option<&Value>, category: Category) -> f32 {
    match v.and_then(number).filter(|n| n.is_finite() && *n > 0.0) {
        Some(n) if n <= 1.0 => n as f32,
        Some(n) => (n.min(10.0) / 10.0) as f32,
        None => default_importance(category),
    }
}

/// The judge's answer: the repaired candidates (possibly none: the model
/// judged that nothing was worth keeping, as `[]` or an object with no list),
/// or why the answer is unusable, when the caller falls back to the rule
/// judge: no JSON, a list under another name than `memories` or `items`
/// (`{"facts": [...]}` read as "nothing" would mark the messages processed
/// and lose their facts for good), or a list of which no item has text.
/// `source` maps a message number the model cited to the id of a message
/// it was shown; numbers it was not shown are dropped.
pub fn parse_judge(
    text: &str,
    source: impl Fn(u64) -> Option<String>,
) -> std::result::Result<Vec<Candidate>, String> {
    let value = extract_json(text).ok_or("the judge's answer held no JSON")?;
    let items = match &value {
        Value::Array(items) => items,
        Value::Object(o) => match o.get("memories").or_else(|| o.get("items")) {
            Some(Value::Array(items)) => items,
            Some(Value::Null) | None if o.contains_key("content") => std::slice::from_ref(&value),
            Some(Value::Null) | None => match o.iter().find(|(_, v)| v.is_array()) {
                Some((k, _)) => {
                    return Err(format!("the judge listed memories under {k:?}, not \"memories\""))
                }
                None => return Ok(Vec::new()),
            },
            Some(_) => return Err("the judge's \"memories\" is not a list".into()),
        },
        _ => return Err("the judge's answer is neither a list nor an object".into()),
    };
    let candidates = items
        .iter()
        .filter_map(|item| {
            let (content, o) = match item {
                Value::String(s) => (s.as_str(), None),
                Value::Object(o) => (o.get("content").and_then(Value::as_str)?, Some(o)),
                _ => return None,
            };
            let content = truncate_chars(content, MAX_MEMORY_CHARS);
            if content.is_empty() {
                return None;
            }
            let field = |k: &str| o.and_then(|o| o.get(k));
            let category =
                field("category").and_then(Value::as_str).and_then(category_named).unwrap_or(Category::Fact);
            let layer = match field("scope").and_then(Value::as_str).map(|s| s.trim().to_ascii_lowercase()) {
                Some(s) if s == "agent" || s.starts_with("agent:") => Layer::Agent,
                Some(s) if s == "user" => Layer::User,
                _ if category == Category::Experience => Layer::Agent,
                _ => Layer::User,
            };
            let mut sources: Vec<String> = Vec::new();
            let cited = match field("sources") {
                Some(Value::Array(items)) => items.clone(),
                Some(one) => vec![one.clone()],
                None => Vec::new(),
            };
            for n in cited {
                // 3, "3" and "#3" all name message #3.
                let n = n
                    .as_u64()
                    .or_else(|| n.as_str().and_then(|s| s.trim().trim_start_matches('#').parse().ok()));
                if let Some(id) = n.and_then(&source) {
                    if !sources.contains(&id) {
                        sources.push(id);
                    }
                }
            }
            let temporal = match field("kind").and_then(Value::as_str).map(str::trim) {
                Some(k) if k.eq_ignore_ascii_case("event") => Some(Temporal::Event),
                Some(k) if k.eq_ignore_ascii_case("state") => Some(Temporal::State),
                _ => None,
            };
            let mut aliases = String::new();
            if let Some(Value::Array(items)) = field("aliases") {
                for a in items.iter().filter_map(Value::as_str).take(MAX_ALIASES) {
                    let a = truncate_chars(&a.replace(',', " "), 40);
                    if !a.is_empty() {
                        if !aliases.is_empty() {
                            aliases.push_str(", ");
                        }
                        aliases.push_str(&a);
                    }
                }
            }
            Some(Candidate {
                content,
                category,
                layer,
                importance: importance(field("importance"), category),
                sources,
                temporal,
                aliases,
            })
        })
        .collect::<Vec<_>>();
    if candidates.is_empty() && !items.is_empty() {
        return Err(format!("none of the judge's {} items has text content", items.len()));
    }
    Ok(candidates)
}

/// What to do with one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Add,
    Skip,
    /// Replace the stored memories with these aliases.
    Supersede(Vec<String>),
}

/// The resolver's answer for `n` candidates. A candidate the answer does not
/// mention, or a `supersede` naming no id it was shown, is added: keeping
/// both versions loses nothing, deleting on a guess could. `None` when no
/// JSON could be read.
pub fn parse_resolve(
    text: &str,
    n: usize,
    known_alias: impl Fn(usize, &str) -> bool,
) -> Option<Vec<Decision>> {
    let value = extract_json(text)?;
    let items = match &value {
        Value::Array(items) => items.as_slice(),
        Value::Object(o) => match o.get("decisions") {
            Some(Value::Array(items)) => items.as_slice(),
            _ => return None,
        },
        _ => return None,
    };
    let mut out = vec![Decision::Add; n];
    for (pos, item) in items.iter().enumerate() {
        let Value::Object(o) = item else { continue };
        // 1-based as the prompt numbers them; position as a fallback.
        let index = match o.get("candidate").and_then(number) {
            Some(k) if k >= 1.0 && k.fract() == 0.0 => k as usize - 1,
            Some(_) => continue,
            None => pos,
        };
        if index >= n {
            continue;
        }
        let action = o.get("action").and_then(Value::as_str).unwrap_or("add").trim().to_ascii_lowercase();
        out[index] = match action.as_str() {
            "skip" | "duplicate" | "ignore" => Decision::Skip,
            "supersede" | "update" | "replace" => {
                let ids: Vec<String> = match o.get("ids").or_else(|| o.get("supersedes")) {
                    Some(Value::Array(ids)) => {
                        ids.iter().filter_map(Value::as_str).map(str::to_string).collect()
                    }
                    Some(Value::String(id)) => vec![id.clone()],
                    _ => Vec::new(),
                };
                let ids: Vec<String> = ids.into_iter().filter(|id| known_alias(index, id)).collect();
                if ids.is_empty() {
                    Decision::Add
                } else {
                    Decision::Supersede(ids)
                }
            }
            _ => Decision::Add,
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_of_brackets_is_tried_at_a_bounded_number_of_starts() {
        let brackets = "[".repeat(64_000);
        assert_eq!(candidate_starts(&brackets).count(), MAX_STARTS);
        assert_eq!(extract_json(&brackets), None);
        let after_stray = format!("{} {}", "[".repeat(5), r#"{"memories": []}"#);
        assert_eq!(extract_json(&after_stray), Some(serde_json::json!({ "memories": [] })));
    }

    #[test]
    fn reads_json_in_fences_and_before_trailing_text() {
        let v = extract_json("```json\n{\"memories\": []}\n```").unwrap();
        assert_eq!(v["memories"], Value::Array(vec![]));
        let v = extract_json("Sure! {\"a\": \"}{\", \"b\": [1]} Hope this helps {").unwrap();
        assert_eq!(v["a"], "}{");
        assert!(extract_json("no json here").is_none());
        assert!(extract_json("{\"unterminated\": ").is_none());
    }

    #[test]
    fn repairs_judge_answers() {
        let long = "x".repeat(250);
        let text = format!(
            r#"{{"memories": [
                {{"content": "  User prefers Rust  ", "category": "Preference", "scope": "user", "importance": "8", "aliases": ["language", "编程, 语言", 7, ""]}},
                {{"content": ""}},
                {{"content": "{long}"}},
                {{"content": "Answer briefly", "category": "experience"}},
                {{"content": "likes tea", "importance": 0.9, "category": "nonsense", "scope": "agent:x", "kind": "State"}},
                42,
                "User lives in Lyon"
            ]}} trailing words"#
        );
        let c = parse_judge(&text, |_| None).unwrap();
        assert_eq!(c.len(), 5);
        assert_eq!(
            c[0],
            Candidate {
                content: "User prefers Rust".into(),
                category: Category::Preference,
                layer: Layer::User,
                importance: 0.8,
                sources: vec![],
                temporal: None,
                aliases: "language, 编程  语言".into(),
            }
        );
        assert_eq!(c[1].content.chars().count(), MAX_MEMORY_CHARS);
        assert_eq!(c[3].temporal, Some(Temporal::State), "the kind the model gave, any case");
        assert_eq!((c[2].layer, c[2].importance), (Layer::Agent, 0.6));
        assert_eq!((c[3].category, c[3].layer, c[3].importance), (Category::Fact, Layer::Agent, 0.9));
        assert_eq!(c[4].content, "User lives in Lyon");
    }

    #[test]
    fn unusable_judge_answers_say_why_and_empty_lists_are_kept() {
        let cited = r##"{"memories": [{"content": "User is a nurse", "sources": [2, "#3", "9", 2]}]}"##;
        let shown = |n: u64| (n <= 3).then(|| format!("msg-{n}"));
        assert_eq!(
            parse_judge(cited, shown).unwrap()[0].sources,
            ["msg-2", "msg-3"],
            "unseen and repeated dropped"
        );
        for unusable in [
            "",
            "I could not find anything.",
            r#"{"memories": "none"}"#,
            r#"{"facts": [{"content": "User is a nurse"}]}"#,
            r#"[{"text": "User is a nurse"}, 42, {"content": 7}, {"content": "   "}]"#,
            r#"{"memories": [null, {"content": ["a"]}]}"#,
        ] {
            assert!(parse_judge(unusable, |_| None).is_err(), "{unusable}");
        }
        assert!(parse_judge(r#"{"facts": []}"#, |_| None).unwrap_err().contains("\"facts\""));
        assert_eq!(parse_judge(r#"{"memories": []}"#, |_| None), Ok(vec![]));
        assert_eq!(parse_judge("[]", |_| None), Ok(vec![]));
        assert_eq!(parse_judge(r#"{"result": "nothing"}"#, |_| None), Ok(vec![]));
        assert_eq!(
            parse_judge(r#"{"content": "User is a nurse", "category": "profile"}"#, |_| None).unwrap().len(),
            1
        );
    }

    #[test]
    fn resolve_decisions_default_to_add() {
        let known = |i: usize, id: &str| i == 1 && id == "m1";
        let text = r#"```json
        {"decisions": [
            {"candidate": 2, "action": "supersede", "ids": ["m1", "m9"]},
            {"candidate": 3, "action": "SKIP"},
            {"candidate": 9, "action": "skip"},
            {"candidate": 1, "action": "supersede", "ids": ["m1"]},
            {"candidate": 4, "action": "delete everything"}
        ]}
        ```"#;
        let d = parse_resolve(text, 4, known).unwrap();
        assert_eq!(
            d,
            vec![Decision::Add, Decision::Supersede(vec!["m1".into()]), Decision::Skip, Decision::Add]
        );
        assert!(parse_resolve("nope", 2, known).is_none());
    }
}
