//! The `Store` port: where memories persist. A store is one namespace (one
//! user's database, or one key prefix of a shared backend); nothing read or
//! deleted through it can touch another namespace.
//!
//! Keys are strings ordered by their UTF-8 bytes; values are JSON text. That
//! is the common ground of IndexedDB, Durable Object storage, Deno KV and a
//! plain map, so one conformance suite ([`conformance`]) holds every backend
//! to the same behaviour.

pub mod conformance;
mod memory;

pub use memory::MemoryStore;

use crate::error::Result;
use crate::ports::LocalBoxFuture;

pub trait Store {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>>;

    /// Writes all items or none (one transaction where the backend has them).
    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>>;

    /// Deletes the keys; absent keys are not an error.
    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>>;

    /// Every `(key, value)` whose key starts with `prefix`, in key order.
    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>>;
}
