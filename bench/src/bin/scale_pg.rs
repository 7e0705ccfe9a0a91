//! Lexical retrieval at scale on PostgreSQL: the other half of
//! `bench/src/bin/scale.rs`, run after it by `bench/scale.sh`.
//!
//!     cargo run --release -p groundcite-bench --bin scale_pg -- CORPUS_DIR WORK_DIR DATABASE_URL
//!
//! Into a fresh schema `groundcite_scale` of DATABASE_URL (dropped first,
//! and at the end): the migrations, then one ingest of CORPUS_DIR (the
//! default ingest options, lexical): wall time and chunks/s; then the
//! queries the embedded run wrote to WORK_DIR/queries.json, each once to
//! warm up and once timed through `ChunkIndex::search(q, 10)` (hits with
//! their normalised score and chunk): p50 and p99. `SCALE_PG_QUERIES=N`
//! keeps the first N queries (the dev questions come first): at a million
//! chunks a PostgreSQL search takes up to seconds. The last line is the
//! figures as one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use groundcite_index::{ChunkIndex, IngestOptions, Retriever};
use groundcite_pg::{PgIndex, PgOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, work, url] = args.as_slice() else {
        return Err("usage: scale_pg CORPUS_DIR WORK_DIR DATABASE_URL".into());
    };
    let mut queries: Vec<String> = serde_json::from_str(&std::fs::read_to_string(
        PathBuf::from(work).join("queries.json"),
    )?)?;
    if let Ok(n) = std::env::var("SCALE_PG_QUERIES") {
        queries.truncate(n.parse()?);
    }
    let opts = PgOptions::default().with_schema("groundcite_scale");
    groundcite_pg::drop_schema(url, &opts)?;
    groundcite_pg::migrate(url, &opts)?;
    let mut index = PgIndex::connect(url, opts.clone())?;
    let started = Instant::now();
    let summary = index.ingest(
        &[PathBuf::from(corpus)],
        &IngestOptions::default(),
        &mut |_| {},
    )?;
    let ingest_s = started.elapsed().as_secs_f64();
    println!(
        "PostgreSQL ingest: {} files, {} chunks in {ingest_s:.2} s: {:.0} chunks/s",
        summary.indexed,
        summary.chunks,
        summary.chunks as f64 / ingest_s
    );
    let mut ms = Vec::with_capacity(queries.len());
    for pass in 0..2 {
        for q in &queries {
            let started = Instant::now();
            std::hint::black_box(index.search(q, 10)?);
            if pass == 1 {
                ms.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[(((ms.len() - 1) as f64) * q).round() as usize];
    let (p50, p99) = (at(0.5), at(0.99));
    println!(
        "PostgreSQL search, {} queries, top 10: p50 {p50:.2} ms, p99 {p99:.2} ms",
        queries.len()
    );
    drop(index);
    groundcite_pg::drop_schema(url, &opts)?;
    println!(
        "{}",
        serde_json::json!({
            "pg_ingest_s": ingest_s,
            "pg_chunks_per_s": summary.chunks as f64 / ingest_s,
            "pg_p50_ms": p50,
            "pg_p99_ms": p99,
            "pg_queries": queries.len(),
        })
    );
    Ok(())
}
