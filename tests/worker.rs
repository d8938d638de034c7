//! The same IndexedDB backend inside a dedicated worker, where there is no
//! `window`: the store finds `indexedDB` on the global object.
#![cfg(target_arch = "wasm32")]

use agent_memory::store::conformance;
use agent_memory::wasm::indexeddb::IndexedDbStore;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn indexeddb_works_in_a_dedicated_worker() {
    IndexedDbStore::delete_database("worker-conformance").await.unwrap();
    let store = IndexedDbStore::open("worker-conformance").await.unwrap();
    conformance::run(&store).await.unwrap();
    store.close();
}
