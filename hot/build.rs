//! The pre-tokenizer's character-class table (src/tokens/pretokenize.rs
//! includes it from OUT_DIR), made by the library's own build script.

#[path = "../build.rs"]
mod table;

fn main() {
    table::main();
}
