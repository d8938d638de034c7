//! Writes the TypeScript declarations generated from the core's serde
//! types (`agent_memory::ts`) to the file named by the first argument;
//! scripts/build.sh appends them to the package's `.d.ts`.

fn main() -> std::io::Result<()> {
    let out = std::env::args().nth(1).expect("usage: build-types <out.d.ts>");
    std::fs::write(out, agent_memory::ts::declarations())
}
