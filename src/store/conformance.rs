//! The behaviour every `Store` backend must show, as one async function that
//! native tests, browser tests (IndexedDB) and Node tests (JS adapters) all
//! run against their backend. It expects an empty store and leaves it empty.

use super::Store;
use crate::error::{Error, Result};

fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::storage(format!("store conformance: {what}")))
    }
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// Every part [`Store::scan`] hands over under `prefix`, in key order.
pub async fn scanned(store: &dyn Store, prefix: &str) -> Result<Vec<(String, String)>> {
    let mut all = Vec::new();
    store.scan(prefix, &mut |page| all.extend(page)).await?;
    crate::order::sort(&mut all);
    Ok(all)
}

pub async fn run(store: &dyn Store) -> Result<()> {
    check(store.list("").await?.is_empty(), "a new store is empty")?;
    check(store.get("missing").await?.is_none(), "get of a missing key is None")?;

    store
        .put_many(vec![
            kv("entry/b", "{\"n\":2}"),
            kv("entry/a", "{\"n\":1}"),
            kv("entryx", "other"),
            kv("session/s1/0001", "你好 😀"),
        ])
        .await?;
    check(store.get("entry/a").await?.as_deref() == Some("{\"n\":1}"), "get returns what put wrote")?;
    check(store.get("session/s1/0001").await?.as_deref() == Some("你好 😀"), "values keep non-ASCII text")?;
    let asked = ["entry/b", "missing", "entry/a"].map(String::from);
    check(
        store.get_many(&asked).await? == [Some("{\"n\":2}".into()), None, Some("{\"n\":1}".into())],
        "get_many returns each key's value in the order asked",
    )?;
    check(store.get_many(&[]).await?.is_empty(), "get_many of no key")?;

    // Values as they come: empty, and large (a long summary, a vector as
    // text). 48 KB: Deno KV refuses values over 64 KB.
    let large = "长".repeat(16_000);
    store.put_many(vec![kv("value/empty", ""), kv("value/large", &large)]).await?;
    check(
        store.get("value/empty").await?.as_deref() == Some(""),
        "an empty value is a value, not a missing key",
    )?;
    check(
        store.get("value/large").await?.as_deref() == Some(large.as_str()),
        "a 48 KB value comes back whole",
    )?;
    store.delete_many(vec!["value/empty".into(), "value/large".into()]).await?;

    let listed = store.list("entry/").await?;
    check(
        listed == vec![kv("entry/a", "{\"n\":1}"), kv("entry/b", "{\"n\":2}")],
        "list returns exactly the prefix's keys, in key order",
    )?;
    check(scanned(store, "entry/").await? == listed, "scan hands over what list returns, each key once")?;

    store.put_many(vec![kv("entry/a", "{\"n\":3}")]).await?;
    check(store.get("entry/a").await?.as_deref() == Some("{\"n\":3}"), "put overwrites")?;

    // Check-and-write: nothing when the check fails, all when it holds.
    let overwrite = vec![kv("entry/c", "x"), kv("entry/a", "{\"n\":4}")];
    check(!store.put_many_if("gen", Some("1"), overwrite).await?, "a failed check writes")?;
    check(store.get("entry/c").await?.is_none(), "a failed check wrote nothing")?;
    check(store.get("entry/a").await?.as_deref() == Some("{\"n\":3}"), "a failed check overwrote nothing")?;
    check(
        store.put_many_if("gen", None, vec![kv("gen", "1"), kv("entry/c", "x")]).await?,
        "a check of an absent key",
    )?;
    check(store.put_many_if("gen", Some("1"), vec![kv("gen", "2")]).await?, "a check that holds writes")?;
    check(store.get("gen").await?.as_deref() == Some("2"), "a check-and-write wrote")?;
    store.delete_many(vec!["gen".into(), "entry/c".into()]).await?;

    store.delete_many(vec!["entry/a".into(), "never-there".into()]).await?;
    check(store.get("entry/a").await?.is_none(), "delete removes the key")?;
    check(store.list("entry").await?.len() == 2, "delete leaves other keys")?;

    let keys: Vec<String> = store.list("").await?.into_iter().map(|(k, _)| k).collect();
    store.delete_many(keys).await?;
    check(store.list("").await?.is_empty(), "deleting every key empties the store")?;
    Ok(())
}
