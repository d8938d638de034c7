//! The sessions a namespace holds, as a chat list shows them: a second
//! device that synced with `sessions: true` holds the first one's chats
//! but knows none of their ids, so it asks here, then opens the one the
//! person picks.
//!
//! One pass over the session records (in parts, as the store reads them),
//! with nothing kept beyond one small summary per session: a list call
//! costs a read of the sessions, never a write. A session left with no
//! message and no summary (deleted: only its id-only markers stay, or a
//! writer's count) is not listed.

use serde::Serialize;

use crate::entry::{MemoryEntry, Role};
use crate::error::Result;
use crate::store::layout::{is_message_key, is_summary_key, SESSIONS_PREFIX};
use crate::store::{damage, DamageLog, Store};

/// The longest preview, in characters.
pub const PREVIEW_CHARS: usize = 80;

/// One session of the namespace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SessionInfo {
    /// The id to open it with (a sub-agent's `agent:<id>` writes into its
    /// parent's, listed under the parent's id).
    pub session_id: String,
    /// Messages stored (a summary covers some of them once it is made).
    pub messages: u32,
    /// Whether a summary stands for its older messages.
    pub summarized: bool,
    /// The oldest stored message's (or summary's) time, ms since the epoch.
    pub first_at: i64,
    /// The newest stored message's (or summary's) time: the list's order.
    pub last_at: i64,
    /// The first stored user message, cut to 80 characters (absent when
    /// none is stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
}

/// Every session with a message or a summary stored, the most recently
/// active first (ties by id). Damaged records are skipped and reported.
pub async fn list(store: &dyn Store, damage: &DamageLog) -> Result<Vec<SessionInfo>> {
    // By id; with each the position key of its preview, so parts arriving
    // in any order still give the first stored user message.
    let mut seen: Vec<(SessionInfo, String)> = Vec::new();
    let mut take = |part: Vec<(String, String)>| {
        for (key, value) in part {
            let message = is_message_key(&key);
            if !message && !is_summary_key(&key) {
                continue;
            }
            let Some(id) = key[SESSIONS_PREFIX.len()..].split('/').next() else { continue };
            let Some(entry) = damage::parse::<MemoryEntry>(damage, &key, &value) else { continue };
            let at = match seen.binary_search_by(|(s, _)| s.session_id.as_str().cmp(id)) {
                Ok(at) => at,
                Err(at) => {
                    let info = SessionInfo {
                        session_id: id.to_string(),
                        messages: 0,
                        summarized: false,
                        first_at: entry.timestamp,
                        last_at: entry.timestamp,
                        preview: None,
                    };
                    seen.insert(at, (info, String::new()));
                    at
                }
            };
            let (info, preview_at) = &mut seen[at];
            info.first_at = info.first_at.min(entry.timestamp);
            info.last_at = info.last_at.max(entry.timestamp);
            if !message {
                info.summarized = true;
                continue;
            }
            info.messages += 1;
            if entry.role == Role::User && (info.preview.is_none() || key < *preview_at) {
                info.preview = Some(entry.content.chars().take(PREVIEW_CHARS).collect());
                *preview_at = key;
            }
        }
    };
    store.scan(SESSIONS_PREFIX, &mut take).await?;
    let mut sessions: Vec<SessionInfo> = seen.into_iter().map(|(info, _)| info).collect();
    crate::order::sort_by(&mut sessions, |a, b| {
        b.last_at.cmp(&a.last_at).then_with(|| a.session_id.cmp(&b.session_id))
    });
    Ok(sessions)
}
