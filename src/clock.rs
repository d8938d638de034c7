//! The `Clock` port. Time is injected so that tests never sleep and time
//! decay, TTLs and ids are exact under test.

use std::cell::Cell;

pub trait Clock {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system's clock (native builds; the wasm binding reads `Date.now()`).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock(Cell<i64>);

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        ManualClock(Cell::new(start_ms))
    }

    pub fn advance(&self, ms: i64) {
        self.0.set(self.0.get() + ms);
    }

    pub fn set(&self, ms: i64) {
        self.0.set(ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.get()
    }
}
