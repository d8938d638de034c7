//! The `Lock` port in JS runtimes: the Web Locks API (`navigator.locks`)
//! where there is one, so tabs and workers of one origin take turns (and a
//! lock dies with its tab), behind one [`LingeringLocks`] per realm: a Web
//! Lock costs a round trip to the browser process, which a write that
//! follows another at once skips; elsewhere (Node, Deno without locks,
//! workerd) the instances of this realm share [`LocalLocks`].

use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::spawn::JsSpawn;
use super::JsClock;
use crate::error::{Error, Result};
use crate::ports::lock::{LingeringLocks, LocalLocks, Lock, LockGuard};
use crate::ports::LocalBoxFuture;

thread_local! {
    /// Chosen once: a realm has Web Locks or it does not. Only they are
    /// costly enough to keep lingering; this realm's own locks are not.
    static LOCKS: Rc<dyn Lock> = if lock_manager().is_some() {
        Rc::new(LingeringLocks::new(Rc::new(WebLocks), Rc::new(JsClock), Rc::new(JsSpawn)))
    } else {
        Rc::new(LocalLocks::default())
    };
}

/// The locks every `Memory` of this realm takes.
pub fn realm_locks() -> Rc<dyn Lock> {
    LOCKS.with(Rc::clone)
}

fn lock_manager() -> Option<(JsValue, Function)> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = Reflect::get(&navigator, &"locks".into()).ok()?;
    let request = Reflect::get(&locks, &"request".into()).ok()?.dyn_into::<Function>().ok()?;
    Some((locks, request))
}

/// The Web Locks API: tabs and workers of one origin take turns.
struct WebLocks;

impl Lock for WebLocks {
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
        Box::pin(async move {
            let (locks, request) =
                lock_manager().ok_or_else(|| Error::storage("this realm has no Web Locks"))?;
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
