//! The `Lock` port in JS runtimes: the Web Locks API (`navigator.locks`)
//! where there is one, so tabs and workers of one origin take turns (and a
//! lock dies with its tab); elsewhere (Node, Deno without locks, workerd) the
//! instances of this realm share [`LocalLocks`]. Memories take them through
//! one [`LingeringLocks`] per realm: a Web Lock costs a round trip to the
//! browser process, which a write that follows another at once skips.

use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::memory::JsSpawn;
use super::JsClock;
use crate::error::{Error, Result};
use crate::ports::lock::{LingeringLocks, LocalLocks, Lock, LockGuard};
use crate::ports::LocalBoxFuture;

thread_local! {
    static REALM: Rc<LocalLocks> = Rc::default();
    static LINGERING: Rc<LingeringLocks> =
        Rc::new(LingeringLocks::new(Rc::new(JsLocks), Rc::new(JsClock), Rc::new(JsSpawn)));
}

/// The locks every `Memory` of this realm takes.
pub fn realm_locks() -> Rc<dyn Lock> {
    LINGERING.with(|l| l.clone() as Rc<dyn Lock>)
}

fn lock_manager() -> Option<(JsValue, Function)> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = Reflect::get(&navigator, &"locks".into()).ok()?;
    let request = Reflect::get(&locks, &"request".into()).ok()?.dyn_into::<Function>().ok()?;
    Some((locks, request))
}

/// Web Locks, or this realm's locks.
pub struct JsLocks;

impl Lock for JsLocks {
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
        Box::pin(async move {
            let Some((locks, request)) = lock_manager() else {
                let realm = REALM.with(Rc::clone);
                return realm.acquire(name).await;
            };
            // The lock is held until the promise the callback returns
            // settles: it resolves when the guard is dropped.
            let mut release: Option<Function> = None;
            let held = Promise::new(&mut |resolve, _| release = Some(resolve));
            let guard = LockGuard::new(Release(release));
            let granted = Promise::new(&mut |resolve, reject| {
                let held = held.clone();
                let callback = Closure::once_into_js(move |_lock: JsValue| {
                    let _ = resolve.call0(&JsValue::NULL);
                    held
                });
                if let Err(e) = request.call2(&locks, &JsValue::from_str(name), &callback) {
                    let _ = reject.call1(&JsValue::NULL, &e);
                }
            });
            JsFuture::from(granted)
                .await
                .map_err(|_| Error::storage("the Web Lock could not be acquired"))?;
            Ok(guard)
        })
    }
}

/// Releases the lock when dropped, also when the work holding it is dropped
/// midway (an aborted `endSession`): a lock left held would stall every tab.
struct Release(Option<Function>);

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(release) = &self.0 {
            let _ = release.call0(&JsValue::NULL);
        }
    }
}
