//! A lease on ending one session, held in the store, so that processes
//! sharing it (Deno Deploy isolates on one KV, workers on one Durable
//! Object) do not all ask the model to judge the same new messages: each
//! would pay for the same call, and the namespace lock does not span them.
//!
//! The lease is one record, `<holder> <until ms>`, taken with the store's
//! conditional write (atomic where the backend checks in its commit: Deno
//! KV, Durable Objects, IndexedDB; a read, then a write, elsewhere), and
//! taken again before each batch to move `until` on. A holder that dies
//! leaves a lease that ends by itself. Losing it only costs a judgement
//! that another instance makes: which messages are processed is still
//! decided when the memories are written.

use std::rc::Rc;

use crate::error::Result;
use crate::store::layout::ending_key;
use crate::store::Store;

/// How long a lease lasts past its last renewal: longer than one judge
/// call with its retries.
pub const LEASE_MS: i64 = 120_000;

/// A lease on ending session `storage_id`, held by `holder`.
pub struct Lease {
    store: Rc<dyn Store>,
    key: String,
    holder: String,
}

impl Lease {
    pub fn new(store: Rc<dyn Store>, storage_id: &str, holder: u64) -> Lease {
        Lease { store, key: ending_key(storage_id), holder: format!("{holder:016x}") }
    }

    /// Takes the lease, or moves it on if held already; says whether it is
    /// held now (`false`: another holder's lease has not ended).
    pub async fn take(&self, now: i64) -> Result<bool> {
        let current = self.store.get(&self.key).await?;
        if let Some((holder, until)) = current.as_deref().and_then(parse) {
            if holder != self.holder && until > now {
                return Ok(false);
            }
        }
        let value = format!("{} {}", self.holder, now.saturating_add(LEASE_MS));
        self.store.put_many_if(&self.key, current.as_deref(), vec![(self.key.clone(), value)]).await
    }

    /// Gives the lease up, if this holder still has it.
    pub async fn release(&self) -> Result<()> {
        let current = self.store.get(&self.key).await?;
        if current.as_deref().and_then(parse).is_some_and(|(holder, _)| holder == self.holder) {
            self.store.delete_many(vec![self.key.clone()]).await?;
        }
        Ok(())
    }
}

/// `(holder, until)` of a lease's text; a damaged one holds nothing.
fn parse(text: &str) -> Option<(&str, i64)> {
    let (holder, until) = text.split_once(' ')?;
    Some((holder, until.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use futures::executor::block_on;

    #[test]
    fn one_holder_at_a_time_until_it_releases_or_its_lease_ends() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let (a, b) = (Lease::new(store.clone(), "s", 1), Lease::new(store.clone(), "s", 2));
        assert!(block_on(a.take(1_000)).unwrap());
        assert!(!block_on(b.take(1_001)).unwrap(), "held by another");
        assert!(block_on(a.take(50_000)).unwrap(), "the holder renews");
        assert!(!block_on(b.take(50_000 + LEASE_MS - 1)).unwrap(), "renewed, so not ended yet");
        assert!(block_on(b.take(50_000 + LEASE_MS)).unwrap(), "an abandoned lease ends by itself");
        block_on(a.release()).unwrap();
        assert!(block_on(store.get(&ending_key("s"))).unwrap().is_some(), "a release leaves another's lease");
        block_on(b.release()).unwrap();
        assert!(block_on(a.take(60_000)).unwrap());
        // Another session's lease is another record.
        assert!(block_on(Lease::new(store, "t", 2).take(60_000)).unwrap());
    }

    #[test]
    fn a_damaged_lease_holds_nothing() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        block_on(store.put_many(vec![(ending_key("s"), "garbage".into())])).unwrap();
        assert!(block_on(Lease::new(store, "s", 1).take(0)).unwrap());
    }
}
