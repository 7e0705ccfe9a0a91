//! Ingests a corpus with synthetic vectors: the index a model
//! would build, at a size whose embedding would take hours on 2 cores, so
//! that `groundcite serve --model-dir` searches it hybrid and its memory
//! and latency can be measured (`bench/scale-dense.sh`).
//!
//! ```text
//! cargo run --release -p groundcite-bench --bin synthetic_vectors -- \
//!     HANDBOOK_INDEX CORPUS_DIR INDEX_DIR [--cosine 0.9]
//! ```
//!
//! HANDBOOK_INDEX is an index ingested with the model (its chunk and unit
//! vectors are the sources, its model id the id written). Every text the
//! ingest embeds (each chunk's and each answer unit's) gets a copy of one
//! of those vectors, chosen by a hash of the text, plus uniform noise
//! scaled to cosine `--cosine` with the copy (as `bench/src/bin/ann.rs`), made
//! unit length again (`testing::SyntheticEmbedder`). Everything else is
//! the real ingest: parsing, chunking, the BM25 index, the vectors file
//! and its approximate index.
//! The embedding time is not the model's: the throughput printed is the
//! ingest's own, embedding aside. Prints one JSON line last.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use groundcite_index::testing::SyntheticEmbedder;
use groundcite_index::{ChunkIndex, Index, IngestOptions, Progress};

/// A value of this process's /proc status (kB) in MB.
fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1e3)
}

fn dir_mb(dir: &Path) -> f64 {
    walk(dir) as f64 / 1e6
}

fn walk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => walk(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut cosine = 0.9f32;
    if let Some(i) = args.iter().position(|a| a == "--cosine") {
        cosine = args.get(i + 1).ok_or("--cosine needs a value")?.parse()?;
        args.drain(i..i + 2);
    }
    let [handbook, corpus, out] = args.as_slice() else {
        return Err(
            "usage: synthetic_vectors HANDBOOK_INDEX CORPUS_DIR INDEX_DIR [--cosine C]".into(),
        );
    };
    let embedder = SyntheticEmbedder::from_index(Path::new(handbook), cosine)?;
    let source_mb = dir_mb(Path::new(corpus));
    let mut index = Index::open_or_create(Path::new(out))?;
    index.set_embedder(Arc::new(embedder));
    let started = Instant::now();
    let mut stages: Vec<(String, f64)> = Vec::new();
    let mut last = String::new();
    let summary = index.ingest(&[corpus.into()], &IngestOptions::default(), &mut |p| {
        let stage = match p {
            Progress::Embedding { .. } => "embedding",
            Progress::IndexingVectors { .. } => "indexing vectors",
            Progress::Committing => "committing",
            _ => "reading and chunking",
        };
        if stage != last {
            eprintln!("{:7.1} s  {stage}", started.elapsed().as_secs_f64());
            stages.push((stage.to_string(), started.elapsed().as_secs_f64()));
            last = stage.to_string();
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let chunks = index.vectors().len();
    let json = serde_json::json!({
        "chunks": chunks,
        "source_mb": source_mb,
        "ingest_s": seconds,
        "ingest_chunks_per_s": chunks as f64 / seconds,
        "ingest_mb_per_s": source_mb / seconds,
        "stages_s": stages,
        "embedded": summary.embedded,
        "peak_rss_mb": status_mb("VmHWM:"),
        "index_mb": dir_mb(Path::new(out)),
        "on_disk": index.vectors().is_on_disk(),
    });
    println!("{json}");
    Ok(())
}
