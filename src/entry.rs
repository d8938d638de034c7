//! The unit of memory: one message, fact, summary or tool result, with the
//! time it was created (for time decay), where it belongs (scope), and its
//! token counts (so budgets never recount it).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::tokens::{estimate_tokens, TokenizerId};

/// What a memory is. Tool results are their own kind because they are long
/// and compress aggressively, yet retrieval still needs to know what ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Kind {
    Conversation,
    Fact,
    Summary,
    ToolResult,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Conversation => "conversation",
            Kind::Fact => "fact",
            Kind::Summary => "summary",
            Kind::ToolResult => "tool_result",
        }
    }
}

/// Who said it, in OpenAI chat terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl FromStr for Role {
    type Err = Error;
    fn from_str(s: &str) -> Result<Role> {
        match s {
            "system" => Ok(Role::System),
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            "tool" => Ok(Role::Tool),
            other => Err(Error::invalid(format!(
                "unknown role {other:?}: expected system, user, assistant or tool"
            ))),
        }
    }
}

/// The layer a memory lives in (the enterprise design's four layers, less
/// working memory, which is never stored): the current session, the user
/// (shared by every agent), or one agent's own experience.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Session,
    User,
    Agent(String),
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Session => f.write_str("session"),
            Scope::User => f.write_str("user"),
            Scope::Agent(id) => write!(f, "agent:{id}"),
        }
    }
}

impl FromStr for Scope {
    type Err = Error;
    fn from_str(s: &str) -> Result<Scope> {
        match s {
            "session" => Ok(Scope::Session),
            "user" => Ok(Scope::User),
            _ => match s.strip_prefix("agent:") {
                Some(id) if !id.is_empty() => {
                    validate_name("agent id", id)?;
                    Ok(Scope::Agent(id.to_string()))
                }
                _ => Err(Error::invalid(format!(
                    "unknown scope {s:?}: expected \"session\", \"user\" or \"agent:<id>\""
                ))),
            },
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Scope, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(|e: Error| serde::de::Error::custom(e.message))
    }
}

/// A function call requested by the assistant (OpenAI `tool_calls[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Token counts of one entry, one slot per tokenizer, so switching tokenizer
/// recounts once and windowing never recounts at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TokenCounts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cl100k: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub o200k: Option<u32>,
}

impl TokenCounts {
    pub fn get(&self, id: TokenizerId) -> Option<u32> {
        match id {
            TokenizerId::Estimate => self.estimate,
            TokenizerId::Cl100k => self.cl100k,
            TokenizerId::O200k => self.o200k,
        }
    }

    pub fn set(&mut self, id: TokenizerId, n: u32) {
        match id {
            TokenizerId::Estimate => self.estimate = Some(n),
            TokenizerId::Cl100k => self.cl100k = Some(n),
            TokenizerId::O200k => self.o200k = Some(n),
        }
    }
}

/// Whether a memory is true until changed (a state: where the user lives,
/// how many kids they have) or happened at a time (an event: a hike on 3
/// May). A state supersedes the same subject's earlier state; an event
/// never supersedes another event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Temporal {
    State,
    Event,
}

/// What kind of information a memory holds (the judge prompt's five), as
/// session end records it in `metadata.category`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Category {
    Profile,
    Preference,
    Fact,
    Task,
    Experience,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Profile => "profile",
            Category::Preference => "preference",
            Category::Fact => "fact",
            Category::Task => "task",
            Category::Experience => "experience",
        }
    }
}

/// Longest memory session end stores, in characters (seed 002), whether
/// the judge or the rules drew it.
pub const MAX_MEMORY_CHARS: usize = 200;

/// One memory. Timestamps are milliseconds since the Unix epoch, kept exactly
/// as created (also across reloads): overwriting them with "now" would make
/// time decay treat old memories as fresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct MemoryEntry {
    /// UUID v7: time-ordered, so ids sort in creation order.
    pub id: String,
    pub content: String,
    pub kind: Kind,
    pub role: Role,
    pub scope: Scope,
    /// Milliseconds since the Unix epoch, kept exactly as created.
    pub timestamp: i64,
    /// The host's own fields, and a few the library reads: `category`
    /// (from session end) and [`ALIASES`].
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// 0.0 to 1.0; how much this memory should weigh in retrieval.
    #[serde(default = "default_importance")]
    pub importance: f32,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub tokens: TokenCounts,
    /// The memory that replaced this one (conflicts are versions, not deletions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// When this memory stopped being valid (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<i64>,
    /// The ids of the messages a memory was drawn from (its provenance):
    /// set by session end, kept through supersede, so that forgetting a
    /// message can find what came from it.
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// State or event; absent on messages and on memories of earlier
    /// releases, which read as states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporal: Option<Temporal>,
    /// When it became true in the world (ms): the date an event's text
    /// names; absent: when it was said (`timestamp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<i64>,
}

fn default_importance() -> f32 {
    0.5
}

/// The latest timestamp a memory may carry: the end of year 9999 (ms).
/// The metadata key of a long-term memory's aliases: comma-separated
/// words to find it by that its text does not hold ("dog, pet, 狗" for
/// "Has a golden retriever called Biscuit"), indexed beside the text. The
/// judge writes them; a host may too.
pub const ALIASES: &str = "aliases";

pub const MAX_TIMESTAMP_MS: i64 = 253_402_300_799_999;

/// A memory as a host gives it (the JS binding, the component): everything
/// but `content` has a default.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct EntryInput {
    pub content: String,
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Default "user".
    #[serde(default)]
    pub role: Option<Role>,
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Milliseconds since the epoch; default now.
    #[serde(default)]
    pub timestamp: Option<f64>,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// 0 to 1; default 0.5.
    #[serde(default)]
    pub importance: Option<f32>,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    /// The ids of the messages it was drawn from.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Default: an event when the text names a date, else a state.
    #[serde(default)]
    pub temporal: Option<Temporal>,
    /// When it became true in the world (ms); default: the date an event names.
    #[serde(default)]
    pub valid_from: Option<f64>,
}

/// A time as a host's number gives it (JS has no integers): a whole,
/// non-negative number of milliseconds since the epoch, or an error naming
/// `what`. The range is checked where the time is used.
pub fn whole_ms(t: f64, what: &str) -> Result<i64> {
    if t.is_finite() && t >= 0.0 && t.fract() == 0.0 {
        Ok(t as i64)
    } else {
        Err(Error::invalid(format!("{what} must be a whole number of milliseconds since the epoch")))
    }
}

impl EntryInput {
    /// A long-term memory: scope `user` and kind `fact` unless given
    /// (`remember`, `supersede`, the component's memories).
    pub fn into_memory(self, now: i64) -> Result<MemoryEntry> {
        self.into_entry(now, Scope::User)
    }

    /// A conversation message of the session unless given (`createEntry`).
    pub fn into_message(self, now: i64) -> Result<MemoryEntry> {
        self.into_entry(now, Scope::Session)
    }

    /// Fills defaults (a user message, now; `default_scope`, and a kind to
    /// match it) and validates the result.
    fn into_entry(self, now: i64, default_scope: Scope) -> Result<MemoryEntry> {
        let timestamp = self.timestamp.map_or(Ok(now), |t| whole_ms(t, "timestamp"))?;
        let valid_from = self.valid_from.map(|t| whole_ms(t, "validFrom")).transpose()?;
        let role = self.role.unwrap_or(Role::User);
        let kind = self.kind.unwrap_or(match (role, &default_scope) {
            (Role::Tool, _) => Kind::ToolResult,
            (_, Scope::Session) => Kind::Conversation,
            _ => Kind::Fact,
        });
        let mut tokens = TokenCounts::default();
        let entry = MemoryEntry {
            id: new_id(timestamp),
            content: self.content,
            kind,
            role,
            scope: self.scope.unwrap_or(default_scope),
            timestamp,
            metadata: self.metadata,
            importance: self.importance.unwrap_or(0.5),
            tool_calls: self.tool_calls,
            tool_call_id: self.tool_call_id,
            tokens,
            superseded_by: None,
            valid_to: None,
            sources: self.sources,
            temporal: self.temporal,
            valid_from,
        };
        entry.validate()?;
        tokens.set(TokenizerId::Estimate, estimate_tokens(&entry.countable_text()) as u32);
        Ok(MemoryEntry { tokens, ..entry })
    }
}

/// Makes a UUID v7 for a memory created at `timestamp_ms`. The time part
/// comes from the injected clock, not the system's, so tests are exact; a
/// counter keeps ids made in the same millisecond increasing, so sorting by
/// id is creation order (a superseding memory sorts after what it replaced).
pub fn new_id(timestamp_ms: i64) -> String {
    new_uuid(timestamp_ms).to_string()
}

/// [`new_id`]'s UUID, before it is written as text.
fn new_uuid(timestamp_ms: i64) -> uuid::Uuid {
    thread_local! {
        static CONTEXT: uuid::ContextV7 = const { uuid::ContextV7::new() };
    }
    let ms = timestamp_ms.max(0) as u64;
    CONTEXT.with(|ctx| {
        let ts = uuid::Timestamp::from_unix(ctx, ms / 1000, ((ms % 1000) * 1_000_000) as u32);
        uuid::Uuid::new_v7(ts)
    })
}

/// 64 random bits, never 0: the random part of a fresh UUID v7 (the
/// crate's one source of randomness). Taken from the UUID itself, not
/// parsed back from its text: no UUID parser in the wasm.
pub fn random_u64(now_ms: i64) -> u64 {
    (new_uuid(now_ms).as_u128() as u64).max(1)
}

/// Longest id a memory or message may have.
pub const MAX_ID_LEN: usize = 128;

/// An entry id: 1 to 128 characters from A-Z a-z 0-9 `-` `_` `.` `:`, the
/// alphabet of the UUIDs the library makes and of the ids chat frameworks
/// give messages. The id is part of the record's key, so it must never
/// spell a path (`a/b`, `../x`) or another kind of record (`~batch/...`).
pub fn validate_id(id: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
    if id.is_empty() || id.len() > MAX_ID_LEN || !id.chars().all(allowed) {
        let shown: String = id.chars().take(40).collect();
        return Err(Error::invalid(format!(
            "entry id {shown:?} must be 1 to {MAX_ID_LEN} characters from A-Z a-z 0-9 - _ . :"
        )));
    }
    Ok(())
}

/// A session or agent id is text the host chose: any characters but
/// control characters and U+FFFD, which is what a lone surrogate becomes on
/// the way in from JavaScript (so `s\uD800` and `s\uDBFF` would otherwise
/// name one session).
pub fn validate_name(what: &str, id: &str) -> Result<()> {
    if id.chars().any(|c| c == char::REPLACEMENT_CHARACTER || c.is_control()) {
        return Err(Error::invalid(format!(
            "{what} {id:?} is not well-formed text: no lone surrogates, U+FFFD or control characters"
        )));
    }
    Ok(())
}

impl MemoryEntry {
    /// Provenance accumulates: a memory that replaces others stands for
    /// what they were drawn from too.
    pub fn add_sources(&mut self, sources: &[String]) {
        for source in sources {
            if !self.sources.contains(source) {
                self.sources.push(source.clone());
            }
        }
    }

    /// Oldest first, ties by id: the one order of listings and exports.
    pub fn by_time(a: &&MemoryEntry, b: &&MemoryEntry) -> std::cmp::Ordering {
        a.timestamp.cmp(&b.timestamp).then_with(|| a.id.cmp(&b.id))
    }

    /// What the user and the assistant said: no tool traffic, nothing empty.
    /// Session end extracts from these, and recall indexes them.
    pub fn is_chat(&self) -> bool {
        matches!(self.role, Role::User | Role::Assistant)
            && self.tool_calls.is_empty()
            && !self.content.trim().is_empty()
    }

    /// Counted afresh by `tok` alone: a count of an older text (before
    /// redaction) or by another tokenizer would be stale.
    pub fn count_with(&mut self, tok: &dyn crate::tokens::Tokenizer) {
        self.tokens = TokenCounts::default();
        self.tokens.set(tok.id(), u32::try_from(tok.count(&self.countable_text())).unwrap_or(u32::MAX));
    }

    /// A new entry with a fresh id; validates what a caller could get wrong.
    pub fn new(content: impl Into<String>, kind: Kind, role: Role, scope: Scope, timestamp: i64) -> Self {
        MemoryEntry {
            id: new_id(timestamp),
            content: content.into(),
            kind,
            role,
            scope,
            timestamp,
            metadata: BTreeMap::new(),
            importance: default_importance(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tokens: TokenCounts::default(),
            superseded_by: None,
            valid_to: None,
            sources: Vec::new(),
            temporal: None,
            valid_from: None,
        }
    }

    /// Still in force: not superseded, not expired.
    pub fn is_valid(&self) -> bool {
        self.superseded_by.is_none() && self.valid_to.is_none()
    }

    /// When it became true in the world: `validFrom`, else when it was said.
    pub fn valid_since(&self) -> i64 {
        self.valid_from.unwrap_or(self.timestamp)
    }

    /// In force at `at` (ms): true from [`MemoryEntry::valid_since`] until
    /// it was superseded, undone or expired (`validTo`). An event, once it
    /// happened, stays known.
    pub fn in_force_at(&self, at: i64) -> bool {
        self.valid_since() <= at && self.valid_to.is_none_or(|to| to > at)
    }

    /// Checks the invariants a stored entry must hold. Called on everything
    /// that comes in from outside (JS, imports, storage).
    pub fn validate(&self) -> Result<()> {
        validate_id(&self.id)?;
        if !(0..=MAX_TIMESTAMP_MS).contains(&self.timestamp) {
            return Err(Error::invalid("timestamp must be ms since the epoch, from 1970 to 9999"));
        }
        if self.valid_from.is_some_and(|t| !(0..=MAX_TIMESTAMP_MS).contains(&t)) {
            return Err(Error::invalid("validFrom must be ms since the epoch, from 1970 to 9999"));
        }
        if !self.importance.is_finite() || !(0.0..=1.0).contains(&self.importance) {
            return Err(Error::invalid("importance must be a number from 0 to 1"));
        }
        if self.role == Role::Tool && self.tool_call_id.as_deref().is_none_or(str::is_empty) {
            return Err(Error::invalid("a tool message needs the toolCallId of the call it answers"));
        }
        if self.role != Role::Tool && self.tool_call_id.is_some() {
            return Err(Error::invalid("only tool messages carry a toolCallId"));
        }
        if self.role != Role::Assistant && !self.tool_calls.is_empty() {
            return Err(Error::invalid("only assistant messages carry toolCalls"));
        }
        for (i, call) in self.tool_calls.iter().enumerate() {
            if call.id.is_empty() || call.name.is_empty() {
                return Err(Error::invalid("every tool call needs an id and a name"));
            }
            // Results are matched to calls by id: a repeated one could only
            // ever be answered once, and the window would drop the call.
            if self.tool_calls[..i].iter().any(|c| c.id == call.id) {
                return Err(Error::invalid(format!(
                    "tool call id {:?} appears twice in one message",
                    call.id
                )));
            }
        }
        Ok(())
    }

    /// The text a tokenizer counts for this entry: the content plus, for
    /// assistant tool calls, the function names and arguments that the
    /// provider also bills.
    pub fn countable_text(&self) -> Cow<'_, str> {
        countable_text(&self.content, self.tool_calls.iter().map(|c| (&*c.name, &*c.arguments)))
    }
}

/// `content`, then `\n{name} {arguments}` per tool call.
pub fn countable_text<'a>(
    content: &'a str,
    calls: impl ExactSizeIterator<Item = (&'a str, &'a str)>,
) -> Cow<'a, str> {
    if calls.len() == 0 {
        return Cow::Borrowed(content);
    }
    let mut s = content.to_string();
    for (name, arguments) in calls {
        s.push('\n');
        s.push_str(name);
        s.push(' ');
        s.push_str(arguments);
    }
    Cow::Owned(s)
}

/// `Scope` has a serde form of its own ("session", "user", "agent:<id>"),
/// so its TypeScript is written here, beside it (feature `ts`).
#[cfg(feature = "ts")]
impl ts_rs::TS for Scope {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn docs() -> Option<String> {
        Some(ts_rs::format_docs(&[" \"session\", \"user\", or \"agent:<id>\"."]))
    }

    fn name(_: &ts_rs::Config) -> String {
        "Scope".into()
    }

    fn inline(_: &ts_rs::Config) -> String {
        "\"session\" | \"user\" | `agent:${string}`".into()
    }

    fn decl(cfg: &ts_rs::Config) -> String {
        format!("type Scope = {};", Self::inline(cfg))
    }

    fn decl_concrete(cfg: &ts_rs::Config) -> String {
        Self::decl(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_a_whole_non_negative_number_of_ms() {
        assert_eq!(whole_ms(1_700_000_000_000.0, "asOf").unwrap(), 1_700_000_000_000);
        for bad in [-1.0, 1.5, f64::NAN, f64::INFINITY] {
            let err = whole_ms(bad, "asOf").unwrap_err();
            assert_eq!(err.message, "asOf must be a whole number of milliseconds since the epoch", "{bad}");
        }
    }

    #[test]
    fn a_memory_defaults_to_a_user_fact_and_a_message_to_a_session_conversation() {
        let input = || serde_json::from_str::<EntryInput>(r#"{"content":"Lives in Lisbon"}"#).unwrap();
        let memory = input().into_memory(5).unwrap();
        assert_eq!((memory.scope, memory.kind, memory.timestamp), (Scope::User, Kind::Fact, 5));
        let message = input().into_message(5).unwrap();
        assert_eq!(
            (message.scope, message.kind, message.role),
            (Scope::Session, Kind::Conversation, Role::User)
        );
        let given =
            serde_json::from_str::<EntryInput>(r#"{"content":"x","scope":"agent:a","kind":"conversation"}"#);
        let given = given.unwrap().into_memory(5).unwrap();
        assert_eq!((given.scope, given.kind), (Scope::Agent("a".into()), Kind::Conversation));
    }

    #[test]
    fn ids_are_of_a_key_safe_alphabet_and_names_are_well_formed_text() {
        for ok in [new_id(0).as_str(), "u1", "msg_01:a-b.c", &"x".repeat(MAX_ID_LEN)] {
            assert!(validate_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "~batch/1-0", "a/b", "../x", "x\ny", "x\0y", "ü", " ", &"x".repeat(MAX_ID_LEN + 1)] {
            assert_eq!(validate_id(bad).unwrap_err().code, crate::error::ErrorCode::InvalidInput, "{bad:?}");
        }
        assert!(validate_name("session id", "会话 😀").is_ok());
        for bad in ["s\u{FFFD}", "s\0", "s\n"] {
            assert!(validate_name("session id", bad).is_err(), "{bad:?}");
        }
        assert!("agent:a\u{FFFD}".parse::<Scope>().is_err());
    }

    #[test]
    fn an_entry_from_outside_needs_a_timestamp_of_1970_to_9999_and_distinct_call_ids() {
        let mut e = MemoryEntry::new("x", Kind::Fact, Role::User, Scope::User, 0);
        assert!(e.validate().is_ok());
        for bad in [-1, MAX_TIMESTAMP_MS + 1, (1 << 53) - 1] {
            e.timestamp = bad;
            assert!(e.validate().is_err(), "{bad}");
        }
        let mut m = MemoryEntry::new("", Kind::Conversation, Role::Assistant, Scope::Session, 0);
        let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{}".into() };
        m.tool_calls = vec![call.clone(), call];
        assert!(m.validate().unwrap_err().message.contains("twice"));
    }

    #[test]
    fn ids_are_time_ordered_uuid_v7() {
        let a = new_id(1_700_000_000_000);
        let b = new_id(1_700_000_000_001);
        let c = new_id(1_800_000_000_000);
        assert!(a < b && b < c, "{a} {b} {c}");
        let parsed = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
    }

    #[test]
    fn random_bits_are_the_low_half_of_a_fresh_uuid() {
        let u = new_uuid(1_700_000_000_000);
        // What random_u64 took before: the id's text parsed back.
        let parsed = uuid::Uuid::parse_str(&u.to_string()).unwrap();
        assert_eq!((parsed.as_u128() as u64).max(1), (u.as_u128() as u64).max(1));
        let (a, b) = (random_u64(1_700_000_000_000), random_u64(1_700_000_000_000));
        assert!(a != 0 && b != 0 && a != b);
    }

    #[test]
    fn ids_made_in_one_millisecond_still_increase() {
        let ids: Vec<String> = (0..1000).map(|_| new_id(1_700_000_000_000)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn scope_round_trips_through_strings() {
        for s in ["session", "user", "agent:planner"] {
            let scope: Scope = s.parse().unwrap();
            assert_eq!(scope.to_string(), s);
        }
        assert!("agent:".parse::<Scope>().is_err());
        assert!("team".parse::<Scope>().is_err());
    }

    #[test]
    fn serde_keeps_timestamp_and_uses_camel_case() {
        let mut e = MemoryEntry::new("我喜欢用 Rust", Kind::Fact, Role::User, Scope::User, 1_234_567_890_123);
        e.metadata.insert("source".into(), "chat".into());
        e.tokens.set(TokenizerId::Estimate, 5);
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains("\"timestamp\":1234567890123"), "{json}");
        assert!(json.contains("\"kind\":\"fact\""));
        assert!(json.contains("\"scope\":\"user\""));
        let back: MemoryEntry = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn validation_rejects_orphan_tool_results_and_bad_importance() {
        let mut e = MemoryEntry::new("42", Kind::ToolResult, Role::Tool, Scope::Session, 0);
        assert!(e.validate().is_err());
        e.tool_call_id = Some("call_1".into());
        assert!(e.validate().is_ok());
        e.importance = f32::NAN;
        assert!(e.validate().is_err());
        let mut u = MemoryEntry::new("hi", Kind::Conversation, Role::User, Scope::Session, 0);
        u.tool_calls.push(ToolCall { id: "c".into(), name: "f".into(), arguments: "{}".into() });
        assert!(u.validate().is_err());
    }

    #[test]
    fn countable_text_includes_tool_call_arguments() {
        let mut e = MemoryEntry::new("", Kind::Conversation, Role::Assistant, Scope::Session, 0);
        e.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "get_weather".into(),
            arguments: "{\"city\":\"Paris\"}".into(),
        });
        assert!(e.countable_text().contains("get_weather {\"city\":\"Paris\"}"));
    }
}
