//! The host's transport within a deadline, for every side that starts a
//! sync (a memory, a relay syncing with another): an exchange that does not
//! settle in time fails the sync with `TIMEOUT`, like a model call, and what
//! landed before it stays.

use super::Transport;
use crate::error::{Error, ErrorCode, Result};
use crate::ports::clock::call_within;
use crate::ports::{Clock, LocalBoxFuture};
use crate::semaphore::Semaphore;

/// An exchange must settle within this, or the sync fails with `TIMEOUT`.
pub const EXCHANGE_TIMEOUT_MS: u32 = 30_000;

/// `transport`, each exchange within [`EXCHANGE_TIMEOUT_MS`] of `clock`.
pub struct Timed<'a> {
    transport: &'a dyn Transport,
    clock: &'a dyn Clock,
    permits: Semaphore,
}

impl<'a> Timed<'a> {
    pub fn new(transport: &'a dyn Transport, clock: &'a dyn Clock) -> Self {
        Timed { transport, clock, permits: Semaphore::new(1) }
    }
}

impl Transport for Timed<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            let call = || self.transport.exchange(request);
            call_within(&self.permits, self.clock, EXCHANGE_TIMEOUT_MS, call).await.unwrap_or_else(|| {
                Err(Error::new(
                    ErrorCode::Timeout,
                    format!("the sync transport did not answer within {EXCHANGE_TIMEOUT_MS} ms"),
                ))
            })
        })
    }
}
