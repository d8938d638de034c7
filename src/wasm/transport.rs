//! The host's sync transport, `async (request: Uint8Array) => Uint8Array`,
//! as the core's `Transport` port: for `memory.sync(transport)` and for
//! `Memory.open`'s `sync` alike.

use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{describe, settle};
use crate::error::{Error, ErrorCode, Result};
use crate::ports::LocalBoxFuture;
use crate::sync::Transport;

/// The host's transport function.
pub(super) struct JsTransport(Function);

impl JsTransport {
    /// `value` as a transport, or a typed error naming it (`what`).
    pub(super) fn new(value: JsValue, what: &str) -> Result<JsTransport> {
        let f = value.dyn_into::<Function>().map_err(|_| {
            Error::invalid(format!("{what} must be a function: (request: Uint8Array) => Promise<Uint8Array>"))
        })?;
        Ok(JsTransport(f))
    }
}

fn transport_error(why: String) -> Error {
    Error::new(ErrorCode::SyncTransport, why)
}

impl Transport for JsTransport {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            let failed = |e: JsValue| transport_error(format!("the sync transport failed: {}", describe(&e)));
            let out = self.0.call1(&JsValue::NULL, &Uint8Array::from(request.as_slice())).map_err(failed)?;
            let out = settle(out).await.map_err(failed)?;
            let bytes = out.dyn_into::<Uint8Array>().map_err(|v| {
                transport_error(format!("the sync transport must answer a Uint8Array, not {}", describe(&v)))
            })?;
            Ok(bytes.to_vec())
        })
    }
}
