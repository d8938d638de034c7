//! The TypeScript declarations of the values that cross the JS boundary,
//! generated from the serde types themselves (ts-rs reads their serde
//! attributes and doc comments), so the `.d.ts` cannot drift from what the
//! binding reads and writes. Native only, behind the `ts` feature: the
//! build-types generator calls it, the wasm never holds it.
//!
//! What TypeScript says beyond serde (hooks, the store adapter, classes,
//! JS-only fields) stays hand-written in `src/wasm/types.rs`; it refers to
//! these declarations by name and adds fields to them by declaration
//! merging (interfaces of one name merge).

use ts_rs::{Config, TS};

/// A type's declaration, exported. A struct becomes an interface, so the
/// hand-written declarations can add JS-only fields to it by merging; with
/// `all_optional` (an options type: serde fills every missing field with
/// its default) each of its fields is optional.
fn declare<T: TS>(cfg: &Config, all_optional: bool) -> String {
    let decl = T::decl(cfg);
    let docs = T::docs().unwrap_or_default();
    let name = T::ident(cfg);
    let body = decl.strip_prefix(&format!("type {name} = ")).and_then(|b| b.strip_suffix(';'));
    match body {
        Some(body) if !T::IS_ENUM && body.starts_with('{') && body.ends_with('}') => {
            let body = if all_optional { optional_fields(body) } else { body.to_string() };
            format!("{docs}export interface {name} {body}\n")
        }
        _ => format!("{docs}export {decl}\n"),
    }
}

/// `{ a: T, b: U, }` with every field optional: `{ a?: T, b?: U, }`. A
/// field starts where the body is at its own depth, after `{`, `,` or a doc
/// comment; nested object types, generics and strings are passed over.
/// (ts-rs writes no function types, whose `=>` this would misread.)
fn optional_fields(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 32);
    let (mut depth, mut in_string, mut in_comment, mut field_start) = (0, None, false, false);
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if in_comment {
            if c == '*' && chars.peek() == Some(&'/') {
                out.push(chars.next().unwrap_or('/'));
                in_comment = false;
            }
            continue;
        }
        if let Some(quote) = in_string {
            if c == quote {
                in_string = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => in_string = Some(c),
            '/' if chars.peek() == Some(&'*') => in_comment = true,
            '{' | '[' | '(' | '<' => {
                depth += 1;
                field_start = depth == 1;
            }
            '}' | ']' | ')' | '>' => depth -= 1,
            ',' if depth == 1 => field_start = true,
            ':' if depth == 1 && field_start => {
                out.insert(out.len() - 1, '?');
                field_start = false;
            }
            _ => {}
        }
    }
    out
}

/// The declarations, in one text for the package's `.d.ts`. The types
/// flattened into others (`RecordStats`, `LongTermStats`, `EmbedStats`)
/// derive `TS` for that, and are not declared on their own.
pub fn declarations() -> String {
    use crate::{
        budget, embed, entry, error, extract, llm, longterm, memory, redact, retrieval, store, sync, tokens,
        working,
    };
    let cfg = Config::new().with_large_int("number");
    [
        declare::<error::ErrorCode>(&cfg, false),
        declare::<tokens::TokenizerId>(&cfg, false),
        declare::<entry::Kind>(&cfg, false),
        declare::<entry::Role>(&cfg, false),
        declare::<entry::Scope>(&cfg, false),
        declare::<entry::Temporal>(&cfg, false),
        declare::<entry::ToolCall>(&cfg, false),
        declare::<entry::TokenCounts>(&cfg, false),
        declare::<entry::MemoryEntry>(&cfg, false),
        declare::<entry::EntryInput>(&cfg, false),
        declare::<entry::Category>(&cfg, false),
        declare::<budget::BudgetOptions>(&cfg, true),
        declare::<budget::Usage>(&cfg, false),
        declare::<budget::UsageReport>(&cfg, false),
        declare::<working::session::SessionOptions>(&cfg, true),
        declare::<working::session::NewMessage>(&cfg, false),
        declare::<working::session::ContextRequest>(&cfg, false),
        declare::<working::session::SessionUsage>(&cfg, false),
        declare::<working::prompt::PromptTurn>(&cfg, false),
        declare::<working::context::ContextReport>(&cfg, false),
        declare::<working::window::LeftOut>(&cfg, false),
        declare::<working::message::FunctionCall>(&cfg, false),
        declare::<working::message::OutToolCall>(&cfg, false),
        declare::<working::message::ChatMessage>(&cfg, false),
        declare::<llm::compress::CompressReport>(&cfg, false),
        declare::<llm::outbox::OutboxRecord>(&cfg, false),
        declare::<working::session::listing::SessionInfo>(&cfg, false),
        declare::<llm::governor::LlmOptions>(&cfg, true),
        declare::<llm::governor::PurposeStats>(&cfg, false),
        declare::<llm::governor::LlmStats>(&cfg, false),
        declare::<llm::consolidate::EndSessionReport>(&cfg, false),
        declare::<retrieval::Bm25Params>(&cfg, true),
        declare::<retrieval::DocInput>(&cfg, false),
        declare::<extract::ExtractMessage>(&cfg, false),
        declare::<extract::ExtractOptions>(&cfg, true),
        declare::<extract::Extracted>(&cfg, false),
        declare::<retrieval::Decay>(&cfg, false),
        declare::<retrieval::Fusion>(&cfg, false),
        declare::<retrieval::SearchOptions>(&cfg, true),
        declare::<retrieval::Explain>(&cfg, false),
        declare::<retrieval::Hit>(&cfg, false),
        declare::<retrieval::Origin>(&cfg, false),
        declare::<longterm::ExportDocument>(&cfg, false),
        declare::<longterm::ImportReport>(&cfg, false),
        declare::<longterm::dedup::DedupOptions>(&cfg, true),
        declare::<longterm::dedup::Similarity>(&cfg, false),
        declare::<longterm::dedup::Change>(&cfg, false),
        declare::<longterm::Remembered>(&cfg, false),
        declare::<store::sealed::EncryptionStats>(&cfg, false),
        declare::<store::sealed::SealedExport>(&cfg, false),
        declare::<store::damage::Damaged>(&cfg, false),
        declare::<embed::EmbedOptions>(&cfg, true),
        declare::<memory::SentEntries>(&cfg, false),
        declare::<memory::SyncOptions>(&cfg, true),
        declare::<memory::SyncStats>(&cfg, false),
        declare::<memory::AutoSyncOptions>(&cfg, true),
        declare::<sync::SyncReport>(&cfg, false),
        declare::<memory::MemoryStats>(&cfg, false),
        declare::<memory::EmbeddingStats>(&cfg, false),
        declare::<redact::RedactOptions>(&cfg, true),
        declare::<redact::RedactionStats>(&cfg, false),
    ]
    .concat()
}
