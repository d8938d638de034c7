//! The `redact` option: `true`, or `{ email, phone, card, iban, secret,
//! patterns: [{ name, pattern: RegExp }] }`. The host's patterns run in the
//! JS regex engine (the `Patterns` port), so none enters the wasm.

use std::rc::Rc;

use js_sys::{Array, Reflect, RegExp};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{from_js, shallow_copy, take_field};
use crate::error::Error;
use crate::redact::{Patterns, RedactOptions};

pub struct JsPatterns(Vec<(String, RegExp)>);

/// Byte offset in `text` of each UTF-16 offset that starts a character.
fn utf16_to_byte(text: &str) -> Vec<(u32, usize)> {
    let mut table = Vec::with_capacity(text.len() + 1);
    let mut u16_at = 0u32;
    for (byte, c) in text.char_indices() {
        table.push((u16_at, byte));
        u16_at += c.len_utf16() as u32;
    }
    table.push((u16_at, text.len()));
    table
}

impl Patterns for JsPatterns {
    fn find(&self, text: &str) -> Vec<(usize, usize, String)> {
        let table = utf16_to_byte(text);
        let byte = |u: u32| table.binary_search_by_key(&u, |&(u16_at, _)| u16_at).ok().map(|i| table[i].1);
        let mut out = Vec::new();
        for (name, re) in &self.0 {
            re.set_last_index(0);
            while let Some(found) = re.exec(text) {
                let start =
                    Reflect::get(&found, &"index".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as u32;
                let len = found.get(0).length();
                if len == 0 {
                    re.set_last_index(re.last_index() + 1);
                    continue;
                }
                if let (Some(s), Some(e)) = (byte(start), byte(start + len)) {
                    out.push((s, e, name.clone()));
                }
            }
        }
        out
    }
}

/// Reads `redact`: the detectors to run and the host's patterns.
pub fn parse_redact(value: JsValue) -> Result<(RedactOptions, Option<Rc<dyn Patterns>>), JsValue> {
    if value.as_bool() == Some(true) {
        return Ok((RedactOptions::default(), None));
    }
    if !value.is_object() || Array::is_array(&value) {
        return Err(Error::invalid(
            "redact must be true or { email?, phone?, card?, iban?, secret?, patterns?: [{ name, pattern: RegExp }] }",
        )
        .into());
    }
    let copy = shallow_copy(&value);
    let patterns = take_field(&copy, "patterns")?;
    let options: RedactOptions = from_js(copy, "redact option", &["patterns"])?;
    if patterns.is_undefined() {
        return Ok((options, None));
    }
    let rule = "redact.patterns must be an array of { name: \"UPPER_CASE\", pattern: RegExp }";
    if !Array::is_array(&patterns) {
        return Err(Error::invalid(rule).into());
    }
    let mut out = Vec::new();
    for p in Array::from(&patterns).iter() {
        if !p.is_object() {
            return Err(Error::invalid(rule).into());
        }
        let copy = shallow_copy(&p);
        let name = take_field(&copy, "name")?.as_string().unwrap_or_default();
        let pattern = take_field(&copy, "pattern")?;
        super::check_fields(&copy, "redact pattern", &[], &[])?;
        let named = crate::redact::is_pattern_name(&name);
        let Some(re) = pattern.dyn_ref::<RegExp>().filter(|_| named) else {
            return Err(Error::invalid(rule).into());
        };
        // A private global copy: `exec` walks it, and the host's keeps its state.
        let flags = re.flags();
        let flags = String::from(flags);
        let flags = if flags.contains('g') { flags } else { format!("{flags}g") };
        out.push((name, RegExp::new(&String::from(re.source()), &flags)));
    }
    Ok((options, Some(Rc::new(JsPatterns(out)) as Rc<dyn Patterns>)))
}
