//! The `Cipher` port on WebCrypto (`crypto.subtle`, in browsers, workers,
//! Node, Deno and workerd): AES-GCM with the host's `CryptoKey`s, which may
//! be non-extractable. `Memory.open({ encryption: { key, previousKeys,
//! migrate } })`.

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::{describe, shallow_copy, take_field};
use crate::error::{Error, Result};
use crate::ports::cipher::NONCE_LEN;
use crate::ports::{Cipher, LocalBoxFuture};

pub struct JsCipher {
    subtle: JsValue,
    encrypt: Function,
    decrypt: Function,
    /// Key 0 seals; all open.
    keys: Vec<JsValue>,
}

const KEY_RULE: &str =
    "must be an AES-GCM CryptoKey with the encrypt and decrypt usages (crypto.subtle.generateKey or importKey)";

fn check_key(key: &JsValue, what: &str) -> Result<()> {
    let field = |o: &JsValue, name: &str| Reflect::get(o, &name.into()).unwrap_or(JsValue::UNDEFINED);
    let algorithm = field(key, "algorithm");
    let usages = field(key, "usages");
    let has = |usage: &str| Array::is_array(&usages) && Array::from(&usages).includes(&usage.into(), 0);
    let ok = key.is_object()
        && field(key, "type").as_string().as_deref() == Some("secret")
        && algorithm.is_object()
        && field(&algorithm, "name").as_string().as_deref() == Some("AES-GCM")
        && has("encrypt")
        && has("decrypt");
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("{what} {KEY_RULE}")))
    }
}

/// Reads the `encryption` option: the cipher, and whether to migrate plain
/// records.
pub fn parse_encryption(value: JsValue) -> std::result::Result<(JsCipher, bool), JsValue> {
    if !value.is_object() || Array::is_array(&value) {
        return Err(Error::invalid("encryption must be an object: { key, previousKeys?, migrate? }").into());
    }
    let copy = shallow_copy(&value);
    let key = take_field(&copy, "key")?;
    let previous = take_field(&copy, "previousKeys")?;
    let migrate = take_field(&copy, "migrate")?;
    super::check_fields(&copy, "encryption option", &[], &[])?;
    check_key(&key, "encryption.key")?;
    let mut keys = vec![key];
    if !previous.is_undefined() {
        if !Array::is_array(&previous) {
            return Err(Error::invalid(format!(
                "encryption.previousKeys must be an array of keys that {KEY_RULE}"
            ))
            .into());
        }
        for k in Array::from(&previous).iter() {
            check_key(&k, "each of encryption.previousKeys")?;
            keys.push(k);
        }
    }
    let migrate = match migrate.as_bool() {
        Some(b) => b,
        None if migrate.is_undefined() => false,
        None => return Err(Error::invalid("encryption.migrate must be a boolean").into()),
    };
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into())?;
    let subtle =
        if crypto.is_object() { Reflect::get(&crypto, &"subtle".into())? } else { JsValue::UNDEFINED };
    let method =
        |name: &str| Reflect::get(&subtle, &name.into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    let (Some(encrypt), Some(decrypt)) = (method("encrypt"), method("decrypt")) else {
        return Err(
            Error::invalid("encryption needs WebCrypto (crypto.subtle), which this runtime lacks").into()
        );
    };
    Ok((JsCipher { subtle, encrypt, decrypt, keys }, migrate))
}

impl JsCipher {
    /// Starts `encrypt` or `decrypt`; the promise, or what it threw.
    fn call(&self, f: &Function, key: usize, nonce: [u8; NONCE_LEN], aad: Vec<u8>, data: Vec<u8>) -> JsValue {
        let params = Object::new();
        let _ = Reflect::set(&params, &"name".into(), &"AES-GCM".into());
        let _ = Reflect::set(&params, &"iv".into(), &Uint8Array::from(&nonce[..]));
        let _ = Reflect::set(&params, &"additionalData".into(), &Uint8Array::from(&aad[..]));
        match f.call3(&self.subtle, &params, &self.keys[key], &Uint8Array::from(&data[..])) {
            Ok(promise) => promise,
            Err(thrown) => js_sys::Promise::reject(&thrown).into(),
        }
    }
}

fn bytes(buffer: JsValue) -> Vec<u8> {
    Uint8Array::new(&buffer).to_vec()
}

impl Cipher for JsCipher {
    fn key_count(&self) -> usize {
        self.keys.len()
    }

    fn seal(
        &self,
        key: usize,
        nonce: [u8; NONCE_LEN],
        aad: Vec<u8>,
        plaintext: Vec<u8>,
    ) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        let promise =
            JsFuture::from(js_sys::Promise::from(self.call(&self.encrypt, key, nonce, aad, plaintext)));
        Box::pin(async move {
            promise
                .await
                .map(bytes)
                .map_err(|e| Error::invalid(format!("encryption failed: {}", describe(&e))))
        })
    }

    fn open(
        &self,
        key: usize,
        nonce: [u8; NONCE_LEN],
        aad: Vec<u8>,
        sealed: Vec<u8>,
    ) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>>> {
        let promise =
            JsFuture::from(js_sys::Promise::from(self.call(&self.decrypt, key, nonce, aad, sealed)));
        Box::pin(async move {
            match promise.await {
                Ok(buffer) => Ok(Some(bytes(buffer))),
                // WebCrypto's answer to a tag that does not verify.
                Err(e)
                    if e.dyn_ref::<web_sys::DomException>().is_some_and(|d| d.name() == "OperationError") =>
                {
                    Ok(None)
                }
                Err(e) => Err(Error::invalid(format!("decryption failed: {}", describe(&e)))),
            }
        })
    }
}
