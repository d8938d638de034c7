//! Sync for JS: `memory.sync(transport)`, where the transport is the host's
//! `async (request: Uint8Array) => Uint8Array` (a `fetch` to a relay, a
//! WebSocket round trip), and `SyncRelay`, the relay over a storage
//! adapter, whose `exchange` answers one such request and whose `sync`
//! makes it equal to another relay (a Durable Object and a Deno KV
//! namespace, say). (The core's device-to-device answer is not bound: it
//! costs the wasm its bytes and no host has asked for it.) Only conversion
//! here: the protocol, its bounds and the transport's deadline are the
//! core's ([`crate::sync`], [`crate::memory::Memory::sync`]).

use std::rc::Rc;

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js_store::JsStore;
use super::memory::{optional, promise, u32_field, JsMemory};
use super::transport::JsTransport;
use super::types::JsSyncOptions;
use super::JsClock;
use super::{check_fields, js_count, js_string, shallow_copy, take_field, to_js};
use crate::error::{Error, Result};
use crate::memory::SyncOptions;
use crate::store::Timed;
use crate::sync::{Relay, DEFAULT_HORIZON_MS};

/// The bytes of a request given to `exchange`.
fn request_bytes(request: &JsValue) -> Result<Vec<u8>> {
    let bytes =
        request.dyn_ref::<Uint8Array>().ok_or_else(|| Error::invalid("a sync request is a Uint8Array"))?;
    // Checked before the copy: an oversized request costs no allocation.
    crate::sync::check_len(bytes.length() as usize)?;
    Ok(bytes.to_vec())
}

/// `sync`'s options (`{ sessions?: boolean }`), read by hand: a serde
/// reader of its own would cost the wasm more than the one field.
fn sync_options(options: Option<JsSyncOptions>) -> std::result::Result<SyncOptions, JsValue> {
    let Some(options) = options.map(JsValue::from).and_then(optional) else {
        return Ok(SyncOptions::default());
    };
    if !options.is_object() || js_sys::Array::is_array(&options) {
        return Err(Error::invalid("sync options must be an object: { sessions?: boolean }").into());
    }
    check_fields(&options, "sync option", &["sessions"], &[])?;
    Ok(SyncOptions { sessions: super::autosync::sessions_field(&options)? })
}

#[wasm_bindgen(js_class = Memory)]
impl JsMemory {
    /// Syncs the namespace's long-term memory with a peer through the
    /// host's transport (with `{ sessions: true }`, the sessions' messages
    /// and summaries too): only what differs travels; a deletion propagates.
    #[wasm_bindgen(unchecked_return_type = "Promise<SyncReport>")]
    pub fn sync(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(request: Uint8Array) => Promise<Uint8Array> | Uint8Array")]
        transport: JsValue,
        options: Option<JsSyncOptions>,
    ) -> Promise {
        let options = sync_options(options);
        let m = self.0.clone();
        promise(
            async move { Ok(m.sync_with(&JsTransport::new(transport, "the sync transport")?, options?).await?) },
            to_js,
        )
    }
}

fn bytes_to_js(bytes: &Vec<u8>) -> std::result::Result<JsValue, JsValue> {
    Ok(Uint8Array::from(bytes.as_slice()).into())
}

/// A sync relay over a storage adapter: holds devices' operations as
/// opaque records (ciphertext when they seal) and answers their syncs.
#[wasm_bindgen(js_name = SyncRelay)]
pub struct JsSyncRelay(Rc<Relay>);

#[wasm_bindgen(js_class = SyncRelay)]
impl JsSyncRelay {
    /// A relay on `store` (a storage adapter, as `Memory.open` takes),
    /// in `namespace` (one user's).
    #[wasm_bindgen(unchecked_return_type = "Promise<SyncRelay>")]
    pub fn open(#[wasm_bindgen(unchecked_param_type = "SyncRelayOptions")] options: JsValue) -> Promise {
        promise(
            async move {
                if !options.is_object() {
                    return Err(Error::invalid("SyncRelay.open needs { store, namespace }").into());
                }
                check_fields(
                    &options,
                    "SyncRelay option",
                    &["store", "namespace", "storageTimeoutMs", "horizonMs"],
                    &[],
                )?;
                let copy = shallow_copy(&options);
                let timeout = u32_field(&copy, "storageTimeoutMs")?;
                let horizon = match take_field(&copy, "horizonMs")? {
                    v if v.is_undefined() => Some(DEFAULT_HORIZON_MS),
                    v if v.is_null() => None,
                    v => match js_count(&v, "horizonMs")? {
                        0 => {
                            return Err(
                                Error::invalid("horizonMs must be a positive integer (ms), or null").into()
                            )
                        }
                        ms => Some(ms),
                    },
                };
                let namespace = js_string(&take_field(&copy, "namespace")?, "namespace")?;
                crate::memory::validate_namespace(&namespace)?;
                let store = optional(take_field(&copy, "store")?)
                    .ok_or_else(|| Error::invalid("SyncRelay.open needs a storage adapter: { store }"))?;
                let store = Rc::new(JsStore::new(store, &namespace)?);
                let store = Timed::with_option(store, Rc::new(JsClock), timeout)?;
                Ok(JsSyncRelay(Rc::new(Relay::collecting(Rc::new(store), Rc::new(JsClock), horizon))))
            },
            |relay: &JsSyncRelay| Ok(JsSyncRelay(relay.0.clone()).into()),
        )
    }

    /// The longest request `exchange` takes (bytes): a host reading a
    /// request's body stops keeping it past this, as the relay would refuse it.
    #[wasm_bindgen(js_name = maxRequestBytes)]
    pub fn max_request_bytes() -> u32 {
        crate::sync::MAX_FRAME as u32
    }

    /// The answer to one exchange of a device's sync.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array>")]
    pub fn exchange(&self, #[wasm_bindgen(unchecked_param_type = "Uint8Array")] request: JsValue) -> Promise {
        let relay = self.0.clone();
        promise(async move { Ok(relay.exchange(&request_bytes(&request)?).await?) }, bytes_to_js)
    }

    /// Makes this relay's items and another relay's (behind `transport`,
    /// e.g. `httpTransport` to its route, or its `exchange`) the same set,
    /// sealed items as they are: a relay never opens one.
    #[wasm_bindgen(unchecked_return_type = "Promise<SyncReport>")]
    pub fn sync(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(request: Uint8Array) => Promise<Uint8Array> | Uint8Array")]
        transport: JsValue,
    ) -> Promise {
        let relay = self.0.clone();
        promise(
            async move { Ok(relay.sync(&JsTransport::new(transport, "the sync transport")?, &JsClock).await?) },
            to_js,
        )
    }
}
