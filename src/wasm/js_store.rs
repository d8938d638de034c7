//! The `Store` port on any JS object with async `get / put / delete / list`:
//! how Durable Object storage, Deno KV, a server or a plain `Map` plug in.
//!
//! ```ts
//! interface StorageAdapter {
//!   get(key: string): Promise<string | undefined | null>;
//!   put(key: string, value: string): Promise<void>;
//!   delete(key: string): Promise<void>;
//!   list(prefix: string): Promise<Iterable<[string, string]>>;  // Map, array of pairs, DO storage.list()
//!   putMany?(entries: Record<string, string>): Promise<void>;    // atomic batch, where the backend has one
//!   // Writes `entries` only if `check` holds `expected` (undefined: absent), in one atomic step;
//!   // says whether it wrote. Without it, a read then a write (correct within one realm only).
//!   putManyIf?(check: string, expected: string | undefined, entries: Record<string, string>): Promise<boolean>;
//! }
//! ```
//! Every key is prefixed with `<namespace>/`, so namespaces sharing one
//! backend never see each other's keys. The core times its calls out
//! ([`crate::store::Timed`]).

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, Result};
use crate::ports::LocalBoxFuture;
use crate::store::namespace::Namespace;
use crate::store::Store;

pub struct JsStore {
    adapter: JsValue,
    namespace: Namespace,
}

fn adapter_error(op: &str, e: JsValue) -> Error {
    Error::storage(format!("storage adapter {op} failed: {}", super::describe(&e)))
}

fn method(adapter: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(adapter, &JsValue::from_str(name)).ok()?.dyn_into::<Function>().ok()
}

impl JsStore {
    /// Checks the adapter has the four methods.
    pub fn new(adapter: JsValue, namespace: &str) -> Result<JsStore> {
        for m in ["get", "put", "delete", "list"] {
            if method(&adapter, m).is_none() {
                return Err(Error::invalid(format!("storage adapter has no {m}() method")));
            }
        }
        Ok(JsStore { adapter, namespace: Namespace::new(namespace) })
    }

    async fn call(&self, op: &str, args: &[JsValue]) -> Result<JsValue> {
        let f = method(&self.adapter, op)
            .ok_or_else(|| Error::storage(format!("storage adapter lost {op}()")))?;
        let arr: js_sys::Array = args.iter().collect();
        let out = f.apply(&self.adapter, &arr).map_err(|e| adapter_error(op, e))?;
        super::settle(out).await.map_err(|e| adapter_error(op, e))
    }

    async fn get_impl(&self, key: &str) -> Result<Option<String>> {
        let v = self.call("get", &[JsValue::from_str(&self.namespace.key(key))]).await?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        v.as_string().map(Some).ok_or_else(|| Error::storage("storage adapter get() returned a non-string"))
    }

    /// `items` as the object `putMany` and `putManyIf` take, keys prefixed.
    fn entries(&self, op: &str, items: &[(String, String)]) -> Result<Object> {
        let obj = Object::new();
        for (k, v) in items {
            Reflect::set(&obj, &JsValue::from_str(&self.namespace.key(k)), &JsValue::from_str(v))
                .map_err(|e| adapter_error(op, e))?;
        }
        Ok(obj)
    }

    async fn put_many_impl(&self, items: Vec<(String, String)>) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        if method(&self.adapter, "putMany").is_some() {
            let obj = self.entries("putMany", &items)?;
            self.call("putMany", &[obj.into()]).await?;
            return Ok(());
        }
        for (k, v) in items {
            self.call("put", &[JsValue::from_str(&self.namespace.key(&k)), JsValue::from_str(&v)]).await?;
        }
        Ok(())
    }

    async fn delete_many_impl(&self, keys: Vec<String>) -> Result<()> {
        for k in keys {
            self.call("delete", &[JsValue::from_str(&self.namespace.key(&k))]).await?;
        }
        Ok(())
    }

    async fn list_impl(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let listed = self.call("list", &[JsValue::from_str(&self.namespace.key(prefix))]).await?;
        let iter = js_sys::try_iter(&listed).map_err(|e| adapter_error("list", e))?.ok_or_else(|| {
            Error::storage("storage adapter list() must return an iterable of [key, value]")
        })?;
        let mut pairs = Vec::new();
        for pair in iter {
            let pair = pair.map_err(|e| adapter_error("list", e))?;
            let k = Reflect::get_u32(&pair, 0).ok().and_then(|k| k.as_string());
            let v = Reflect::get_u32(&pair, 1).ok().and_then(|v| v.as_string());
            let (Some(k), Some(v)) = (k, v) else {
                return Err(Error::storage(
                    "storage adapter list() yielded something other than [string, string]",
                ));
            };
            pairs.push((k, v));
        }
        Ok(self.namespace.listed(prefix, pairs))
    }
}

impl Store for JsStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(self.get_impl(key))
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.put_many_impl(items))
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.delete_many_impl(keys))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        Box::pin(self.list_impl(prefix))
    }

    /// The adapter's own atomic `putManyIf` where it has one (Deno KV, a
    /// Durable Object): writers in other processes can then never both pass
    /// one check. Else a read, then a write.
    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            if method(&self.adapter, "putManyIf").is_none() {
                return crate::store::read_then_write(self, check, expected, items).await;
            }
            let obj = self.entries("putManyIf", &items)?;
            let check = JsValue::from_str(&self.namespace.key(check));
            let expected = expected.map_or(JsValue::UNDEFINED, JsValue::from_str);
            let done = self.call("putManyIf", &[check, expected, obj.into()]).await?;
            done.as_bool().ok_or_else(|| Error::storage("storage adapter putManyIf() must return a boolean"))
        })
    }
}
