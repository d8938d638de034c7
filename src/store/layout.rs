//! The layout of a namespace in its store: every key a record lives under,
//! in one place, so that no two kinds of record can share a key and a
//! backend that treats some records apart (IndexedDB indexes memories and
//! keeps vectors binary) reads the same layout the core writes.
//!
//! ```text
//! lt/log/<writer>/<seq>-<part>         one write of long-term operations (JSON lines)
//! lt/head/<writer>                     a writer's last write: "<seq> <ms>"
//! lt/chunk/<chunk>/<part>              operations folded from many writes (JSON lines)
//! lt/index/<chunk>                     the writes a chunk holds, and its parts
//! lt/meta/epoch                        moved by a purge: read the namespace anew
//! lt/meta/mark                         the last write's name: unchanged, nothing new
//! lt/entry/, lt/processed/, lt/snap/,  an earlier release's long-term records,
//! lt/meta/generation, lt/meta/journal  read once and converted
//! session/<id>/msg/<position>          one message
//! session/<id>/summary                 the session's summary
//! session/<id>/writer/<writer>         a writer's count of writes (sync)
//! session/<id>/gone/<entry id>         a deleted message's or summary's marker: its erased sync item's id, no text
//! session/<id>/chunk/<first>_<last>    a chunk summary kept for a retried compression
//! session/<id>/ending                  the lease of the instance ending the session
//! outbox/<session id>                  session-end work owed
//! vec/<document id>                    a document's vector
//! key/moved/<older key id>             word of a key rotation, for instances on the older key
//! sync/item/<id hex>                   a relay's item (base64 of its bytes), never a memory's
//! sync/mark                            a relay's last write: unchanged, no new item
//! sync/sent                            the seal a memory's items went out under, and their families
//! sync/id                              a relay's id, random, named in its answers
//! sync/born/<ms>/<id hex>              when a relay took a tombstone (collected after its horizon)
//! sync/held/<peer>-<families>/<part>   the items held alike with a peer at the last complete sync of those families
//! ```
//!
//! Ids put into keys are checked where they are made or taken in: memory
//! ids by [`crate::entry::MemoryEntry::validate`], session ids by
//! `validate_session_id`.

/// Bytes of a value at most (a record longer than that gets a value of its
/// own). Under Deno KV's 64 KiB per value also as V8 stores it: text with
/// a character beyond Latin-1 takes two bytes per UTF-16 unit, and a text
/// has no more units than UTF-8 bytes, so at most 60 KiB; 41 KB once sealed
/// (base64, one byte a character). Durable Objects take 128 KiB.
pub const VALUE_BYTES: usize = 30 * 1024;

/// Every record of long-term memory lives under this prefix.
pub const LONG_TERM_PREFIX: &str = "lt/";
pub const LOG_PREFIX: &str = "lt/log/";
pub const HEAD_PREFIX: &str = "lt/head/";
pub const CHUNK_PREFIX: &str = "lt/chunk/";
pub const INDEX_PREFIX: &str = "lt/index/";
pub const EPOCH_KEY: &str = "lt/meta/epoch";
pub const MARK_KEY: &str = "lt/meta/mark";
/// An earlier release's single records, deleted once converted.
pub const LEGACY_KEYS: [&str; 2] = [GENERATION_KEY, JOURNAL_KEY];
pub const ENTRY_PREFIX: &str = "lt/entry/";
pub const GENERATION_KEY: &str = "lt/meta/generation";
pub const JOURNAL_KEY: &str = "lt/meta/journal";
pub const SNAPSHOT_PREFIX: &str = "lt/snap/";
pub const PROCESSED_PREFIX: &str = "lt/processed/";
pub const SESSIONS_PREFIX: &str = "session/";
pub const OUTBOX_PREFIX: &str = "outbox/";
pub const VECTOR_PREFIX: &str = "vec/";
pub const MOVED_PREFIX: &str = "key/moved/";
/// A relay's items ([`crate::sync::Relay`]), in a store of its own.
pub const SYNC_ITEM_PREFIX: &str = "sync/item/";
pub const SYNC_MARK_KEY: &str = "sync/mark";
/// A memory's record of the seal (a key id, or plain) its items last went
/// out under by sync, and their families ([`crate::memory`]'s sync).
pub const SYNC_SENT_KEY: &str = "sync/sent";
/// A relay's id ([`crate::sync::Replica::peer_id`]).
pub const SYNC_ID_KEY: &str = "sync/id";
/// When a relay took each tombstone, in order of arrival.
pub const SYNC_BORN_PREFIX: &str = "sync/born/";

pub fn born_key(ms: u64, id_hex: &str) -> String {
    format!("{SYNC_BORN_PREFIX}{ms:016x}/{id_hex}")
}

/// Where a side keeps what it held alike with `peer` in syncs of
/// `families` ([`crate::sync::held`]).
pub fn held_prefix(peer: u64, families: u8) -> String {
    format!("sync/held/{peer:016x}-{families:02x}/")
}

/// Every record of `writer`'s writes lives under this prefix.
pub fn log_writer_prefix(writer: u64) -> String {
    format!("{LOG_PREFIX}{writer:016x}/")
}

/// Part `part` of write `seq` of `writer`.
pub fn log_key(writer: u64, seq: u64, part: usize) -> String {
    format!("{LOG_PREFIX}{writer:016x}/{seq:010}-{part:03}")
}

pub fn head_key(writer: u64) -> String {
    format!("{HEAD_PREFIX}{writer:016x}")
}

pub fn chunk_key(chunk: &str, part: usize) -> String {
    format!("{CHUNK_PREFIX}{chunk}/{part:05}")
}

pub fn index_key(chunk: &str) -> String {
    format!("{INDEX_PREFIX}{chunk}")
}

/// Every record of a session lives under this prefix.
pub fn session_prefix(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/")
}

pub fn message_prefix(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/msg/")
}

pub fn summary_key(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/summary")
}

pub fn writer_prefix(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/writer/")
}

/// Markers of messages deleted from the session (popped, cleared,
/// forgotten): another instance still holding one drops it when it reloads
/// instead of keeping it as a message the store lost. A marker holds the id
/// only, never the text.
pub fn gone_prefix(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/gone/")
}

pub fn chunk_prefix(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/chunk/")
}

/// The lease on ending a session ([`crate::llm::lease`]).
pub fn ending_key(storage_id: &str) -> String {
    format!("{SESSIONS_PREFIX}{storage_id}/ending")
}
/// What follows the session's id in `key` (under [`SESSIONS_PREFIX`]):
/// a session id holds no `/`, so a session named `msg` or `summary` is
/// not taken for a record's kind.
fn session_tail(key: &str) -> &str {
    key.strip_prefix(SESSIONS_PREFIX).and_then(|rest| rest.split_once('/')).map_or("", |(_, tail)| tail)
}

/// Whether `key` (under [`SESSIONS_PREFIX`]) is a message's record.
pub fn is_message_key(key: &str) -> bool {
    session_tail(key).starts_with("msg/")
}

/// Whether `key` (under [`SESSIONS_PREFIX`]) is a session's summary.
pub fn is_summary_key(key: &str) -> bool {
    session_tail(key) == "summary"
}

pub fn outbox_key(session_id: &str) -> String {
    format!("{OUTBOX_PREFIX}{session_id}")
}

pub fn vector_key(id: &str) -> String {
    format!("{VECTOR_PREFIX}{id}")
}

/// The document id of a vector record's key.
pub fn vector_id_of(key: &str) -> Option<&str> {
    key.strip_prefix(VECTOR_PREFIX)
}

pub fn moved_key(key_id: &str) -> String {
    format!("{MOVED_PREFIX}{key_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_kinds_of_record_share_a_key() {
        let keys = [
            log_key(1, 2, 0),
            head_key(1),
            chunk_key("c", 0),
            index_key("c"),
            EPOCH_KEY.to_string(),
            MARK_KEY.to_string(),
            format!("{ENTRY_PREFIX}m"),
            GENERATION_KEY.to_string(),
            JOURNAL_KEY.to_string(),
            format!("{SNAPSHOT_PREFIX}000001"),
            format!("{PROCESSED_PREFIX}h"),
            format!("{}1", message_prefix("s")),
            summary_key("s"),
            format!("{}w", writer_prefix("s")),
            format!("{}m", gone_prefix("s")),
            format!("{}1_2", chunk_prefix("s")),
            ending_key("s"),
            outbox_key("s"),
            vector_key("m"),
            moved_key("k"),
            format!("{SYNC_ITEM_PREFIX}00"),
            SYNC_MARK_KEY.to_string(),
            SYNC_SENT_KEY.to_string(),
        ];
        let prefixes = [
            LOG_PREFIX,
            HEAD_PREFIX,
            CHUNK_PREFIX,
            INDEX_PREFIX,
            ENTRY_PREFIX,
            "lt/meta/",
            SNAPSHOT_PREFIX,
            PROCESSED_PREFIX,
            "session/s/msg/",
            "session/s/summary",
            "session/s/writer/",
            "session/s/gone/",
            "session/s/chunk/",
            "session/s/ending",
            OUTBOX_PREFIX,
            VECTOR_PREFIX,
            MOVED_PREFIX,
            SYNC_ITEM_PREFIX,
            SYNC_MARK_KEY,
            SYNC_SENT_KEY,
        ];
        for key in &keys {
            let owners = prefixes.iter().filter(|p| key.starts_with(*p)).count();
            assert!(owners == 1 || key.starts_with("lt/meta/"), "{key} under {owners} prefixes");
        }
        assert!(is_message_key(&format!("{}1", message_prefix("s"))) && is_summary_key(&summary_key("s")));
        // Sessions named like a record's kind: their other records are
        // neither messages nor summaries.
        for name in ["msg", "summary"] {
            assert!(!is_message_key(&summary_key(name)) && is_summary_key(&summary_key(name)));
            assert!(!is_message_key(&format!("{}w", writer_prefix(name))));
            assert!(!is_summary_key(&format!("{}summary", gone_prefix(name))));
            assert!(is_message_key(&format!("{}7", message_prefix(name))));
        }
        assert_eq!(vector_id_of(&vector_key("abc")), Some("abc"));
    }
}
