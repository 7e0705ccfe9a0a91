//! Ingests a corpus with synthetic vectors (issue 15): the index a model
//! would build, at a size whose embedding would take hours on 2 cores, so
//! that `groundcite serve --model-dir` searches it hybrid and its memory
//! and latency can be measured (`bench/scale-dense.sh`).
//!
//! ```text
//! cargo run --release -p groundcite-index --example synthetic_vectors -- \
//!     HANDBOOK_INDEX CORPUS_DIR INDEX_DIR [--cosine 0.9]
//! ```
//!
//! HANDBOOK_INDEX is an index ingested with the model (its chunk and unit
//! vectors are the sources, its model id the id written). Every text the
//! ingest embeds (each chunk's and each answer unit's) gets a copy of one
//! of those vectors, chosen by a hash of the text, plus uniform noise
//! scaled to cosine `--cosine` with the copy (as `examples/ann.rs`), made
//! unit length again. Everything else is the real ingest: parsing,
//! chunking, the BM25 index, the vectors file and its approximate index.
//! The embedding time is not the model's: the throughput printed is the
//! ingest's own, embedding aside. Prints one JSON line last.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use groundcite_index::ann::dot;
use groundcite_index::{ChunkEmbedder, ChunkIndex, Index, IngestOptions, Progress, VectorStore};
use rayon::prelude::*;

struct Synthetic {
    model_id: String,
    dim: usize,
    /// Every chunk and unit row of the handbook, row after row.
    sources: Vec<f32>,
    /// Half-width of the uniform noise per value.
    noise: f32,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Synthetic {
    fn vector(&self, text: &str) -> Vec<f32> {
        let hash = blake3::hash(text.as_bytes());
        let mut state = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
        let rows = self.sources.len() / self.dim;
        let r = (splitmix64(&mut state) % rows as u64) as usize;
        let mut v: Vec<f32> = self.sources[r * self.dim..(r + 1) * self.dim]
            .iter()
            .map(|x| {
                let u = (splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
                x + self.noise * u
            })
            .collect();
        let norm = dot(&v, &v).sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

impl ChunkEmbedder for Synthetic {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<f32>, String> {
        Ok(texts.par_iter().flat_map_iter(|t| self.vector(t)).collect())
    }
}

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
    let store = VectorStore::read(Path::new(handbook))?;
    let files = store.files().expect("read whole");
    if store.is_empty() {
        return Err(format!("{handbook}: no vectors (ingest it with a model first)").into());
    }
    let dim = store.dim;
    let sources: Vec<f32> = files
        .values()
        .flat_map(|f| f.data.iter().chain(&f.unit_data).copied())
        .collect();
    // As examples/ann.rs: uniform noise of half-width a has variance a²/3,
    // and a unit vector plus noise of variance s² per value has cosine
    // about 1 / sqrt(1 + dim·s²) with itself.
    let variance = (1.0 / (cosine * cosine) - 1.0) / dim as f32;
    let embedder = Synthetic {
        model_id: store.model_id.clone(),
        dim,
        sources,
        noise: (3.0 * variance).sqrt(),
    };
    drop(store);
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
