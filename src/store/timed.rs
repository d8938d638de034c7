//! Every call of a store settles within a timeout: a backend whose promise
//! never settles (a storage adapter that lost its connection) gives a
//! `STORAGE_TIMEOUT` error instead of a turn that hangs forever.
//! [`crate::memory::Memory::open`] wraps every store in one.

use std::rc::Rc;

use crate::error::{Error, ErrorCode, Result};
use crate::ports::clock::{within, Clock};
use crate::ports::LocalBoxFuture;
use crate::store::{Parts, Store};

/// Default of [`crate::memory::MemoryOptions::storage_timeout_ms`].
pub const STORAGE_TIMEOUT_MS: u32 = 30_000;

/// A host's timeout option: absent takes the default; 0 is refused, as
/// every call would time out at once.
pub fn check_timeout(name: &str, ms: Option<u32>) -> Result<()> {
    if ms == Some(0) {
        return Err(Error::invalid(format!("{name} must be an integer from 1 to 2^32 - 1")));
    }
    Ok(())
}

pub struct Timed {
    inner: Rc<dyn Store>,
    clock: Rc<dyn Clock>,
    timeout_ms: u32,
}

impl Timed {
    pub fn new(inner: Rc<dyn Store>, clock: Rc<dyn Clock>, timeout_ms: u32) -> Timed {
        Timed { inner, clock, timeout_ms }
    }

    /// A store timed by a host's `storageTimeoutMs` ([`check_timeout`]).
    pub fn with_option(inner: Rc<dyn Store>, clock: Rc<dyn Clock>, timeout_ms: Option<u32>) -> Result<Timed> {
        check_timeout("storageTimeoutMs", timeout_ms)?;
        Ok(Timed::new(inner, clock, timeout_ms.unwrap_or(STORAGE_TIMEOUT_MS)))
    }

    async fn timed<T>(&self, op: &str, call: LocalBoxFuture<'_, Result<T>>) -> Result<T> {
        within(self.clock.as_ref(), self.timeout_ms, call).await.unwrap_or_else(|| {
            Err(Error::new(
                ErrorCode::StorageTimeout,
                format!("storage {op}() did not settle within {} ms", self.timeout_ms),
            ))
        })
    }
}

impl Store for Timed {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(self.timed("get", self.inner.get(key)))
    }

    fn get_many<'a>(&'a self, keys: &'a [String]) -> LocalBoxFuture<'a, Result<Vec<Option<String>>>> {
        Box::pin(self.timed("getMany", self.inner.get_many(keys)))
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.timed("putMany", self.inner.put_many(items)))
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.timed("delete", self.inner.delete_many(keys)))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        Box::pin(self.timed("list", self.inner.list(prefix)))
    }

    fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.timed("list", self.inner.scan(prefix, page)))
    }

    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(self.timed("putManyIf", self.inner.put_many_if(check, expected, items)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::clock::ManualClock;
    use crate::store::MemoryStore;
    use futures::executor::block_on;

    /// A store whose writes never settle.
    struct Stuck(MemoryStore);

    impl Store for Stuck {
        fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
            self.0.get(key)
        }
        fn put_many(&self, _: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
            Box::pin(std::future::pending())
        }
        fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
            self.0.delete_many(keys)
        }
        fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
            self.0.list(prefix)
        }
    }

    #[test]
    fn a_call_that_never_settles_is_a_storage_timeout_and_a_ready_one_waits_for_no_timer() {
        let clock = Rc::new(ManualClock::new(0));
        let store = Timed::new(Rc::new(Stuck(MemoryStore::new())), clock.clone(), 50);
        let err = block_on(store.put_many(vec![("k".into(), "v".into())])).unwrap_err();
        assert_eq!(err.code, ErrorCode::StorageTimeout);
        assert_eq!(err.message, "storage putMany() did not settle within 50 ms");
        assert_eq!(clock.now_ms(), 50, "the timer ran out");
        // The same wrapper through `put_many_if`: the inner store's own.
        let err = block_on(store.put_many_if("k", None, vec![("k".into(), "v".into())])).unwrap_err();
        assert_eq!(err.code, ErrorCode::StorageTimeout);
        assert_eq!(block_on(store.get("k")).unwrap(), None);
        assert_eq!(clock.now_ms(), 100, "a read that was ready set no timer");
    }
}
