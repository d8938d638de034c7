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
use crate::store::layout::{outbox_key, OUTBOX_PREFIX};
use crate::store::{damage, DamageLog, Store};

/// Work owed for one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct OutboxRecord {
    pub session_id: String,
    /// When the work was first asked for (ms since the epoch).
    pub since: i64,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The work owed for a session. A damaged record still says work is owed:
/// it reads as a fresh record (resuming is idempotent) and is reported.
pub async fn get(store: &dyn Store, session_id: &str, log: &DamageLog) -> Result<Option<OutboxRecord>> {
    let key = outbox_key(session_id);
    Ok(store.get(&key).await?.map(|json| {
        damage::parse(log, &key, &json).unwrap_or(OutboxRecord {
            session_id: session_id.to_string(),
            since: 0,
            attempts: 0,
            last_error: Some("the outbox record was damaged".into()),
        })
    }))
}

pub async fn put(store: &dyn Store, record: &OutboxRecord) -> Result<()> {
    let json = serde_json::to_string(record).map_err(|e| Error::invalid(e.to_string()))?;
    store.put_many(vec![(outbox_key(&record.session_id), json)]).await
}

pub async fn clear(store: &dyn Store, session_id: &str) -> Result<()> {
    store.delete_many(vec![outbox_key(session_id)]).await
}

/// Every session with work owed in this namespace (damaged records are
/// skipped and reported).
pub async fn list(store: &dyn Store, log: &DamageLog) -> Result<Vec<OutboxRecord>> {
    Ok(store
        .list(OUTBOX_PREFIX)
        .await?
        .iter()
        .filter_map(|(key, json)| damage::parse(log, key, json))
        .collect())
}
