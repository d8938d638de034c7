//! `Memory.open({ sync: { transport, intervalMs } })` and `memory.close()`
//! for JS: the option converted, the host's `online` event forwarded to
//! [`Memory::online`], and the listener removed on close (or when the
//! memory is freed). The schedule is the core's ([`crate::memory::autosync`]).

use std::rc::Rc;

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::transport::JsTransport;
use super::{check_fields, shallow_copy, take_field, u32_field};
use crate::error::{Error, Result};
use crate::memory::{AutoSyncOptions, Memory};
use crate::sync::Transport;

/// `Memory.open`'s `sync`, read: the transport and the schedule's options.
pub(super) type AutoSync = (Rc<dyn Transport>, AutoSyncOptions);

/// Reads the `sync` option: an object with a `transport` function and the
/// core's options (unknown keys and bad values are `INVALID_INPUT`).
pub(super) fn parse_sync(value: JsValue) -> std::result::Result<AutoSync, JsValue> {
    if !value.is_object() || js_sys::Array::is_array(&value) {
        return Err(Error::invalid("sync must be an object: { transport, intervalMs?, sessions? }").into());
    }
    let copy = shallow_copy(&value);
    let transport = JsTransport::new(take_field(&copy, "transport")?, "sync.transport")?;
    // Read field by field rather than through serde: the same checks, for
    // less wasm. A new option of the schedule joins this list.
    check_fields(&copy, "sync option", &["intervalMs", "sessions"], &[])?;
    let options =
        AutoSyncOptions { interval_ms: u32_field(&copy, "intervalMs")?, sessions: sessions_field(&copy)? };
    options.validate()?;
    Ok((Rc::new(transport), options))
}

/// The `sessions` field of `memory.sync`'s options and of `Memory.open`'s
/// `sync`: a boolean, false when absent.
pub(super) fn sessions_field(options: &JsValue) -> std::result::Result<bool, JsValue> {
    match super::optional(js_sys::Reflect::get(options, &"sessions".into())?) {
        None => Ok(false),
        Some(v) => Ok(v.as_bool().ok_or_else(|| Error::invalid("sync option sessions must be a boolean"))?),
    }
}

/// The `online` listener on the global object, removed when dropped.
pub(super) struct OnlineListener {
    global: JsValue,
    closure: Closure<dyn Fn()>,
}

impl Drop for OnlineListener {
    fn drop(&mut self) {
        if let Some(remove) = method(&self.global, "removeEventListener") {
            let _ = remove.call2(&self.global, &"online".into(), self.closure.as_ref());
        }
    }
}

fn method(target: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(target, &name.into()).ok()?.dyn_into::<Function>().ok()
}

/// Starts `memory`'s schedule and, where the host has `online` events (a
/// browser page or worker), forwards them; elsewhere the timer alone runs it.
pub(super) fn start(memory: &Memory, (transport, options): AutoSync) -> Result<Option<OnlineListener>> {
    memory.autosync(transport, &options)?;
    let global: JsValue = js_sys::global().into();
    let Some(add) = method(&global, "addEventListener") else { return Ok(None) };
    let m = memory.clone();
    let closure = Closure::<dyn Fn()>::new(move || m.online());
    let _ = add.call2(&global, &"online".into(), closure.as_ref());
    Ok(Some(OnlineListener { global, closure }))
}
