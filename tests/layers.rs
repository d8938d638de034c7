//! The module graph's rules, read from the source (docs/architecture.md,
//! "Layers"): a top-level module refers only to modules of its own layer or
//! a lower one; no modules refer to each other in a circle, whether
//! top-level modules or the submodules of one module; and no source file
//! outside the tests is over 800 lines.
//!
//! A reference is a path that starts with `crate::`, `super::` or `self::`
//! (in a `use` or anywhere in the code; `use` trees are read whole). Test
//! code is left out: `#[cfg(test)]` items, the files of `#[cfg(test)]`
//! modules, and files named `tests.rs`; so are comments and string literals.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers of the crate's top-level modules, lowest first, as in
/// docs/architecture.md. A module refers to modules of its own layer (with
/// no circle) and of lower layers, never of a higher one.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base types and helpers",
        &[
            "error",
            "entry",
            "budget",
            "tokens",
            "dates",
            "text",
            "script",
            "hash",
            "order",
            "join",
            "base64",
            "semaphore",
            "fence",
            "redact",
        ],
    ),
    ("ports", &["ports"]),
    ("store", &["store"]),
    ("set reconciliation", &["sync"]),
    ("retrieval, rule extraction", &["retrieval", "extract"]),
    ("working memory, embedder", &["working", "embed"]),
    ("long-term memory", &["longterm"]),
    ("the model's part", &["llm"]),
    ("memory", &["memory"]),
    ("JS binding and its TypeScript declarations", &["wasm", "ts"]),
];

/// The longest a source file outside the tests may be, in lines.
const MAX_LINES: usize = 800;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---- reading the source ----

/// One source file of a crate.
struct SourceFile {
    /// Relative to the repository, with `/`.
    path: String,
    /// Its module path in the crate (`[]` for the crate root).
    module: Vec<String>,
    /// Test code only.
    test: bool,
    /// The absolute paths (crate-relative) its non-test code refers to.
    refs: Vec<Vec<String>>,
}

struct Crate {
    files: Vec<SourceFile>,
    /// Every module that has a file.
    modules: BTreeSet<Vec<String>>,
    /// Names the crate root re-exports, with the top-level module they come
    /// from (`Error` -> `error`).
    reexports: BTreeMap<String, String>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/")
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `src/lib.rs` is the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The modules of `src` that hot/lib.rs compiles (its `#[path]`s), by the
/// module path their files have under `src`.
fn hot_modules(src: &Path) -> Vec<Vec<String>> {
    let Ok(lib) = fs::read_to_string(root().join("hot/lib.rs")) else { return Vec::new() };
    if src != root().join("src") {
        return Vec::new();
    }
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \"../src/")?.strip_suffix("\"]"))
        .map(|p| module_of(src, &src.join(p)))
        .collect()
}

/// Reads a crate's source under `src` (`src/bin/` holds crates of their own).
fn read_crate(src: &Path) -> Crate {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths.retain(|p| !p.strip_prefix(src).unwrap().starts_with("bin"));
    let mut files = Vec::new();
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    for path in &paths {
        let module = module_of(src, path);
        let (code, tests) = without_tests(&clean(&fs::read_to_string(path).unwrap()));
        for name in tests {
            test_modules.insert(module.iter().cloned().chain([name]).collect());
        }
        let refs = references(&code, &module);
        files.push(SourceFile { path: relative(path), module, test: false, refs });
    }
    // The files the crate hot/ compiles are declared `#[cfg(test)]` in
    // src/lib.rs (it re-exports them from hot/ otherwise): library code.
    for module in hot_modules(src) {
        test_modules.remove(&module);
    }
    for f in &mut files {
        f.test = f.path.ends_with("/tests.rs")
            || (1..=f.module.len()).any(|n| test_modules.contains(&f.module[..n]));
    }
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut reexports = BTreeMap::new();
    for f in files.iter().filter(|f| f.module.is_empty()) {
        let code = without_tests(&clean(&fs::read_to_string(root().join(&f.path)).unwrap())).0;
        for path in use_trees(&code) {
            if path.len() > 1 && modules.contains(&path[..1]) {
                reexports.insert(path.last().unwrap().clone(), path[0].clone());
            }
        }
    }
    Crate { files, modules, reexports }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The code without comments, and with every string and character literal
/// emptied (their text could hold anything).
fn clean(text: &str) -> Vec<char> {
    let t: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| t.get(i + k) == Some(&c));
    while i < t.len() {
        let before = if i > 0 { t[i - 1] } else { ' ' };
        if at(i, "//") {
            while i < t.len() && t[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            while i < t.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if !is_ident(before) && (at(i, "r#") || at(i, "r\"") || at(i, "br#") || at(i, "br\"")) {
            // A raw string: r"..", r#".."#, with as many # as it opened with.
            let mut j = i + if t[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while t.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if t.get(j) != Some(&'"') {
                out.push(t[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            j += 1;
            while j < t.len() && !at(j, &close) {
                j += 1;
            }
            out.extend(['"', '"']);
            i = j + close.len();
        } else if t[i] == '"' {
            let mut j = i + 1;
            while j < t.len() && t[j] != '"' {
                j += if t[j] == '\\' { 2 } else { 1 };
            }
            out.extend(['"', '"']);
            i = j + 1;
        } else if t[i] == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or a lifetime.
            if t.get(i + 1) == Some(&'\\') {
                let mut j = i + 3;
                while j < t.len() && t[j] != '\'' {
                    j += 1;
                }
                out.extend(['\'', '\'']);
                i = j + 1;
            } else if t.get(i + 2) == Some(&'\'') {
                out.extend(['\'', '\'']);
                i += 3;
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(t[i]);
            i += 1;
        }
    }
    out
}

/// Whether an attribute's text (`cfg(...)`) keeps its item to tests.
fn test_only(attribute: &str) -> bool {
    let a: String = attribute.chars().filter(|c| !c.is_whitespace()).collect();
    a == "cfg(test)" || a.starts_with("cfg(all(test,")
}

/// The code without its `#[cfg(test)]` items, and the names of the modules
/// declared test-only (`#[cfg(test)] mod tests;`), whose files are tests.
fn without_tests(code: &[char]) -> (Vec<char>, Vec<String>) {
    let mut out = Vec::with_capacity(code.len());
    let mut modules = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if code[i] == '#' && code.get(i + 1) == Some(&'[') {
            let end = matching(code, i + 1, '[', ']');
            let attribute: String = code[i + 2..end].iter().collect();
            if test_only(&attribute) {
                // Skip further attributes, then the item: to its `;`, or to the
                // `}` that closes its body.
                let mut j = end + 1;
                let item_start = j;
                let mut depth = 0;
                while j < code.len() {
                    match code[j] {
                        '[' if depth == 0 && code[j - 1] == '#' => j = matching(code, j, '[', ']'),
                        ';' if depth == 0 => break,
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            j -= 1;
                            break;
                        }
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let item: String = code[item_start..j.min(code.len())].iter().collect();
                let words: Vec<&str> = item.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
                let declared = words.iter().position(|w| *w == "mod").filter(|_| !item.contains('{'));
                if let Some(name) = declared.and_then(|k| words.get(k + 1)) {
                    modules.push(name.to_string());
                }
                i = j + 1;
                continue;
            }
        }
        out.push(code[i]);
        i += 1;
    }
    (out, modules)
}

/// The index of the bracket that closes the one at `open`.
fn matching(code: &[char], open: usize, left: char, right: char) -> usize {
    let mut depth = 0;
    for (j, &c) in code.iter().enumerate().skip(open) {
        if c == left {
            depth += 1;
        } else if c == right {
            depth -= 1;
            if depth == 0 {
                return j;
            }
        }
    }
    code.len()
}

fn skip_space(code: &[char], mut i: usize) -> usize {
    while i < code.len() && code[i].is_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(code: &[char], i: usize) -> (String, usize) {
    let mut j = i;
    while j < code.len() && is_ident(code[j]) {
        j += 1;
    }
    (code[i..j].iter().collect(), j)
}

/// The paths of a path tree at `i` (`a::b`, `a::{b, c::*}`), each after
/// `prefix`, and where the tree ends.
fn path_tree(code: &[char], i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let i = skip_space(code, i);
    match code.get(i) {
        Some('{') => {
            let mut j = i + 1;
            loop {
                j = skip_space(code, j);
                match code.get(j) {
                    Some('}') | None => return j + 1,
                    Some(',') => j += 1,
                    _ => {
                        let next = path_tree(code, j, prefix, out);
                        j = if next > j { next } else { j + 1 };
                    }
                }
            }
        }
        Some('*') => {
            out.push(prefix.to_vec());
            i + 1
        }
        Some(&c) if is_ident(c) => {
            let (name, j) = ident_at(code, i);
            let mut path = prefix.to_vec();
            if name != "self" || prefix.is_empty() {
                path.push(name);
            }
            let k = skip_space(code, j);
            if code.get(k) == Some(&':') && code.get(k + 1) == Some(&':') {
                let after = skip_space(code, k + 2);
                if code.get(after) == Some(&'<') {
                    out.push(path);
                    return after;
                }
                path_tree(code, k + 2, &path, out)
            } else {
                out.push(path);
                j
            }
        }
        _ => i,
    }
}

/// Every path of a `use` (the crate root's re-exports are read with it).
fn use_trees(code: &[char]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let (word, j) = ident_at(code, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        let before = if i > 0 { code[i - 1] } else { ' ' };
        if word == "use" && !is_ident(before) {
            i = path_tree(code, j, &[], &mut out);
        } else {
            i = j;
        }
    }
    out
}

/// The absolute paths that code in `module` refers to through `crate::`,
/// `super::` and `self::`.
fn references(code: &[char], module: &[String]) -> Vec<Vec<String>> {
    let mut raw = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let (word, j) = ident_at(code, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        let before = if i > 0 { code[i - 1] } else { ' ' };
        let path_start = matches!(word.as_str(), "crate" | "super" | "self")
            && !is_ident(before)
            && before != '$'
            && code.get(j) == Some(&':')
            && code.get(j + 1) == Some(&':');
        if path_start {
            i = path_tree(code, i, &[], &mut raw).max(j);
        } else {
            i = j;
        }
    }
    raw.into_iter()
        .map(|path| {
            let mut abs: Vec<String> = if path[0] == "crate" { Vec::new() } else { module.to_vec() };
            for seg in &path[usize::from(path[0] == "crate")..] {
                match seg.as_str() {
                    "super" => {
                        abs.pop();
                    }
                    "self" => {}
                    _ => abs.push(seg.clone()),
                }
            }
            abs
        })
        .collect()
}

// ---- the graph ----

/// Arrows between sibling modules: parent module -> (from -> to -> the
/// files that refer). The parent `[]` holds the top-level modules.
type Graph = BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, BTreeSet<String>>>>;

fn graph(krate: &Crate) -> Graph {
    let mut g = Graph::new();
    for f in krate.files.iter().filter(|f| !f.test && !f.module.is_empty()) {
        for target in &f.refs {
            let mut target = target.clone();
            // `crate::Error`: the module the root re-exports it from.
            if let Some(first) = target.first() {
                if !krate.modules.contains(&target[..1]) {
                    match krate.reexports.get(first) {
                        Some(m) => target = vec![m.clone()],
                        None => continue,
                    }
                }
            }
            let shared = f.module.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if shared >= f.module.len() || shared >= target.len() {
                continue; // itself, a module inside it, or one it is inside
            }
            if !krate.modules.contains(&target[..=shared]) {
                continue; // an item of the common parent
            }
            g.entry(f.module[..shared].to_vec())
                .or_default()
                .entry(f.module[shared].clone())
                .or_default()
                .entry(target[shared].clone())
                .or_default()
                .insert(f.path.clone());
        }
    }
    g
}

/// The groups of modules that refer to each other in a circle.
fn circles(arrows: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in arrows.get(&m).into_iter().flat_map(|t| t.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = arrows.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (m, r) in &reached {
        if !r.contains(*m) || out.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let circle =
            r.iter().filter(|o| reached.get(o).is_some_and(|back| back.contains(*m))).cloned().collect();
        out.push(circle);
    }
    out
}

fn describe(from: &str, to: &str, files: &BTreeSet<String>) -> String {
    format!("{from} -> {to} ({})", files.iter().cloned().collect::<Vec<_>>().join(", "))
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

fn main_crate() -> Crate {
    read_crate(&root().join("src"))
}

// ---- the rules ----

#[test]
fn no_arrow_up_the_layers() {
    let krate = main_crate();
    let g = graph(&krate);
    let mut problems = Vec::new();
    let top: BTreeSet<&String> =
        krate.files.iter().filter(|f| !f.test && !f.module.is_empty()).map(|f| &f.module[0]).collect();
    for m in &top {
        if layer_of(m).is_none() {
            problems.push(format!("module {m} has no layer: add it to LAYERS and docs/architecture.md"));
        }
    }
    for (from, targets) in g.get(&Vec::new()).into_iter().flatten() {
        for (to, files) in targets {
            if let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) {
                if b > a {
                    problems.push(format!(
                        "up the layers: {} [{} -> {}]",
                        describe(from, to, files),
                        LAYERS[a].0,
                        LAYERS[b].0
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "the module graph breaks its layers:\n  {}", problems.join("\n  "));
}

#[test]
fn no_circle_between_modules() {
    let mut problems = Vec::new();
    for (name, src) in [("agent_memory", root().join("src")), ("component", root().join("component/src"))] {
        for (parent, arrows) in graph(&read_crate(&src)) {
            for circle in circles(&arrows) {
                let inside: Vec<String> = circle
                    .iter()
                    .flat_map(|from| {
                        arrows[from]
                            .iter()
                            .filter(|(to, _)| circle.contains(*to))
                            .map(move |(to, files)| describe(from, to, files))
                    })
                    .collect();
                let place = if parent.is_empty() { name.to_string() } else { parent.join("::") };
                problems.push(format!("in {place}: {}", inside.join("; ")));
            }
        }
    }
    assert!(problems.is_empty(), "modules refer to each other in a circle:\n  {}", problems.join("\n  "));
}

#[test]
fn layers_match_the_architecture_doc() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let section =
        doc.split("\n## Layers\n").nth(1).expect("docs/architecture.md has a \"## Layers\" section");
    let section = section.split("\n## ").next().unwrap();
    let listed: Vec<BTreeSet<String>> = section
        .lines()
        .filter(|l| {
            l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .map(|l| l.split('`').skip(1).step_by(2).map(str::to_string).collect())
        .collect();
    let expected: Vec<BTreeSet<String>> =
        LAYERS.iter().map(|(_, modules)| modules.iter().map(|m| m.to_string()).collect()).collect();
    assert_eq!(listed, expected, "the numbered layers of docs/architecture.md and LAYERS differ");
}

#[test]
fn no_source_file_over_800_lines() {
    let mut paths = Vec::new();
    rust_files(&root().join("src"), &mut paths);
    rust_files(&root().join("component/src"), &mut paths);
    let mut problems = Vec::new();
    for path in paths {
        let rel = relative(&path);
        if rel.ends_with("/tests.rs") || rel.contains("/tests/") {
            continue;
        }
        let lines = fs::read_to_string(&path).unwrap().lines().count();
        if lines > MAX_LINES {
            problems.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        problems.is_empty(),
        "source files over {MAX_LINES} lines (split each by idea, or move its tests to a tests.rs):\n  {}",
        problems.join("\n  ")
    );
}

// ---- the reader itself ----

fn refs_of(code: &str, module: &[&str]) -> Vec<String> {
    let module: Vec<String> = module.iter().map(|m| m.to_string()).collect();
    let (code, _) = without_tests(&clean(code));
    let mut out: Vec<String> = references(&code, &module).iter().map(|p| p.join("::")).collect();
    out.sort();
    out
}

#[test]
fn reads_paths_and_skips_tests_comments_and_strings() {
    let code = r##"
        use crate::store::{layout::{moved_key, MOVED}, Store};
        use super::{self, clock::*};
        pub(crate) fn f<'a>(x: &'a str) -> char {
            let _ = "crate::fake::path // not a comment";
            let _ = r#"crate::raw "{ "#;
            // crate::commented
            /* crate::block /* nested */ */
            crate::order::sort(&mut v);
            '{'
        }
        #[cfg(test)]
        mod tests {
            use crate::seeded;
            fn g() { let s = "}"; }
        }
        #[cfg(all(test, not(target_arch = "wasm32")))]
        mod props;
        use self::child::Thing;
        macro_rules! m { () => { $crate::ignored::path } }
    "##;
    assert_eq!(
        refs_of(code, &["wasm", "locks"]),
        [
            "order::sort",
            "store::Store",
            "store::layout::MOVED",
            "store::layout::moved_key",
            "wasm",
            "wasm::clock",
            "wasm::locks::child::Thing"
        ]
    );
    let (_, tests) = without_tests(&clean(code));
    assert_eq!(tests, ["props"]);
}
