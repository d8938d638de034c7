//! The `Spawn` port on the JS event loop.

use crate::ports::{LocalBoxFuture, Spawn};

/// The `Spawn` port on the JS event loop.
pub(crate) struct JsSpawn;

impl Spawn for JsSpawn {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        wasm_bindgen_futures::spawn_local(task);
    }
}
