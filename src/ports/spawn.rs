//! The `Spawn` port: where background work runs. The core decides what to
//! run and when (compression after an `add`, a session end owed from an
//! earlier run); the host only runs it: `spawn_local` on the JS event loop,
//! a `LocalPool` in native tests, where a test drives the work to idle.

use crate::ports::LocalBoxFuture;

pub trait Spawn {
    /// Runs `task` to completion in the background.
    fn spawn(&self, task: LocalBoxFuture<'static, ()>);
}
