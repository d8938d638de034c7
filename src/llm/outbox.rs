//! The durable outbox: session-end work that was asked for and has not
//! completed (the model was down, the tab closed mid-way, the token cap was
//! spent). The record is written before any model call and removed only
//! when everything is done, so the work is resumed when the memory next
//! opens or `endSession` runs again: the compensation the enterprise design
//! lists as missing. Resuming is safe because every step is idempotent
//! (processed-message hashes, dedup on write, summaries by position).
//!
//! Store layout: `outbox/<session>` → the record as JSON.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::Store;

const PREFIX: &str = "outbox/";

/// Work owed for one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxRecord {
    pub session_id: String,
    /// When the work was first asked for (ms since the epoch).
    pub since: i64,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

fn key(session_id: &str) -> String {
    format!("{PREFIX}{session_id}")
}

pub async fn get(store: &dyn Store, session_id: &str) -> Result<Option<OutboxRecord>> {
    match store.get(&key(session_id)).await? {
        Some(json) => serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| Error::storage(format!("malformed outbox record: {e}"))),
        None => Ok(None),
    }
}

pub async fn put(store: &dyn Store, record: &OutboxRecord) -> Result<()> {
    let json = serde_json::to_string(record).map_err(|e| Error::invalid(e.to_string()))?;
    store.put_many(vec![(key(&record.session_id), json)]).await
}

pub async fn clear(store: &dyn Store, session_id: &str) -> Result<()> {
    store.delete_many(vec![key(session_id)]).await
}

/// Every session with work owed in this namespace.
pub async fn list(store: &dyn Store) -> Result<Vec<OutboxRecord>> {
    store
        .list(PREFIX)
        .await?
        .into_iter()
        .map(|(_, json)| {
            serde_json::from_str(&json).map_err(|e| Error::storage(format!("malformed outbox record: {e}")))
        })
        .collect()
}
