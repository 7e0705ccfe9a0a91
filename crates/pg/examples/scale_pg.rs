//! Lexical retrieval at scale on PostgreSQL (issue 15): the other half of
//! `crates/index/examples/scale.rs`, run after it by `bench/scale.sh`.
//!
//!     cargo run --release -p groundcite-pg --example scale_pg -- CORPUS_DIR WORK_DIR DATABASE_URL
//!
//! Into a fresh schema `groundcite_scale` of DATABASE_URL (dropped first,
//! and at the end): the migrations, then one ingest of CORPUS_DIR (the
//! default ingest options, lexical): wall time and chunks/s; then the
//! queries the embedded run wrote to WORK_DIR/queries.json, each once to
//! warm up and once timed through `ChunkIndex::search(q, 10)` (hits with
//! their normalised score and chunk): p50 and p99. `SCALE_PG_QUERIES=N`
//! keeps the first N queries (the dev questions come first): at a million
//! chunks a PostgreSQL search takes up to seconds. The queries run twice:
//! with the default `candidate_rows` (the rarest terms' matches first) and
//! with candidates unbounded (every chunk matching any term ranked, as
//! before candidate pruning); the hits must be the same, and the run fails
//! if they are not. `SCALE_PG_KEEP=1` keeps the schema at the end and
//! `SCALE_PG_REUSE=1` searches a kept one without ingesting again. The last
//! line is the figures as one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use groundcite_index::{ChunkIndex, IngestOptions};
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
    let reuse = std::env::var_os("SCALE_PG_REUSE").is_some();
    let mut index = if reuse {
        PgIndex::connect(url, opts.clone())?
    } else {
        groundcite_pg::drop_schema(url, &opts)?;
        groundcite_pg::migrate(url, &opts)?;
        PgIndex::connect(url, opts.clone())?
    };
    let (mut ingest_s, mut chunks) = (0.0, index.num_chunks()? as usize);
    if !reuse || chunks == 0 {
        let started = Instant::now();
        let summary = index.ingest(
            &[PathBuf::from(corpus)],
            &IngestOptions::default(),
            &mut |_| {},
        )?;
        ingest_s = started.elapsed().as_secs_f64();
        chunks = summary.chunks;
        println!(
            "PostgreSQL ingest: {} files, {} chunks in {ingest_s:.2} s: {:.0} chunks/s",
            summary.indexed,
            summary.chunks,
            summary.chunks as f64 / ingest_s
        );
    }
    let every_match = PgIndex::connect(
        url,
        PgOptions {
            candidate_rows: i64::MAX,
            ..opts.clone()
        },
    )?;
    let mut figures = Vec::new();
    let mut hits = Vec::new();
    for (name, index) in [("pruned", &index), ("every match", &every_match)] {
        let mut ms = Vec::with_capacity(queries.len());
        let mut ids = Vec::with_capacity(queries.len());
        for pass in 0..2 {
            for q in &queries {
                let started = Instant::now();
                let found = index.search(q, 10)?;
                if pass == 1 {
                    ms.push(started.elapsed().as_secs_f64() * 1e3);
                    ids.push(found.into_iter().map(|h| h.chunk.id).collect::<Vec<_>>());
                }
            }
        }
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[(((ms.len() - 1) as f64) * q).round() as usize];
        let (p50, p99) = (at(0.5), at(0.99));
        println!(
            "PostgreSQL search ({name}), {} queries, top 10: p50 {p50:.2} ms, p99 {p99:.2} ms",
            queries.len()
        );
        figures.push((p50, p99));
        hits.push(ids);
    }
    let differ = hits[0].iter().zip(&hits[1]).filter(|(a, b)| a != b).count();
    println!("queries whose hits differ between the two: {differ}");
    drop(every_match);
    drop(index);
    if std::env::var_os("SCALE_PG_KEEP").is_none() {
        groundcite_pg::drop_schema(url, &opts)?;
    }
    println!(
        "{}",
        serde_json::json!({
            "pg_ingest_s": ingest_s,
            "pg_chunks_per_s": if ingest_s > 0.0 { chunks as f64 / ingest_s } else { 0.0 },
            "pg_p50_ms": figures[0].0,
            "pg_p99_ms": figures[0].1,
            "pg_every_match_p50_ms": figures[1].0,
            "pg_every_match_p99_ms": figures[1].1,
            "pg_queries": queries.len(),
            "pg_hits_differ": differ,
        })
    );
    if differ > 0 {
        return Err(format!("{differ} queries found other hits with candidate pruning").into());
    }
    Ok(())
}
