//! A store for tests whose every operation first yields a seeded number of
//! times: concurrent callers interleave differently for each seed.

use std::cell::Cell;

use super::{MemoryStore, Store};
use crate::error::Result;
use crate::ports::LocalBoxFuture;

/// A store whose every operation first yields a pseudo-random number of
/// times (xorshift, seeded): concurrent callers interleave differently
/// for each seed, as they would on IndexedDB or a remote adapter.
pub struct YieldingStore {
    inner: MemoryStore,
    state: Cell<u64>,
}

impl YieldingStore {
    pub fn new(seed: u64) -> YieldingStore {
        YieldingStore {
            inner: MemoryStore::new(),
            state: Cell::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        }
    }

    fn yields(&self) -> impl std::future::Future<Output = ()> {
        let mut x = self.state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state.set(x);
        let mut left = x % 4;
        std::future::poll_fn(move |cx| {
            if left == 0 {
                return std::task::Poll::Ready(());
            }
            left -= 1;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
    }
}

impl Store for YieldingStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move {
            self.yields().await;
            self.inner.get(key).await
        })
    }
    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move {
            self.yields().await;
            self.inner.put_many(items).await
        })
    }
    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move {
            self.yields().await;
            self.inner.delete_many(keys).await
        })
    }
    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        Box::pin(async move {
            self.yields().await;
            self.inner.list(prefix).await
        })
    }
    /// Checked and written in one step, as IndexedDB and PostgreSQL do.
    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            self.yields().await;
            if self.inner.get(check).await?.as_deref() != expected {
                return Ok(false);
            }
            self.inner.put_many(items).await?;
            Ok(true)
        })
    }
}
