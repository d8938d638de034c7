//! The IndexedDB backend of the `Store` port, for pages and browser workers.
//!
//! One database per namespace (`agent-memory/<namespace>`), so one user's
//! data can be deleted or exported without touching another's. Requests are
//! turned into promises by handing the promise's own `resolve` / `reject` to
//! `onsuccess` / `onerror`: no Rust closures to keep alive or leak.
//!
//! Schema (version 4): one store, `records`, holds the port's keys and
//! values, each the JSON text bare, but a vector: `{ model, vector:
//! Float32Array }`. Its `scope`, `kind` and `time` indexes served memories
//! kept one per record as `{ v, scope, kind, time }`, which an earlier
//! release wrote and is still read; memories now live in the long-term
//! log's records (`crate::longterm::log`), and opening converts the old
//! ones. Version 3 mirrored the
//! index fields in a second store, two puts per memory: a batch took about
//! 1.7 times as long (`npm run bench:store` prints the raw floors of both
//! layouts). Version 1 had bare records only; version 2 stored every value
//! as `{ v }` with the index fields on memories. Opening an older database
//! migrates it inside the upgrade transaction, so a migration is all or
//! nothing.
//!
//! Other tabs: when another tab upgrades or deletes the database
//! (`versionchange`), this connection closes at once, so the other tab is
//! never blocked by it, and reopens on its next call (a deleted namespace
//! is created anew; a newer schema than this code knows is a typed error).
//! A connection the browser closes on its own (`close`: a disk error, a
//! full disk, site data cleared) is not reopened: Chromium discards a
//! database it found damaged when it is next opened, and an instance that
//! went on writing into the new, empty one would silently disagree with it.
//! Every later call fails with a `STORAGE` error that says so; a reload
//! starts over from what the browser kept.
//! When this tab's open is blocked by a tab that does not close (an older
//! version of this library, or other code), the open fails with `BLOCKED`
//! instead of hanging, and the connection, should it open later, is closed.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    IdbDatabase, IdbFactory, IdbKeyRange, IdbObjectStore, IdbRequest, IdbTransaction, IdbTransactionMode,
};

use crate::embed::vectors;
use crate::error::{Error, ErrorCode, Result};
use crate::ports::LocalBoxFuture;
use crate::store::layout::vector_id_of;
use crate::store::{Parts, Store};

const SCHEMA_VERSION: u32 = 4;
const RECORDS: &str = "records";
/// The store of version 3's index rows, dropped by the migration.
const MEMORIES_V3: &str = "memories";
/// Index names of `records`, each on the field of that name.
const INDEXES: [&str; 3] = ["scope", "kind", "time"];
/// Records per part of a scan: small enough that a part's handling hides
/// behind the reading of the next, large enough that the parts' round
/// trips stay few (10 for 10,000 memories).
const SCAN_PART: u32 = 1000;

/// What `records` keeps for a port value: a vector as `{ model, vector:
/// Float32Array }` (binary, a quarter of its text's size, readable as
/// numbers in devtools); anything else the text bare. (A memory of an
/// earlier release kept its indexed fields beside its text; memories now
/// live in the long-term log's records.)
fn stored_value(key: &str, json: &str) -> JsValue {
    let set = |row: &js_sys::Object, name: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(row, &name.into(), value);
    };
    if vector_id_of(key).is_some() {
        if let Ok((model, vector)) = vectors::decode(json) {
            let row = js_sys::Object::new();
            set(&row, "model", &JsValue::from_str(&model));
            set(&row, "vector", &js_sys::Float32Array::from(&vector[..]).into());
            return row.into();
        }
    }
    JsValue::from_str(json)
}

/// Handed over for a stored value of no shape this library writes, so that
/// its reader reports the record damaged instead of taking it for absent:
/// no JSON reader, vector decoder or number parser accepts it.
const UNREADABLE: &str = "\u{0}a value of no shape agent-memory writes";

/// The port value of a stored value (`undefined`: none).
fn record_text(value: &JsValue) -> Option<String> {
    if value.is_undefined() {
        return None;
    }
    Some(readable_text(value).unwrap_or_else(|| UNREADABLE.to_string()))
}

/// The text of a stored value: JSON text bare (versions 1, 3 and 4),
/// `{ v, ... }` (a memory of 4, any value of 2), or a vector row.
fn readable_text(value: &JsValue) -> Option<String> {
    if let Some(text) = value.as_string() {
        return Some(text);
    }
    let field = |name: &str| js_sys::Reflect::get(value, &name.into()).ok();
    if let Some(text) = field("v").and_then(|v| v.as_string()) {
        return Some(text);
    }
    let vector = field("vector")?.dyn_into::<js_sys::Float32Array>().ok()?;
    Some(vectors::encode(&field("model")?.as_string()?, &vector.to_vec()))
}

/// Issues the puts of `items` in `tx`; aborts it on the first that fails.
fn put_all(tx: &IdbTransaction, records: &IdbObjectStore, items: &[(String, String)]) -> Result<()> {
    for (k, v) in items {
        if let Err(e) = records.put_with_key(&stored_value(k, v), &JsValue::from_str(k)) {
            let _ = tx.abort();
            return Err(idb_error("put", e));
        }
    }
    Ok(())
}

/// The upgrade step: creates what is missing and migrates older records.
fn upgrade(
    db: &IdbDatabase,
    tx: Option<IdbTransaction>,
    old_version: u32,
) -> std::result::Result<(), JsValue> {
    let names = db.object_store_names();
    let tx = tx.ok_or_else(|| JsValue::from_str("no upgrade transaction"))?;
    let records =
        if names.contains(RECORDS) { tx.object_store(RECORDS)? } else { db.create_object_store(RECORDS)? };
    if names.contains(MEMORIES_V3) {
        db.delete_object_store(MEMORIES_V3)?;
    }
    let existing = records.index_names();
    for name in INDEXES {
        if !existing.contains(name) {
            let params = web_sys::IdbIndexParameters::new();
            params.set_unique(false);
            records.create_index_with_str_and_optional_parameters(name, name, &params)?;
        }
    }
    if (1..SCHEMA_VERSION).contains(&old_version) {
        let keys = records.get_all_keys()?;
        let values = records.get_all()?;
        // Requests of one transaction complete in order: when the values
        // are in, so are the keys. Puts issued here join the same upgrade.
        let rewrite = Closure::once_into_js({
            let (records, keys, values) = (records.clone(), keys.clone(), values.clone());
            move |_: web_sys::Event| {
                let (Ok(keys), Ok(values)) = (keys.result(), values.result()) else { return };
                let (keys, values): (Array, Array) = (keys.unchecked_into(), values.unchecked_into());
                for (k, v) in keys.iter().zip(values.iter()) {
                    let (Some(key), Some(json)) = (k.as_string(), readable_text(&v)) else { continue };
                    // Version 2's `{ v }` becomes the bare text.
                    let is_vector_row = !v.is_string() && vector_id_of(&key).is_some();
                    if !(v.is_string() || is_vector_row) {
                        let _ = records.put_with_key(&stored_value(&key, &json), &k);
                    }
                }
            }
        });
        values.set_onsuccess(Some(rewrite.unchecked_ref()));
    }
    Ok(())
}

/// Maps a DOM exception (or anything thrown) to a typed storage error.
fn idb_error(context: &str, value: JsValue) -> Error {
    let (name, message) = match value.dyn_ref::<web_sys::DomException>() {
        Some(d) => (d.name(), d.message()),
        None => ("Error".to_string(), super::describe(&value)),
    };
    // Chromium reports a full disk under the origin's quota as an
    // UnknownError whose message names the file error.
    let out_of_space =
        name == "QuotaExceededError" || message.contains("NO_SPACE") || message.contains("No space");
    let code = if out_of_space { ErrorCode::QuotaExceeded } else { ErrorCode::Storage };
    Error::new(code, format!("IndexedDB {context}: {name}: {message}"))
}

/// `indexedDB` from the global object, so this works in windows and workers.
fn factory() -> Result<IdbFactory> {
    let global = js_sys::global();
    let idb =
        js_sys::Reflect::get(&global, &JsValue::from_str("indexedDB")).map_err(|e| idb_error("lookup", e))?;
    if idb.is_undefined() || idb.is_null() {
        return Err(Error::storage("IndexedDB is not available in this runtime"));
    }
    Ok(idb.unchecked_into())
}

/// Waits for a request; its error (not the event) becomes the error. The
/// handlers are set at the call, not at the first poll: a request awaited
/// after others keeps its outcome when its event fired meanwhile.
fn request_done(
    req: &IdbRequest,
    context: &'static str,
) -> impl std::future::Future<Output = Result<JsValue>> {
    let promise = Promise::new(&mut |resolve, reject| {
        req.set_onsuccess(Some(&resolve));
        req.set_onerror(Some(&reject));
    });
    let req = req.clone();
    async move {
        match JsFuture::from(promise).await {
            Ok(_) => req.result().map_err(|e| idb_error(context, e)),
            Err(_) => {
                Err(idb_error(context, req.error().ok().flatten().map_or(JsValue::NULL, JsValue::from)))
            }
        }
    }
}

/// Waits for a transaction to commit (or fail, or abort); like
/// [`request_done`], the handlers are set at the call. A transaction that
/// aborts with no error of its own, when this library did not abort it, is
/// the browser closing the database (a full disk); its `close` event
/// follows, so the error says so now rather than `null`.
fn transaction_done(
    tx: &IdbTransaction,
    context: &'static str,
) -> impl std::future::Future<Output = Result<()>> {
    let promise = Promise::new(&mut |resolve, reject| {
        tx.set_oncomplete(Some(&resolve));
        tx.set_onerror(Some(&reject));
        tx.set_onabort(Some(&reject));
    });
    let tx = tx.clone();
    async move {
        match JsFuture::from(promise).await {
            Ok(_) => Ok(()),
            Err(_) => Err(tx.error().map_or_else(lost_error, |e| idb_error(context, e.into()))),
        }
    }
}

pub struct IndexedDbStore {
    namespace: String,
    /// The open connection; `None` once another tab's `versionchange` or
    /// the browser closed it (the next call reopens).
    db: Rc<RefCell<Option<IdbDatabase>>>,
    /// Set once the browser closed the connection itself: never reopened.
    lost: Rc<Cell<bool>>,
}

/// The error of every call after the browser closed the connection.
fn lost_error() -> Error {
    Error::storage(
        "IndexedDB: the browser closed the database after a storage failure (a full disk, a damaged file, \
         or site data cleared); this instance no longer writes to it: reload the page",
    )
}

/// Opens (creating or migrating) a namespace's database.
async fn open_database(name: &str) -> Result<IdbDatabase> {
    let req = factory()?.open_with_u32(name, SCHEMA_VERSION).map_err(|e| idb_error("open", e))?;
    // Migrations run in `onupgradeneeded`, before success fires, keyed on
    // the event's old version. A failure aborts the upgrade transaction,
    // which fails the open and leaves the old version as it was.
    let on_upgrade = Closure::once_into_js({
        let req = req.clone();
        move |event: web_sys::IdbVersionChangeEvent| {
            let Ok(result) = req.result() else { return };
            let db: IdbDatabase = result.unchecked_into();
            if upgrade(&db, req.transaction(), event.old_version() as u32).is_err() {
                if let Some(tx) = req.transaction() {
                    let _ = tx.abort();
                }
            }
        }
    });
    req.set_onupgradeneeded(Some(on_upgrade.unchecked_ref()));
    let blocked = Promise::new(&mut |resolve, _| req.set_onblocked(Some(&resolve)));
    let done = request_done(&req, "open");
    futures::pin_mut!(done);
    match futures::future::select(done, JsFuture::from(blocked)).await {
        futures::future::Either::Left((db, _)) => {
            req.set_onupgradeneeded(None);
            req.set_onblocked(None);
            Ok(db?.unchecked_into())
        }
        futures::future::Either::Right(_) => {
            // Should the open succeed once the other tab lets go, the
            // connection is closed rather than left open unowned.
            let close = Closure::once_into_js({
                let req = req.clone();
                move |_: web_sys::Event| {
                    if let Ok(db) = req.result() {
                        db.unchecked_into::<IdbDatabase>().close();
                    }
                }
            });
            req.set_onsuccess(Some(close.unchecked_ref()));
            Err(Error::new(
                ErrorCode::Blocked,
                format!("IndexedDB open of {name:?} is blocked: another tab holds an older version open; close or reload it"),
            ))
        }
    }
}

impl IndexedDbStore {
    /// The database name for a namespace.
    pub fn database_name(namespace: &str) -> String {
        format!("agent-memory/{namespace}")
    }

    /// Opens (creating or migrating) the namespace's database.
    pub async fn open(namespace: &str) -> Result<IndexedDbStore> {
        if namespace.is_empty() {
            return Err(Error::invalid("namespace must not be empty"));
        }
        let store =
            IndexedDbStore { namespace: namespace.to_string(), db: Rc::default(), lost: Rc::default() };
        store.connection().await?;
        Ok(store)
    }

    /// The open connection, reopened after another tab's `versionchange`
    /// or the browser closed it.
    async fn connection(&self) -> Result<IdbDatabase> {
        if self.lost.get() {
            return Err(lost_error());
        }
        if let Some(db) = self.db.borrow().as_ref() {
            return Ok(db.clone());
        }
        let db = open_database(&Self::database_name(&self.namespace)).await?;
        let on_version_change = Closure::<dyn Fn()>::new({
            let (slot, db) = (Rc::downgrade(&self.db), db.clone());
            move || {
                db.close();
                if let Some(slot) = slot.upgrade() {
                    slot.borrow_mut().take();
                }
            }
        });
        db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        let on_close = Closure::<dyn Fn()>::new({
            let (slot, lost) = (Rc::downgrade(&self.db), Rc::downgrade(&self.lost));
            move || {
                if let (Some(slot), Some(lost)) = (slot.upgrade(), lost.upgrade()) {
                    lost.set(true);
                    slot.borrow_mut().take();
                }
            }
        });
        db.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        // Both live as long as the connection's handlers may fire: the page's life.
        on_version_change.forget();
        on_close.forget();
        *self.db.borrow_mut() = Some(db.clone());
        Ok(db)
    }

    /// Closes the connection (the data stays).
    pub fn close(&self) {
        if let Some(db) = self.db.borrow_mut().take() {
            db.close();
        }
    }

    /// Deletes a namespace's whole database. Open connections of this
    /// library close on the `versionchange` it fires.
    pub async fn delete_database(namespace: &str) -> Result<()> {
        let req = factory()?
            .delete_database(&Self::database_name(namespace))
            .map_err(|e| idb_error("delete database", e))?;
        request_done(&req, "delete database").await.map(|_| ())
    }

    /// A transaction over `stores`. A connection found closing is one the
    /// browser closed whose `close` event has not fired yet: it is lost.
    async fn transaction(&self, stores: &[&str], mode: IdbTransactionMode) -> Result<IdbTransaction> {
        let names: Array = stores.iter().map(|s| JsValue::from_str(s)).collect();
        let db = self.connection().await?;
        db.transaction_with_str_sequence_and_mode(&names, mode).map_err(|e| {
            if e.dyn_ref::<web_sys::DomException>().is_some_and(|d| d.name() == "InvalidStateError") {
                self.lost.set(true);
                self.db.borrow_mut().take();
                lost_error()
            } else {
                idb_error("transaction", e)
            }
        })
    }

    async fn records(&self, mode: IdbTransactionMode) -> Result<(IdbTransaction, IdbObjectStore)> {
        let tx = self.transaction(&[RECORDS], mode).await?;
        let store = tx.object_store(RECORDS).map_err(|e| idb_error("transaction", e))?;
        Ok((tx, store))
    }

    async fn get_impl(&self, key: &str) -> Result<Option<String>> {
        Ok(self.get_many_impl(&[key.to_string()]).await?.pop().flatten())
    }

    /// Every get asked for at once, in one transaction.
    async fn get_many_impl(&self, keys: &[String]) -> Result<Vec<Option<String>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (tx, store) = self.records(IdbTransactionMode::Readonly).await?;
        let done = transaction_done(&tx, "get");
        let mut asked = Vec::with_capacity(keys.len());
        for key in keys {
            let req = store.get(&JsValue::from_str(key)).map_err(|e| idb_error("get", e))?;
            asked.push(request_done(&req, "get"));
        }
        let mut values = Vec::with_capacity(keys.len());
        for answer in asked {
            match answer.await {
                Ok(value) => values.push(record_text(&value)),
                // The browser aborted the reads: the transaction's
                // outcome says whether it closed the database.
                Err(read) => return Err(done.await.err().unwrap_or(read)),
            }
        }
        Ok(values)
    }

    async fn put_many_impl(&self, items: Vec<(String, String)>) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let (tx, records) = self.records(IdbTransactionMode::Readwrite).await?;
        put_all(&tx, &records, &items)?;
        transaction_done(&tx, "put").await
    }

    /// The check and the write in one transaction, asked for together: the
    /// puts queue behind the read, so the browser is already writing while
    /// the read's answer comes back, and a check that fails aborts the
    /// transaction, which discards them (requests complete in order, and the
    /// read's answer arrives before the transaction can commit).
    async fn put_many_if_impl(
        &self,
        check: &str,
        expected: Option<&str>,
        items: Vec<(String, String)>,
    ) -> Result<bool> {
        let (tx, records) = self.records(IdbTransactionMode::Readwrite).await?;
        let req = records.get(&JsValue::from_str(check)).map_err(|e| idb_error("get", e))?;
        let current = request_done(&req, "get");
        put_all(&tx, &records, &items)?;
        let done = transaction_done(&tx, "put");
        let current = match current.await {
            Ok(current) => current,
            // The puts failed (a full disk) and aborted the read with them:
            // the transaction's error says why.
            Err(read) => return Err(done.await.err().unwrap_or(read)),
        };
        if record_text(&current).as_deref() != expected {
            let _ = tx.abort();
            // Settled before the caller reads again: the abort's event.
            let _ = done.await;
            return Ok(false);
        }
        done.await?;
        Ok(true)
    }

    async fn delete_many_impl(&self, keys: Vec<String>) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let (tx, records) = self.records(IdbTransactionMode::Readwrite).await?;
        for k in &keys {
            if let Err(e) = records.delete(&JsValue::from_str(k)) {
                let _ = tx.abort();
                return Err(idb_error("delete", e));
            }
        }
        transaction_done(&tx, "delete").await
    }

    async fn list_impl(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        self.scan_impl(prefix, &mut |page| out.extend(page)).await?;
        // IndexedDB orders by UTF-16 code units; the port promises UTF-8 order.
        crate::order::sort_by(&mut out, |a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The keys first, then every part's values asked for at once, in one
    /// transaction (one snapshot): the browser reads part after part while
    /// this tab hands each over as it arrives. The first part is asked for
    /// with the keys, so a namespace of one part costs one round trip.
    async fn scan_impl(&self, prefix: &str, page: Parts<'_>) -> Result<()> {
        let (_tx, store) = self.records(IdbTransactionMode::Readonly).await?;
        // Every key that starts with the prefix sorts between it and the
        // prefix followed by the highest UTF-16 code unit.
        let (low, high) = (JsValue::from_str(prefix), JsValue::from_str(&format!("{prefix}\u{FFFF}")));
        let range = IdbKeyRange::bound(&low, &high).map_err(|e| idb_error("list", e))?;
        let ask = |req: std::result::Result<IdbRequest, JsValue>| {
            req.map(|r| request_done(&r, "list")).map_err(|e| idb_error("list", e))
        };
        let keys = ask(store.get_all_keys_with_key(&range))?;
        let first = ask(store.get_all_with_key_and_limit(&range, SCAN_PART))?;
        let keys: Array = keys.await?.unchecked_into();
        let n = keys.length();
        let mut parts = vec![(0, n.min(SCAN_PART), first)];
        for start in (SCAN_PART..n).step_by(SCAN_PART as usize) {
            let end = (start + SCAN_PART).min(n);
            let part = IdbKeyRange::bound(&keys.get(start), &keys.get(end - 1))
                .and_then(|r| store.get_all_with_key(&r));
            parts.push((start, end, ask(part)?));
        }
        for (start, end, values) in parts {
            let values: Array = values.await?.unchecked_into();
            if values.length() != end - start {
                return Err(Error::storage("IndexedDB list: a part's values do not match its keys"));
            }
            page(
                (start..end)
                    .zip(values.iter())
                    .filter_map(|(i, v)| Some((keys.get(i).as_string()?, record_text(&v)?)))
                    .filter(|(k, _)| k.starts_with(prefix))
                    .collect(),
            );
        }
        Ok(())
    }
}

impl Store for IndexedDbStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(self.get_impl(key))
    }

    fn get_many<'a>(&'a self, keys: &'a [String]) -> LocalBoxFuture<'a, Result<Vec<Option<String>>>> {
        Box::pin(self.get_many_impl(keys))
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.put_many_impl(items))
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.delete_many_impl(keys))
    }

    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(self.put_many_if_impl(check, expected, items))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        Box::pin(self.list_impl(prefix))
    }

    fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.scan_impl(prefix, page))
    }
}
