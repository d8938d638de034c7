//! The `Store` port: where memories persist. A store is one namespace (one
//! user's database, or one key prefix of a shared backend); nothing read or
//! deleted through it can touch another namespace.
//!
//! Keys are strings ordered by their UTF-8 bytes; values are JSON text. That
//! is the common ground of IndexedDB, Durable Object storage, Deno KV and a
//! plain map, so one conformance suite ([`conformance`]) holds every backend
//! to the same behaviour.

pub mod conformance;
pub mod damage;
pub mod layout;
mod memory;
pub mod namespace;
pub mod sealed;
mod timed;
#[cfg(test)]
pub mod yielding;

pub use damage::{DamageHook, DamageLog, Damaged};
pub use memory::MemoryStore;
pub use sealed::{EncryptionStats, SealedStore};
pub use timed::{check_timeout, Timed, STORAGE_TIMEOUT_MS};

use crate::error::Result;
use crate::join::join_all;
use crate::ports::LocalBoxFuture;

/// Where [`Store::scan`] hands its parts: each a run of `(key, value)`.
pub type Parts<'a> = &'a mut dyn FnMut(Vec<(String, String)>);

pub trait Store {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>>;

    /// The values of `keys`, in their order (one read where the backend
    /// allows, so the values are of one moment); here every `get` at once.
    fn get_many<'a>(&'a self, keys: &'a [String]) -> LocalBoxFuture<'a, Result<Vec<Option<String>>>> {
        Box::pin(async move { join_all(keys.iter().map(|k| self.get(k))).await.into_iter().collect() })
    }

    /// Writes all items or none (one transaction where the backend has them).
    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>>;

    /// Deletes the keys; absent keys are not an error.
    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>>;

    /// Every `(key, value)` whose key starts with `prefix`, in key order.
    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>>;

    /// What [`Store::list`] returns, handed to `page` in parts as they are
    /// read, so the caller's work on one part overlaps the reading of the
    /// rest: IndexedDB reads 10,000 memories in about the time the core
    /// takes to parse and analyze them, and opening costs one of the two,
    /// not their sum. Every key comes in exactly one part, parts in no
    /// promised order; after an error, what was handed over is not the
    /// whole. Here one part, from `list`.
    fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            page(self.list(prefix).await?);
            Ok(())
        })
    }

    /// Writes `items` (all or none) only if `check` still holds `expected`
    /// (`None`: absent); says whether it wrote. A writer that last saw the
    /// namespace at some generation writes without a read of its own when
    /// the backend can check and write in one transaction (IndexedDB does);
    /// here a read, then the write: callers hold the namespace lock, so
    /// nothing of this library writes in between.
    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(read_then_write(self, check, expected, items))
    }
}

/// [`Store::put_many_if`] as a read, then a write: for a backend that cannot
/// check and write in one step (correct within one realm, where the
/// namespace lock keeps this library's writers apart).
pub async fn read_then_write<S: Store + ?Sized>(
    store: &S,
    check: &str,
    expected: Option<&str>,
    items: Vec<(String, String)>,
) -> Result<bool> {
    if store.get(check).await?.as_deref() != expected {
        return Ok(false);
    }
    store.put_many(items).await?;
    Ok(true)
}

/// Deletes every record of the namespace the store holds (memories,
/// sessions, summaries, hashes, owed work), readable or not: the way out of
/// a namespace that cannot be opened, and the "delete my data" of a user.
/// Returns how many records were deleted.
pub async fn delete_all(store: &dyn Store) -> Result<u32> {
    let keys: Vec<String> = store.list("").await?.into_iter().map(|(k, _)| k).collect();
    let n = keys.len() as u32;
    store.delete_many(keys).await?;
    Ok(n)
}
