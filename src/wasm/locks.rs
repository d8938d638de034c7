//! Cross-tab exclusion with the Web Locks API (`navigator.locks`): two tabs
//! of one origin writing long-term memory take turns, so neither dedups
//! against a stale view. Where the runtime has no Web Locks (Node, workerd,
//! Deno), one `Memory` per namespace is the unit of exclusion and the work
//! runs directly.

use std::future::Future;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::error::{Error, Result};

fn lock_manager() -> Option<JsValue> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = Reflect::get(&navigator, &"locks".into()).ok()?;
    Reflect::get(&locks, &"request".into()).ok()?.dyn_into::<Function>().ok()?;
    Some(locks)
}

/// Runs `work` while holding the named Web Lock (or directly without one).
pub async fn with_lock<T>(name: &str, work: impl Future<Output = Result<T>>) -> Result<T> {
    let Some(locks) = lock_manager() else { return work.await };
    // The lock is held until the promise the callback returns settles: it
    // resolves when `work` is done.
    let mut release: Option<Function> = None;
    let held = Promise::new(&mut |resolve, _| release = Some(resolve));
    let granted = Promise::new(&mut |resolve, _| {
        let held = held.clone();
        let callback = Closure::once_into_js(move |_lock: JsValue| {
            let _ = resolve.call0(&JsValue::NULL);
            held
        });
        let request: Function =
            Reflect::get(&locks, &"request".into()).expect("checked above").unchecked_into();
        let _ = request.call2(&locks, &JsValue::from_str(name), &callback);
    });
    let _release = Release(release);
    JsFuture::from(granted).await.map_err(|_| Error::storage("the Web Lock could not be acquired"))?;
    work.await
}

/// Releases the lock when the work ends, also when it is dropped midway
/// (an aborted `endSession`): a lock left held would stall every tab.
struct Release(Option<Function>);

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(release) = &self.0 {
            let _ = release.call0(&JsValue::NULL);
        }
    }
}
