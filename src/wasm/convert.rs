//! Values across the boundary: JS values into core types (options checked
//! field by field at every depth, arguments checked by type), core values
//! into plain JS objects, and core errors into JS `Error`s with a `code`.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, ErrorCode};

/// A JS `Error` named `AgentMemoryError` with `code` set to the stable code
/// (`From<Error> for JsValue`, src/error.rs).
pub(crate) fn js_error(e: Error) -> JsValue {
    e.into()
}

/// Rejects keys of `value` outside `fields` and `extra`: a misspelt option
/// (`maxTokenz`) is an error that lists what is accepted, not a silently
/// ignored key.
pub(crate) fn check_fields(
    value: &JsValue,
    what: &str,
    fields: &[&str],
    extra: &[&str],
) -> Result<(), JsValue> {
    for key in js_sys::Object::keys(value.unchecked_ref::<js_sys::Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !fields.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
            return Err(js_error(Error::invalid(format!(
                "unknown {what} {key:?}; expected one of: {}",
                [fields, extra].concat().join(", ")
            ))));
        }
    }
    Ok(())
}

/// The fields serde reads into `T`, as JS spells them (`rename_all`
/// applied): the one list of what an options object may hold.
pub(crate) fn fields_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<T>()
}

/// `JSON.stringify` of an object or array, as a typed error for anything
/// else (`JSON.stringify(undefined)` is not a string).
pub(crate) fn json_of(value: &JsValue, what: &str) -> Result<String, JsValue> {
    let invalid = || js_error(Error::invalid(format!("{what} must be a JSON-serializable object")));
    if !value.is_object() {
        return Err(invalid());
    }
    js_sys::JSON::stringify(value).ok().and_then(|s| s.as_string()).ok_or_else(invalid)
}

/// Converts a JS options object into a core type, naming what was expected.
/// It may have the type's own fields (serde's, read from the type) and the
/// `extra` keys the caller took out before (a `vector`, a hook): a misspelt
/// option (`maxTokenz`) is an error that lists them, not an ignored key.
///
/// Through JSON: `JSON.stringify` and one serde_json reader per type, which
/// honours `deny_unknown_fields` at every depth (`budget: { contextWindw }`
/// is an error too). A reader of JS values beside it would be a second
/// deserializer for every type, 23 KB of the gzipped wasm. JSON turns NaN
/// and Infinity into `null` (an optional number would silently go
/// missing), so numbers are checked first; it drops `undefined` fields,
/// which is what they mean.
pub(crate) fn from_js<T: serde::de::DeserializeOwned>(
    value: JsValue,
    what: &str,
    extra: &[&str],
) -> Result<T, JsValue> {
    let json = checked_json(&value, what, fields_of::<T>(), extra)?;
    serde_json::from_str::<T>(&json).map_err(|e| not_read(what, &e))
}

/// [`from_js`]'s checks and its JSON text, apart from the generic read:
/// compiled once, not once per type read (14 of them).
fn checked_json(value: &JsValue, what: &str, fields: &[&str], extra: &[&str]) -> Result<String, JsValue> {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(js_error(Error::invalid(format!("{what} must be an object"))));
    }
    check_fields(value, &format!("{what} field"), fields, extra)?;
    // Stringified first: a cycle or a BigInt fails here, before the walk,
    // which only a `null` in the text calls for (NaN and Infinity become
    // `null`): the common input crosses the boundary once.
    let json = lone_surrogates_replaced(json_of(value, what)?);
    if let Some(path) = json.contains("null").then(|| non_finite_at(value, 0)).flatten() {
        return Err(js_error(Error::invalid(format!(
            "{what} field {path:?} must be a finite number, not NaN or Infinity"
        ))));
    }
    Ok(json)
}

fn not_read(what: &str, e: &serde_json::Error) -> JsValue {
    js_error(Error::invalid(format!("invalid {what}: {}", reason(e))))
}

/// An array of `T`s, each read by [`from_js`] (as `item`); `not_array` is
/// the error for anything else.
pub(crate) fn from_js_list<T: serde::de::DeserializeOwned>(
    value: &JsValue,
    not_array: &str,
    item: &str,
) -> Result<Vec<T>, JsValue> {
    if !js_sys::Array::is_array(value) {
        return Err(js_error(Error::invalid(not_array)));
    }
    js_sys::Array::from(value).iter().map(|v| from_js(v, item, &[])).collect()
}

/// Nesting deeper than serde_json reads: its reader rejects such input
/// anyway, and the walk below never goes deeper.
const MAX_DEPTH: u32 = 128;

/// Where a number JSON cannot carry is in `value` (`"budget.contextWindow"`),
/// if anywhere.
fn non_finite_at(value: &JsValue, depth: u32) -> Option<String> {
    if !value.is_object() || depth == MAX_DEPTH {
        return None;
    }
    js_sys::Object::entries(value.unchecked_ref::<js_sys::Object>()).iter().find_map(|pair| {
        let pair: js_sys::Array = pair.unchecked_into();
        let (key, field) = (pair.get(0).as_string().unwrap_or_default(), pair.get(1));
        match field.as_f64() {
            Some(n) if !n.is_finite() => Some(key),
            Some(_) => None,
            None => non_finite_at(&field, depth + 1).map(|inner| format!("{key}.{inner}")),
        }
    })
}

/// `JSON.stringify` writes a lone surrogate (text cut inside an emoji) as
/// an escape that serde_json rejects; every other reader of JS strings in
/// the binding takes it as U+FFFD, and so does this one. (It writes paired
/// surrogates as the character itself, so every such escape is lone.)
fn lone_surrogates_replaced(json: String) -> String {
    if !json.contains("\\ud") {
        return json;
    }
    let mut out = String::with_capacity(json.len());
    let mut rest = json.as_str();
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest[at..];
        let lone = escape[1..].starts_with('u')
            && escape
                .get(2..6)
                .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                .is_some_and(|c| (0xd800..0xe000).contains(&c));
        let taken = if lone { 6 } else { escape.chars().nth(1).map_or(1, |c| 1 + c.len_utf8()) };
        out.push_str(if lone { "\\ufffd" } else { &escape[..taken] });
        rest = &escape[taken..];
    }
    out.push_str(rest);
    out
}

/// serde_json's message without its place in a text the caller never saw.
fn reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) if e.line() > 0 => text[..at].to_string(),
        _ => text,
    }
}

/// What a thrown JS value says: an `Error`'s name and message, a string as
/// is, anything else as JSON. Any value may be thrown or rejected with
/// (`undefined`, a symbol, a revoked Proxy, an `Error` whose `message` is a
/// getter that throws), so nothing here may throw or unwrap. (Not `{:?}`:
/// Rust's Debug machinery costs wasm size for no better text.)
pub(crate) fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        return "undefined".into();
    }
    let text = |key: &str| js_sys::Reflect::get(value, &key.into()).ok().and_then(|v| v.as_string());
    if value.is_instance_of::<js_sys::Error>() {
        return format!("{}: {}", text("name").unwrap_or_default(), text("message").unwrap_or_default());
    }
    value
        .as_string()
        .or_else(|| js_sys::JSON::stringify(value).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| "an unprintable value".to_string())
}

/// Awaits what a hook returned: a promise, a thenable that is not a native
/// promise (adopted as `await` would), or a plain value. Whatever it
/// rejects with comes back as the `Err`, for the caller to type.
pub(crate) async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&value)).await
}

/// Converts a core value into a plain JS object (maps become objects)
/// through JSON: one `JSON.parse` of one string beats setting every field
/// of every object across the boundary, and one serde_json writer per type
/// is all the wasm holds.
pub(crate) fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsValue> {
    parsed(serde_json::to_string(value))
}

/// [`to_js`] past the generic write: compiled once, not once per type.
fn parsed(json: serde_json::Result<String>) -> Result<JsValue, JsValue> {
    let json = json
        .map_err(|e| js_error(Error::new(ErrorCode::InvalidInput, format!("cannot convert result: {e}"))))?;
    js_sys::JSON::parse(&json)
}

/// A shallow copy of a JS object, for taking fields out of it.
pub(crate) fn shallow_copy(obj: &JsValue) -> JsValue {
    js_sys::Object::assign(&js_sys::Object::new(), obj.unchecked_ref()).into()
}

/// Removes `name` from `obj` (a copy the caller owns) and returns its value:
/// hooks, stores and vectors are taken out before the rest is read as data.
pub(crate) fn take_field(obj: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    let key = JsValue::from_str(name);
    let v = js_sys::Reflect::get(obj, &key)?;
    js_sys::Reflect::delete_property(obj.unchecked_ref::<js_sys::Object>(), &key)?;
    Ok(v)
}

/// A string argument from JS, rejecting other types with a typed error
/// instead of the binding's generic panic.
pub(crate) fn js_string(value: &JsValue, what: &str) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| js_error(Error::invalid(format!("{what} must be a string"))))
}

/// A non-negative integer argument from JS (rejects NaN, negatives, fractions).
pub(crate) fn js_count(value: &JsValue, what: &str) -> Result<u64, JsValue> {
    match value.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => {
            Ok(n as u64)
        }
        _ => Err(js_error(Error::invalid(format!("{what} must be a non-negative integer")))),
    }
}

/// A non-negative integer argument as a `usize`, saturating: on wasm32 a
/// limit of 2^32 or more means "no limit", never a wrapped small one.
pub(crate) fn js_usize(value: &JsValue, what: &str) -> Result<usize, JsValue> {
    Ok(usize::try_from(js_count(value, what)?).unwrap_or(usize::MAX))
}

/// An option given: neither `undefined` nor `null`.
pub(crate) fn optional(v: JsValue) -> Option<JsValue> {
    (!v.is_undefined() && !v.is_null()).then_some(v)
}

/// Takes an optional u32 option out of `obj` (its range is the core's rule).
pub(crate) fn u32_field(obj: &JsValue, name: &str) -> std::result::Result<Option<u32>, JsValue> {
    let Some(v) = optional(take_field(obj, name)?) else { return Ok(None) };
    let n = u32::try_from(js_count(&v, name)?).ok();
    Ok(Some(n.ok_or_else(|| Error::invalid(format!("{name} must be an integer from 0 to 2^32 - 1")))?))
}
