//! Writes the tokenizer packs (`cl100k.amtk`, `o200k.amtk`) into a folder,
//! from the vocabularies that `bpe-openai` embeds, and checks each pack
//! counts exactly like `bpe-openai` on a sample before writing it.
//!
//! `cargo run --release --features pack-builder --bin build-packs -- OUT_DIR`

use agent_memory::tokens::{pack, BpeTokenizer, Tokenizer, TokenizerId};

const SAMPLE: &str = "Hello world! I'm testing: 12345 tokens, 中文测试，日本語のテキスト, 😀🎉 \
    fn main() {\n    let x = vec![1, 2, 3];\n}\n\n\n   trailing   spaces   ";

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "pkg/packs".to_string());
    std::fs::create_dir_all(&out).expect("can create the output folder");
    for (id, reference) in
        [(TokenizerId::Cl100k, bpe_openai::cl100k_base()), (TokenizerId::O200k, bpe_openai::o200k_base())]
    {
        let bpe = &reference.bpe;
        let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32).map(|t| bpe.token_bytes(t)).collect();
        let bytes = pack::encode(id, &tokens).expect("vocabulary fits the pack format");
        let ours = BpeTokenizer::from_pack(&bytes).expect("the pack just written decodes");
        assert_eq!(
            ours.count(SAMPLE),
            reference.count(SAMPLE),
            "{} pack disagrees with bpe-openai",
            id.as_str()
        );
        let path = format!("{out}/{}.amtk", id.as_str());
        std::fs::write(&path, &bytes).expect("can write the pack");
        println!("{path}: {} tokens, {} bytes", tokens.len(), bytes.len());
    }
}
