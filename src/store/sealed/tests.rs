//! SealedStore under native AES-GCM: sealing, wrong and unknown keys,
//! tampering, rotation and its word to older instances, sealed exports,
//! and the store conformance suite through the seal.

use futures::executor::block_on;

use super::testing::TestCipher;
use super::*;
use crate::error::ErrorCode;
use crate::store::MemoryStore;

fn sealed(raw: &Rc<MemoryStore>, seeds: &[u8], migrate: bool) -> Result<SealedStore> {
    block_on(SealedStore::encrypted(raw.clone(), TestCipher::new(seeds), "ns", Rc::default(), migrate))
}

/// Namespace "ns" under key 1, reporting damage to `damage`.
fn logged(raw: &Rc<MemoryStore>, damage: &Rc<DamageLog>) -> SealedStore {
    logged_with(raw, &[1], damage)
}

/// Namespace "ns" under the keys of `seeds`, reporting damage to `damage`.
fn logged_with(raw: &Rc<MemoryStore>, seeds: &[u8], damage: &Rc<DamageLog>) -> SealedStore {
    block_on(SealedStore::encrypted(raw.clone(), TestCipher::new(seeds), "ns", damage.clone(), false))
        .unwrap()
}

#[test]
fn values_are_sealed_and_read_back_and_the_backend_sees_no_plain_text() {
    let raw = Rc::new(MemoryStore::new());
    let store = sealed(&raw, &[1], false).unwrap();
    block_on(async {
        let items = vec![("m/1".to_string(), "{\"content\":\"lives in Lisbon\"}".to_string())];
        store.put_many(items.clone()).await.unwrap();
        store.put_many(vec![("m/2".into(), "x".repeat(100))]).await.unwrap();
        assert_eq!(store.get("m/1").await.unwrap().as_deref(), Some(items[0].1.as_str()));
        assert_eq!(store.list("m/").await.unwrap().len(), 2);
        for (_, v) in raw.list("").await.unwrap() {
            assert!(v.starts_with("amenc1.") && !v.contains("Lisbon") && !v.contains("xxxx"), "{v}");
        }
        // The same text twice seals to two different values: fresh nonces.
        store.put_many(vec![("m/3".into(), items[0].1.clone())]).await.unwrap();
        assert_ne!(raw.get("m/1").await.unwrap(), raw.get("m/3").await.unwrap());
    });
}

#[test]
fn the_wrong_key_or_none_is_a_decryption_error_never_garbage() {
    let raw = Rc::new(MemoryStore::new());
    block_on(sealed(&raw, &[1], false).unwrap().put_many(vec![("m/1".into(), "secret".into())])).unwrap();
    let wrong = sealed(&raw, &[2], false).unwrap();
    assert_eq!(block_on(wrong.list("")).unwrap_err().code, ErrorCode::Decryption);
    assert_eq!(block_on(wrong.get("m/1")).unwrap_err().code, ErrorCode::Decryption);
    let plain = SealedStore::plain(raw.clone(), Rc::default());
    assert_eq!(block_on(plain.list("")).unwrap_err().code, ErrorCode::Decryption);
    let mut parts = 0;
    let scan = block_on(plain.scan("", &mut |_| parts += 1));
    assert_eq!((scan.unwrap_err().code, parts), (ErrorCode::Decryption, 0), "nothing sealed is handed over");
    assert_eq!(
        block_on(crate::store::conformance::scanned(&wrong, "")).unwrap_err().code,
        ErrorCode::Decryption
    );
    // With the old key among the given ones, it reads.
    let rotated = sealed(&raw, &[2, 1], false).unwrap();
    assert_eq!(block_on(rotated.get("m/1")).unwrap().as_deref(), Some("secret"));
}

#[test]
fn one_value_under_an_unknown_key_is_damaged_and_blocks_nothing() {
    let raw = Rc::new(MemoryStore::new());
    let damage = Rc::new(DamageLog::default());
    let store = logged(&raw, &damage);
    block_on(store.put_many(vec![("a".into(), "one".into()), ("b".into(), "two".into())])).unwrap();
    // Bit rot: one hex digit of b's key id flipped; and a planted value.
    let b = block_on(raw.get("b")).unwrap().unwrap();
    let at = PREFIX.len();
    let digit = if b.as_bytes()[at] == b'0' { "1" } else { "0" };
    let rotted = format!("{}{digit}{}", &b[..at], &b[at + 1..]);
    block_on(raw.put_many(vec![("b".into(), rotted), ("p".into(), "amenc1.00ff00ff00ff00ff.AAAA".into())]))
        .unwrap();
    assert_eq!(block_on(logged(&raw, &damage).list("")).unwrap(), vec![("a".to_string(), "one".to_string())]);
    // A get of the rotted one first, before anything was read, too.
    let first = Rc::new(DamageLog::default());
    assert_eq!(block_on(logged(&raw, &first).get("b")).unwrap(), None);
    assert_eq!(first.list().into_iter().map(|d| d.key).collect::<Vec<_>>(), ["b"]);
    // Not counted as stale: resealing cannot touch what no key opens.
    assert_eq!(block_on(logged(&raw, &damage).stale()).unwrap(), vec![]);

    // A plain namespace with a planted sealed value reads the rest.
    let plain_raw = Rc::new(MemoryStore::new());
    block_on(
        plain_raw
            .put_many(vec![("a".into(), "{}".into()), ("p".into(), "amenc1.00ff00ff00ff00ff.AAAA".into())]),
    )
    .unwrap();
    let plain = SealedStore::plain(plain_raw.clone(), Rc::default());
    assert_eq!(block_on(plain.get("p")).unwrap(), None);
    assert_eq!(block_on(plain.list("")).unwrap().len(), 1);
    let mut seen = 0;
    block_on(SealedStore::plain(plain_raw, Rc::default()).scan("", &mut |part| seen += part.len())).unwrap();
    assert_eq!(seen, 1);
}

#[test]
fn altered_or_swapped_values_are_damaged_not_read() {
    let raw = Rc::new(MemoryStore::new());
    let damage = Rc::new(DamageLog::default());
    let store = logged(&raw, &damage);
    block_on(store.put_many(vec![("a".into(), "one".into()), ("b".into(), "two".into())])).unwrap();
    let (a, b) = (block_on(raw.get("a")).unwrap().unwrap(), block_on(raw.get("b")).unwrap().unwrap());
    // Swap the two sealed values: each fails under the other's key.
    block_on(raw.put_many(vec![("a".into(), b.clone()), ("b".into(), a)])).unwrap();
    assert_eq!(block_on(store.list("")).unwrap(), vec![]);
    // Flip one character of the ciphertext.
    let mut flipped = b.into_bytes();
    // A character of the middle: every bit of it is significant (the
    // last ones may be padding bits).
    let middle = flipped.len() / 2 + 10;
    flipped[middle] = if flipped[middle] == b'A' { b'B' } else { b'A' };
    block_on(raw.put_many(vec![("b".into(), String::from_utf8(flipped).unwrap())])).unwrap();
    assert_eq!(block_on(store.get("b")).unwrap(), None);
    // A value sealed for another namespace does not open here.
    let other =
        block_on(SealedStore::encrypted(raw.clone(), TestCipher::new(&[1]), "other", Rc::default(), false))
            .unwrap();
    assert_eq!(block_on(other.get("a")).unwrap(), None);
    // A plain value planted in the encrypted namespace is not read.
    block_on(raw.put_many(vec![("c".into(), "{\"content\":\"planted\"}".into())])).unwrap();
    assert_eq!(block_on(store.get("c")).unwrap(), None);
    let keys: Vec<String> = damage.list().into_iter().map(|d| d.key).collect();
    assert_eq!(keys, vec!["a", "b", "c"]);
}

#[test]
fn rotation_and_migration_reseal_under_the_current_key_and_resume() {
    let raw = Rc::new(MemoryStore::new());
    block_on(raw.put_many(vec![("p".into(), "plain".into())])).unwrap();
    let old = sealed(&raw, &[1], true).unwrap();
    block_on(old.put_many((0..10).map(|i| (format!("k{i}"), format!("v{i}"))).collect())).unwrap();
    let new = sealed(&raw, &[2, 1], true).unwrap();
    let stale = block_on(new.stale()).unwrap();
    assert_eq!(stale.len(), 11);
    // A pass cut short after 4; another instance rewrites k9 meanwhile.
    assert_eq!(block_on(new.reseal(&stale[..4])).unwrap(), 4);
    block_on(new.put_many(vec![("k9".into(), "newer".into())])).unwrap();
    // The next pass (a later open) finds the rest, and leaves k9 alone.
    let again = sealed(&raw, &[2, 1], true).unwrap();
    let rest = block_on(again.stale()).unwrap();
    assert_eq!(rest.len(), 6);
    assert_eq!(again.stats().unwrap().stale, 6);
    assert_eq!(block_on(again.reseal(&stale[4..])).unwrap(), 6, "k9 was read stale: its CAS fails");
    assert_eq!(block_on(again.get("k9")).unwrap().as_deref(), Some("newer"));
    assert!(block_on(again.stale()).unwrap().is_empty());
    // Now the old key is no longer needed.
    let only_new = sealed(&raw, &[2], false).unwrap();
    let mut all = block_on(only_new.list("")).unwrap();
    all.sort();
    assert_eq!(all.len(), 11);
    assert_eq!(all[0], ("k0".to_string(), "v0".to_string()));
    assert!(all.contains(&("p".to_string(), "plain".to_string())));
}

#[test]
fn an_instance_on_the_old_key_learns_of_a_rotation_and_stops_writing() {
    let raw = Rc::new(MemoryStore::new());
    let damage = Rc::new(DamageLog::default());
    let old = logged(&raw, &damage);
    block_on(old.put_many(vec![("a".into(), "one".into())])).unwrap();
    let new = sealed(&raw, &[2, 1], false).unwrap();
    let new_id = new.stats().unwrap().key_id;
    // Every write of the old instance is refused from now on, naming the key.
    let refused = block_on(old.put_many(vec![("b".into(), "two".into())])).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Decryption);
    assert!(refused.message.contains(&new_id), "{}", refused.message);
    let cas = block_on(old.put_many_if("a", Some("one"), vec![("a".into(), "1".into())]));
    assert_eq!(cas.unwrap_err().code, ErrorCode::Decryption);
    assert_eq!(block_on(raw.get("b")).unwrap(), None);
    // What it wrote before is stale for the rotator, and nothing else is.
    let stale = block_on(new.stale()).unwrap();
    assert_eq!(stale.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["a"]);
    block_on(new.reseal(&stale)).unwrap();
    block_on(new.put_many(vec![("c".into(), "three".into())])).unwrap();
    // Reading a value of the new key, or opening again, fails the same way.
    assert_eq!(block_on(old.get("c")).unwrap_err().code, ErrorCode::Decryption);
    assert_eq!(block_on(old.list("")).unwrap_err().code, ErrorCode::Decryption);
    assert_eq!(sealed(&raw, &[1], false).err().unwrap().code, ErrorCode::Decryption);
    // The old key can go: the word left for it is nobody's damage.
    let only_new = logged_with(&raw, &[2], &damage);
    assert_eq!(block_on(only_new.list("")).unwrap().len(), 2);
    assert!(damage.list().is_empty(), "{:?}", damage.list());
    // A rotation back to the first key reopens it, and the second is told.
    sealed(&raw, &[1, 2], false).unwrap();
    assert_eq!(
        block_on(only_new.put_many(vec![("d".into(), "4".into())])).unwrap_err().code,
        ErrorCode::Decryption
    );
    let back = sealed(&raw, &[1], false).unwrap();
    block_on(back.put_many(vec![("e".into(), "5".into())])).unwrap();
}

#[test]
fn planted_word_of_a_rotation_blocks_no_write() {
    let raw = Rc::new(MemoryStore::new());
    let damage = Rc::new(DamageLog::default());
    let store = logged(&raw, &damage);
    let id = store.stats().unwrap().key_id;
    let other = sealed(&Rc::new(MemoryStore::new()), &[9], false).unwrap();
    let forged = block_on(seal_with(other.keys.as_ref().unwrap(), 0, Vec::new(), "00ff")).unwrap();
    block_on(raw.put_many(vec![(moved_key(&id), forged)])).unwrap();
    block_on(store.put_many(vec![("a".into(), "one".into())])).unwrap();
    assert_eq!(block_on(store.get("a")).unwrap().as_deref(), Some("one"));
    assert!(damage.list().iter().any(|d| d.key == moved_key(&id)));
    logged(&raw, &damage);
}

#[test]
fn a_sealed_export_of_another_envelope_version_is_refused() {
    let store = sealed(&Rc::new(MemoryStore::new()), &[1], false).unwrap();
    let export = block_on(store.seal_export("{}")).unwrap();
    assert_eq!(block_on(store.open_export(&export)).unwrap(), "{}");
    let later = SealedExport { version: 2, ..export };
    assert_eq!(block_on(store.open_export(&later)).unwrap_err().code, ErrorCode::InvalidInput);
}

#[test]
fn the_conditional_write_compares_plain_texts() {
    let raw = Rc::new(MemoryStore::new());
    let store = sealed(&raw, &[1], false).unwrap();
    block_on(async {
        assert!(store.put_many_if("gen", None, vec![("gen".into(), "1".into())]).await.unwrap());
        assert!(!store.put_many_if("gen", None, vec![("gen".into(), "2".into())]).await.unwrap());
        assert!(store.put_many_if("gen", Some("1"), vec![("gen".into(), "2".into())]).await.unwrap());
        assert_eq!(store.get("gen").await.unwrap().as_deref(), Some("2"));
    });
}

#[test]
fn the_conformance_suite_passes_through_the_seal() {
    let store = sealed(&Rc::new(MemoryStore::new()), &[7], false).unwrap();
    block_on(crate::store::conformance::run(&store)).unwrap();
}
