//! The `Clock` port on `Date.now()` and `setTimeout`.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Milliseconds since the epoch from the JS clock.
pub(crate) fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// The `Clock` port on `Date.now()`.
pub(crate) struct JsClock;

impl crate::ports::clock::Clock for JsClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }

    fn sleep(&self, ms: u32) -> crate::ports::LocalBoxFuture<'_, ()> {
        Box::pin(Sleep::new(ms))
    }
}

/// A `setTimeout` as a future. Dropping it clears the timer: a timeout that
/// lost its race must not keep Node or a worker alive until it fires.
struct Sleep {
    handle: JsValue,
    done: wasm_bindgen_futures::JsFuture,
}

impl Sleep {
    fn new(ms: u32) -> Sleep {
        let global = js_sys::global();
        let mut handle = JsValue::UNDEFINED;
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            if let Ok(set) = js_sys::Reflect::get(&global, &"setTimeout".into())
                .and_then(|f| f.dyn_into::<js_sys::Function>())
            {
                handle =
                    set.call2(&JsValue::NULL, &resolve, &JsValue::from(ms)).unwrap_or(JsValue::UNDEFINED);
            } else {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        Sleep { handle, done: promise.into() }
    }
}

impl std::future::Future for Sleep {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::pin::Pin::new(&mut self.done).poll(cx).map(|_| ())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Ok(clear) = js_sys::Reflect::get(&js_sys::global(), &"clearTimeout".into())
            .and_then(|f| f.dyn_into::<js_sys::Function>())
        {
            let _ = clear.call1(&JsValue::NULL, &self.handle);
        }
    }
}
