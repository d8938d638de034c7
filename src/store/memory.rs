//! The in-memory store: tests, Node, and ephemeral sessions.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use super::{Parts, Store};
use crate::error::Result;
use crate::ports::LocalBoxFuture;

#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RefCell<BTreeMap<String, String>>,
    writes: Cell<u64>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Write calls (`put_many`) so far: what a test of batching counts.
    pub fn writes(&self) -> u64 {
        self.writes.get()
    }
}

impl Store for MemoryStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        let v = self.map.borrow().get(key).cloned();
        Box::pin(async move { Ok(v) })
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        self.writes.set(self.writes.get() + 1);
        self.map.borrow_mut().extend(items);
        Box::pin(async { Ok(()) })
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        let mut map = self.map.borrow_mut();
        for k in keys {
            map.remove(&k);
        }
        Box::pin(async { Ok(()) })
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        let items = self
            .map
            .borrow()
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Box::pin(async move { Ok(items) })
    }

    /// Parts of [`PART`] records, the last part first: what the tests run
    /// on is a scan in parts, in an order no caller can count on.
    fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let items = self.list(prefix).await?;
            for part in items.rchunks(PART) {
                page(part.to_vec());
            }
            Ok(())
        })
    }
}

/// Records per part of a scan.
const PART: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_conformance_suite() {
        futures::executor::block_on(crate::store::conformance::run(&MemoryStore::new())).unwrap();
    }
}
