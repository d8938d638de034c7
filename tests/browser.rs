//! The wasm build in real headless Chromium: IndexedDB through web-sys, the
//! store conformance suite on it, and the JS-facing API's errors.
#![cfg(target_arch = "wasm32")]

use agent_memory::store::{conformance, Store};
use agent_memory::wasm::indexeddb::IndexedDbStore;
use agent_memory::{Kind, MemoryEntry, Role, Scope};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn indexeddb_passes_the_store_conformance_suite() {
    IndexedDbStore::delete_database("conformance").await.unwrap();
    let store = IndexedDbStore::open("conformance").await.unwrap();
    conformance::run(&store).await.unwrap();
    store.close();
}

#[wasm_bindgen_test]
async fn an_entry_round_trips_through_indexeddb_with_its_timestamp() {
    IndexedDbStore::delete_database("roundtrip").await.unwrap();
    let mut entry =
        MemoryEntry::new("我喜欢用 Rust 写代码 😀", Kind::Fact, Role::User, Scope::User, 1_700_000_000_123);
    entry.metadata.insert("source".into(), "test".into());
    let store = IndexedDbStore::open("roundtrip").await.unwrap();
    store
        .put_many(vec![(format!("entry/{}", entry.id), serde_json::to_string(&entry).unwrap())])
        .await
        .unwrap();
    store.close();

    // A new connection sees the same record, timestamp untouched.
    let reopened = IndexedDbStore::open("roundtrip").await.unwrap();
    let raw = reopened.get(&format!("entry/{}", entry.id)).await.unwrap().expect("entry persisted");
    let back: MemoryEntry = serde_json::from_str(&raw).unwrap();
    assert_eq!(back, entry);
    assert_eq!(back.timestamp, 1_700_000_000_123);
    reopened.close();
}

#[wasm_bindgen_test]
async fn namespaces_are_separate_databases() {
    IndexedDbStore::delete_database("tenant-a").await.unwrap();
    IndexedDbStore::delete_database("tenant-b").await.unwrap();
    let a = IndexedDbStore::open("tenant-a").await.unwrap();
    let b = IndexedDbStore::open("tenant-b").await.unwrap();
    a.put_many(vec![("k".into(), "a".into())]).await.unwrap();
    assert_eq!(b.get("k").await.unwrap(), None);
    assert!(IndexedDbStore::open("").await.is_err());
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn indexeddb_scans_a_prefix_of_many_parts_whole_and_once() {
    // 2,500 records are three parts of a scan, read at once in one
    // transaction; keys of other prefixes around them stay out.
    IndexedDbStore::delete_database("scan").await.unwrap();
    let store = IndexedDbStore::open("scan").await.unwrap();
    let mut items: Vec<(String, String)> =
        (0..2500).map(|i| (format!("lt/entry/{i:05}"), format!("{{\"n\":{i}}}"))).collect();
    items.push(("lt/entrz".into(), "after".into()));
    items.push(("lt/entr".into(), "before".into()));
    store.put_many(items.clone()).await.unwrap();
    let mut parts = Vec::new();
    store.scan("lt/entry/", &mut |part| parts.push(part)).await.unwrap();
    assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [1000, 1000, 500]);
    let mut all: Vec<(String, String)> = parts.concat();
    all.sort();
    assert_eq!(all, items[..2500]);
    assert_eq!(store.list("lt/entry/").await.unwrap(), items[..2500]);
    store.close();
}
