//! The texts an ingest with the model embeds under `unit_vectors =
//! "separate"` (every chunk's text and every answer unit's), and how fast groundcite's embedder goes
//! through them: the Rust half of `bench/embed-side-by-side.sh`.
//!
//! ```sh
//! # every chunk's embedded text and every answer unit's, one JSON string a line
//! cargo run --release -p groundcite-bench --bin embed_texts -- dump PAGES_DIR TEXTS.jsonl
//! # embeds them (longest first, in batches); prints texts/s
//! cargo run --release -p groundcite-bench --bin embed_texts -- run MODEL_DIR TEXTS.jsonl [VECTORS.f32]
//! ```
//!
//! `run` writes the vectors (little-endian f32, row after row, in input
//! order) when a third path is given, so they can be compared with another
//! runtime's.

use std::io::Write;
use std::time::Instant;

use groundcite_index::vectors::embedding_text;
use groundcite_index::{ChunkIndex, Index, IngestOptions};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["dump", pages, out] => dump(pages, out),
        ["run", model, texts] => run(model, texts, None),
        ["run", model, texts, vectors] => run(model, texts, Some(vectors)),
        _ => anyhow::bail!(
            "usage: embed_texts dump PAGES_DIR TEXTS.jsonl | embed_texts run MODEL_DIR TEXTS.jsonl [VECTORS.f32]"
        ),
    }
}

/// Ingests `pages` lexically into a temporary index and writes the texts an
/// ingest with the model would embed: each chunk's [`embedding_text`], then
/// its answer units' embedded text, chunk after chunk.
fn dump(pages: &str, out: &str) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut index = Index::open_or_create(dir.path())?;
    index.ingest(&[pages.into()], &IngestOptions::default(), &mut |_| {})?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let (mut chunks, mut units) = (0usize, 0usize);
    for chunk in index.all_chunks()? {
        serde_json::to_writer(&mut file, &embedding_text(&chunk))?;
        writeln!(file)?;
        chunks += 1;
        for unit in groundcite_core::unit::units(&[(chunk.section.as_str(), chunk.text.as_str())]) {
            serde_json::to_writer(&mut file, &unit.embedded)?;
            writeln!(file)?;
            units += 1;
        }
    }
    file.flush()?;
    eprintln!("embed_texts: {chunks} chunk texts and {units} answer units written to {out}");
    Ok(())
}

/// Embeds every text of `texts` and prints the throughput.
fn run(model: &str, texts: &str, vectors: Option<&str>) -> anyhow::Result<()> {
    let lines: Vec<String> = std::fs::read_to_string(texts)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let embedder = groundcite_embed::Embedder::load(model)?;
    let started = Instant::now();
    let embedded = embedder.embed(&refs)?;
    let (rows, dim) = (embedded.as_flat(), embedded.dim());
    let secs = started.elapsed().as_secs_f64();
    println!(
        "groundcite (candle, {} threads): {} texts in {secs:.1} s, {:.1} texts/s",
        rayon::current_num_threads(),
        refs.len(),
        refs.len() as f64 / secs
    );
    if let Some(path) = vectors {
        let bytes: Vec<u8> = rows.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes)?;
        eprintln!(
            "embed_texts: {} vectors of {dim} written to {path}",
            refs.len()
        );
    }
    Ok(())
}
