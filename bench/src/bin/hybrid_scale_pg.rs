//! Hybrid search at scale on PostgreSQL: the PostgreSQL half of
//! `bench/scale-dense.sh`, the same corpus with the same synthetic vectors
//! as the embedded index it writes.
//!
//! ```text
//! cargo run --release -p groundcite-bench --bin hybrid_scale_pg -- \
//!     HANDBOOK_INDEX CORPUS_DIR DATABASE_URL MODEL_DIR QUESTIONS.jsonl... [--compare INDEX_DIR]
//! ```
//!
//! Into schema `groundcite_scale_hybrid` of DATABASE_URL: the migrations,
//! then one ingest of CORPUS_DIR with `testing::SyntheticEmbedder` over
//! HANDBOOK_INDEX's vectors (an index ingested with the model: every chunk
//! and unit gets a noisy copy of one of its vectors, the same copy
//! `bench/src/bin/synthetic_vectors.rs` gives it in the embedded index). The
//! schema is kept: `REUSE=1` searches what an earlier run left (if it
//! left any chunks) rather than ingesting again; drop it with
//! `DROP SCHEMA groundcite_scale_hybrid CASCADE`.
//!
//! Then the questions (each embedded once with the model in MODEL_DIR,
//! untimed), one untimed pass, then one timed pass of
//! `PgIndex::search_hybrid` with the vector given, top 10 under the default
//! fusion: p50 and p99. With `--compare INDEX_DIR` (the embedded index of
//! the same corpus and vectors, `bench/scale-dense.sh`'s), each question's
//! top 10 is compared with the embedded index's `search_hybrid` (chunks by
//! path and id): the mean overlap. `LEXICAL_CANDIDATES=N` sets
//! `PgOptions::lexical_candidates` (0: the full-text side ranks every
//! chunk with a query word), `ANN_CANDIDATES=N`
//! `PgOptions::ann_candidates`; `TOPS_OUT=FILE` writes each question's top 10
//! (path and id) as JSON; `DENSE_ONLY=1` ranks by the dense side alone
//! (`fusion::Method::Dense`, in both indexes; with `--compare`, also the
//! recall@10 against the exact dense ranking). The last line is the figures as one JSON object.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use groundcite_index::testing::SyntheticEmbedder;
use groundcite_index::{ChunkIndex, Fusion, Index, IngestOptions};
use groundcite_pg::{PgIndex, PgOptions};

const SCHEMA: &str = "groundcite_scale_hybrid";

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    sorted_ms[((sorted_ms.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut compare = None;
    if let Some(i) = args.iter().position(|a| a == "--compare") {
        compare = Some(PathBuf::from(
            args.get(i + 1).ok_or("--compare needs a directory")?,
        ));
        args.drain(i..i + 2);
    }
    if args.len() < 5 {
        return Err("usage: hybrid_scale_pg HANDBOOK_INDEX CORPUS_DIR DATABASE_URL MODEL_DIR QUESTIONS.jsonl... [--compare INDEX_DIR]".into());
    }
    let (handbook, corpus, url, model_dir) = (&args[0], &args[1], &args[2], &args[3]);
    let mut questions = Vec::new();
    for path in &args[4..] {
        for line in std::fs::read_to_string(path)?
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)?;
            questions.push(
                v["question"]
                    .as_str()
                    .ok_or("a case without question")?
                    .to_string(),
            );
        }
    }
    let mut opts = PgOptions::default().with_schema(SCHEMA);
    if let Ok(n) = std::env::var("LEXICAL_CANDIDATES") {
        opts.lexical_candidates = n.parse()?;
    }
    if let Ok(n) = std::env::var("ANN_CANDIDATES") {
        opts.ann_candidates = n.parse()?;
    }
    let embedder = Arc::new(SyntheticEmbedder::from_index(Path::new(handbook), 0.9)?);
    let reuse = std::env::var("REUSE").is_ok_and(|v| v == "1");
    let mut ingest = serde_json::Value::Null;
    if !reuse {
        groundcite_pg::drop_schema(url, &opts)?;
    }
    groundcite_pg::migrate(url, &opts)?;
    let mut index = PgIndex::connect(url, opts)?;
    index.set_embedder(embedder);
    // A schema with nothing to reuse (a first run) is ingested.
    if reuse && index.num_chunks()? > 0 {
        eprintln!(
            "REUSE=1: searching the {} chunks in schema {SCHEMA}",
            index.num_chunks()?
        );
    } else {
        let started = Instant::now();
        let summary = index.ingest(
            &[PathBuf::from(corpus)],
            &IngestOptions::default(),
            &mut |_| {},
        )?;
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "PostgreSQL ingest with vectors: {} files, {} chunks in {seconds:.1} s: {:.0} chunks/s",
            summary.indexed,
            summary.chunks,
            summary.chunks as f64 / seconds
        );
        ingest = serde_json::json!({"ingest_s": seconds, "chunks": summary.chunks});
    }
    let model = groundcite_embed::Embedder::load(model_dir)?;
    let vectors: Vec<Vec<f32>> = questions
        .iter()
        .map(|q| model.embed_one(q))
        .collect::<Result<_, _>>()?;
    let mut fusion = Fusion::default();
    if std::env::var("DENSE_ONLY").is_ok_and(|v| v == "1") {
        fusion.method = groundcite_index::fusion::Method::Dense;
    }
    let mut ms = Vec::with_capacity(questions.len());
    let mut tops = Vec::with_capacity(questions.len());
    for pass in 0..2 {
        for (q, v) in questions.iter().zip(&vectors) {
            let started = Instant::now();
            let hits = index.search_hybrid(q, v, 10, &fusion)?;
            if pass == 1 {
                ms.push(started.elapsed().as_secs_f64() * 1e3);
                tops.push(
                    hits.iter()
                        .map(|h| (h.chunk.path.clone(), h.chunk.id.clone()))
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    ms.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&ms, 0.5), percentile(&ms, 0.99));
    eprintln!(
        "PostgreSQL search_hybrid, {} questions, top 10, vector given: p50 {p50:.1} ms, p99 {p99:.1} ms",
        questions.len()
    );
    if let Ok(path) = std::env::var("TOPS_OUT") {
        std::fs::write(&path, serde_json::to_string(&tops)?)?;
    }
    let mut overlap = serde_json::Value::Null;
    if let Some(dir) = compare {
        let embedded = Index::open(&dir)?;
        let mut same = 0usize;
        for ((q, v), top) in questions.iter().zip(&vectors).zip(&tops) {
            let hits = embedded.search_hybrid(q, v, 10, &fusion)?;
            same += hits
                .iter()
                .filter(|h| top.contains(&(h.chunk.path.clone(), h.chunk.id.clone())))
                .count();
        }
        let mean = same as f64 / (10 * questions.len()) as f64;
        eprintln!(
            "top 10 shared with the embedded index's search_hybrid: {:.3}",
            mean
        );
        overlap = mean.into();
        if fusion.method == groundcite_index::fusion::Method::Dense {
            // Against the exact dense ranking (every chunk scored), by
            // chunk id.
            let mut found = 0usize;
            for (v, top) in vectors.iter().zip(&tops) {
                let exact = embedded.vectors().rank(v)?;
                found += exact
                    .iter()
                    .take(10)
                    .filter(|h| top.iter().any(|(_, id)| *id == h.id))
                    .count();
            }
            let recall = found as f64 / (10 * questions.len()) as f64;
            eprintln!("recall@10 against the exact dense ranking: {recall:.3}");
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "ingest": ingest,
            "pg_hybrid_p50_ms": p50,
            "pg_hybrid_p99_ms": p99,
            "questions": questions.len(),
            "top10_overlap_with_embedded": overlap,
        })
    );
    Ok(())
}
