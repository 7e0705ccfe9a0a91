//! Lexical retrieval at scale, side by side with SQLite FTS5 on the same
//! chunks in the same run. Run by `bench/scale.sh`, which makes
//! the corpus (`bench/synth.py`) and measures `serve`'s memory.
//!
//!     cargo run --release -p groundcite-bench --bin scale -- CORPUS_DIR WORK_DIR
//!
//! 1. groundcite: a fresh index of CORPUS_DIR in WORK_DIR/index (lexical,
//!    the default ingest options): wall time, chunks/s and MB/s of source,
//!    size on disk.
//! 2. SQLite FTS5 (rusqlite's bundled SQLite): the chunks of that index
//!    (text, section label and page title, tokenizer `porter unicode61`)
//!    inserted into WORK_DIR/fts5.sqlite in one transaction, WAL journal:
//!    wall time, chunks/s, size on disk. The chunks are read back from the
//!    index first, outside the timing.
//! 3. The queries: the dev questions of ../shared/cases (when present) and
//!    400 made of 2 to 5 words of chunks drawn at random (seeded), the
//!    same list for both. Each query runs once to warm up, then once timed:
//!    groundcite's `Index::search(q, 10)` (BM25 over text, section and
//!    title, hits with their normalised score and chunk), and FTS5's
//!    `MATCH` of the query's words (stop words removed as groundcite
//!    removes them), each quoted, joined by OR, ranked by
//!    `bm25(chunks, 1, 0.5, 0.5)` (the same field weights), `LIMIT 10`,
//!    returning id, text, section and title. p50 and p99 of each.
//!
//! The queries are written to WORK_DIR/queries.json for the PostgreSQL run
//! (`bench/src/bin/scale_pg.rs`). The last line is the figures as one
//! JSON object, for `bench/scale.sh`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use groundcite_index::{ChunkIndex, Index, IngestOptions, query_words};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, work] = args.as_slice() else {
        return Err("usage: scale CORPUS_DIR WORK_DIR".into());
    };
    let (corpus, work) = (PathBuf::from(corpus), PathBuf::from(work));
    std::fs::create_dir_all(&work)?;
    let source_bytes = size_of(&corpus)?;

    // 1. groundcite ingest.
    let dir = work.join("index");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let started = Instant::now();
    let mut index = Index::open_or_create(&dir)?;
    let summary = index.ingest(
        std::slice::from_ref(&corpus),
        &IngestOptions::default(),
        &mut |_| {},
    )?;
    let ingest_s = started.elapsed().as_secs_f64();
    let chunks = index.num_chunks();
    let index_bytes = size_of(&dir)?;
    println!(
        "groundcite ingest: {} files, {chunks} chunks, {:.1} MB of source in {ingest_s:.2} s: {:.0} chunks/s, {:.1} MB/s; index {:.1} MB on disk",
        summary.indexed,
        mb(source_bytes),
        chunks as f64 / ingest_s,
        mb(source_bytes) / ingest_s,
        mb(index_bytes)
    );

    // 2. FTS5 on the same chunks.
    let all = index.all_chunks()?;
    let fts_path = work.join("fts5.sqlite");
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", fts_path.display()));
        if p.exists() {
            std::fs::remove_file(p)?;
        }
    }
    let mut db = rusqlite::Connection::open(&fts_path)?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    db.pragma_update(None, "synchronous", "NORMAL")?;
    let started = Instant::now();
    db.execute_batch(
        "CREATE VIRTUAL TABLE chunks USING fts5(text, section, title, id UNINDEXED, tokenize = 'porter unicode61')",
    )?;
    {
        let tx = db.transaction()?;
        {
            let mut insert = tx
                .prepare("INSERT INTO chunks (text, section, title, id) VALUES (?1, ?2, ?3, ?4)")?;
            for c in &all {
                insert.execute((&c.text, &c.section, &c.title, &c.id))?;
            }
        }
        tx.commit()?;
    }
    db.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
    let fts_s = started.elapsed().as_secs_f64();
    let fts_bytes = std::fs::metadata(&fts_path)?.len();
    println!(
        "SQLite FTS5 insert: {} chunks in {fts_s:.2} s: {:.0} chunks/s; {:.1} MB on disk",
        all.len(),
        all.len() as f64 / fts_s,
        mb(fts_bytes)
    );

    // 3. The queries.
    let mut queries = dev_questions();
    let n_dev = queries.len();
    let mut rng = SplitMix(0x5eed);
    while queries.len() < n_dev + 400 {
        let c = &all[(rng.next() % all.len() as u64) as usize];
        let words: Vec<&str> = c
            .text
            .split(|ch: char| !ch.is_alphanumeric())
            .filter(|w| w.len() > 3)
            .collect();
        if words.len() < 5 {
            continue;
        }
        let n = 2 + (rng.next() % 4) as usize;
        let q: Vec<&str> = (0..n)
            .map(|_| words[(rng.next() % words.len() as u64) as usize])
            .collect();
        queries.push(q.join(" "));
    }
    drop(all);
    // The same queries for the PostgreSQL run (bench/src/bin/scale_pg.rs).
    std::fs::write(work.join("queries.json"), serde_json::to_string(&queries)?)?;
    let mut ours = Vec::with_capacity(queries.len());
    for pass in 0..2 {
        for q in &queries {
            let started = Instant::now();
            let hits = index.search(q, 10)?;
            std::hint::black_box(&hits);
            if pass == 1 {
                ours.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let mut select = db.prepare(
        "SELECT id, text, section, title, bm25(chunks, 1.0, 0.5, 0.5) AS s FROM chunks WHERE chunks MATCH ?1 ORDER BY s LIMIT 10",
    )?;
    let mut theirs = Vec::with_capacity(queries.len());
    for pass in 0..2 {
        for q in &queries {
            let expression = fts5_expression(q);
            let started = Instant::now();
            let mut n = 0;
            if !expression.is_empty() {
                let mut rows = select.query([&expression])?;
                while let Some(row) = rows.next()? {
                    let text: String = row.get(1)?;
                    std::hint::black_box(text);
                    n += 1;
                }
            }
            std::hint::black_box(n);
            if pass == 1 {
                theirs.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let (o50, o99) = (percentile(&mut ours, 0.5), percentile(&mut ours, 0.99));
    let (t50, t99) = (percentile(&mut theirs, 0.5), percentile(&mut theirs, 0.99));
    println!(
        "search, {} queries ({n_dev} dev questions, {} drawn from chunks), top 10: groundcite BM25 p50 {o50:.2} ms, p99 {o99:.2} ms; SQLite FTS5 p50 {t50:.2} ms, p99 {t99:.2} ms",
        queries.len(),
        queries.len() - n_dev
    );
    println!(
        "{}",
        serde_json::json!({
            "chunks": chunks,
            "source_mb": mb(source_bytes),
            "ingest_s": ingest_s,
            "ingest_chunks_per_s": chunks as f64 / ingest_s,
            "ingest_mb_per_s": mb(source_bytes) / ingest_s,
            "index_mb": mb(index_bytes),
            "fts5_insert_s": fts_s,
            "fts5_chunks_per_s": chunks as f64 / fts_s,
            "fts5_mb": mb(fts_bytes),
            "queries": queries.len(),
            "bm25_p50_ms": o50,
            "bm25_p99_ms": o99,
            "fts5_p50_ms": t50,
            "fts5_p99_ms": t99,
        })
    );
    Ok(())
}

/// The query's words as groundcite keeps them, each quoted, joined by OR.
fn fts5_expression(query: &str) -> String {
    query_words(query)
        .iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The questions of the dev question sets, when ../shared is present.
fn dev_questions() -> Vec<String> {
    let Some(shared) = groundcite_testdata::shared("the scale benchmark's dev questions") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for file in ["questions-dev.jsonl", "questions-paraphrase-dev.jsonl"] {
        let Ok(text) = std::fs::read_to_string(shared.join("cases").join(file)) else {
            continue;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(q) = v["question"].as_str()
            {
                out.push(q.to_string());
            }
        }
    }
    out
}

/// The value below which a share `q` of `values` lies (sorted in place).
fn percentile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let i = ((values.len() as f64 - 1.0) * q).round() as usize;
    values[i.min(values.len() - 1)]
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The bytes of the files under `path`.
fn size_of(path: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            size_of(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// A small seeded generator (splitmix64): the same queries every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
