//! The in-memory store: tests, Node, and ephemeral sessions.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use super::Store;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_conformance_suite() {
        futures::executor::block_on(crate::store::conformance::run(&MemoryStore::new())).unwrap();
    }
}
