//! Generates the character-class table the pre-tokenizer needs.
//!
//! Pre-tokenization only asks which of six classes a character is in
//! (upper/title-case letter, lower-case letter, other letter, mark, number,
//! anything else). The general-category crate's table answers a finer
//! question in ~49 KB of wasm; merged down to our six classes it is ~3,200
//! runs, shipped as the distance from each run's start to the next (mostly
//! small numbers, so the table gzips to a few KB) and each run's class;
//! the pre-tokenizer expands it once into `start << 3 | class` words.

use std::fmt::Write;
use std::path::PathBuf;

use unicode_general_category::{get_general_category, GeneralCategory as G};

fn class(c: char) -> u32 {
    match get_general_category(c) {
        G::UppercaseLetter | G::TitlecaseLetter => 1,
        G::LowercaseLetter => 2,
        G::ModifierLetter | G::OtherLetter => 3,
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark => 4,
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => 5,
        _ => 0,
    }
}

pub fn main() {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut last = u32::MAX;
    for cp in 0x80u32..=0x10FFFF {
        let k = char::from_u32(cp).map_or(0, class);
        if k != last {
            runs.push((cp, k));
            last = k;
        }
    }
    // Distances that do not fit a u16 (the unassigned planes) become
    // repeated runs of the same class.
    let mut gaps: Vec<u16> = Vec::new();
    let mut classes: Vec<u8> = Vec::new();
    let mut at = 0x80u32;
    for (start, k) in runs {
        while start - at > u16::MAX as u32 {
            gaps.push(u16::MAX);
            classes.push(*classes.last().expect("the first run starts at 0x80"));
            at += u16::MAX as u32;
        }
        gaps.push((start - at) as u16);
        classes.push(k as u8);
        at = start;
    }
    let list =
        |items: Vec<String>| items.chunks(24).map(|c| format!("    {},\n", c.join(", "))).collect::<String>();
    let mut out = String::new();
    writeln!(out, "/// Distance of each run's start from the previous one (the first from 0x80).").unwrap();
    writeln!(
        out,
        "static CLASS_RUN_GAPS: [u16; {}] = [\n{}];",
        gaps.len(),
        list(gaps.iter().map(u16::to_string).collect())
    )
    .unwrap();
    writeln!(out, "/// Each run's class: 0 other, 1 Lu/Lt, 2 Ll, 3 Lm/Lo, 4 M, 5 N.").unwrap();
    writeln!(
        out,
        "static CLASS_RUN_CLASSES: [u8; {}] = [\n{}];",
        classes.len(),
        list(classes.iter().map(u8::to_string).collect())
    )
    .unwrap();
    let path = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("char_classes.rs");
    std::fs::write(path, out).expect("can write the generated table");
    println!("cargo::rerun-if-changed=build.rs");
}
