//! The PostgreSQL backend against the embedded index on the handbook:
//! gold-page recall@3/5/8, the best normalised score of every development
//! question (and the gate threshold the calibration rule picks for each
//! backend), and search latency (median, p95) on the same questions.
//!
//! ```text
//! eval "$(.ci/pg.sh)"     # or any GROUNDCITE_TEST_DATABASE_URL
//! cargo bench -p groundcite-pg --bench search [-- QUESTIONS.jsonl]
//! ```
//!
//! Uses its own schema (`bench_search_{pid}`), dropped at the end. Search
//! latency is measured in-process over a pooled loopback connection: 5
//! warm-up rounds, then `GROUNDCITE_BENCH_ROUNDS` (default 20) rounds of
//! every question, each search timed on its own.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use groundcite_index::{ChunkIndex, Index, IngestOptions};
use groundcite_pg::{PgIndex, PgOptions};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

struct Question {
    id: String,
    question: String,
    answerable: bool,
    gold: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let questions_path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("{SHARED}/cases/questions-dev.jsonl")));
    let Ok(url) = std::env::var("GROUNDCITE_TEST_DATABASE_URL") else {
        eprintln!("GROUNDCITE_TEST_DATABASE_URL is not set: run `eval \"$(.ci/pg.sh)\"` first");
        std::process::exit(2);
    };
    let rounds: usize = std::env::var("GROUNDCITE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let questions = read_questions(&questions_path)?;
    let corpus = PathBuf::from(format!("{SHARED}/corpora/tts-handbook"));
    let opts = IngestOptions::handbook();

    let tmp = tempfile::tempdir()?;
    let mut embedded = Index::open_or_create(&tmp.path().join("index"))?;
    let pg_opts = PgOptions::default().with_schema(format!("bench_search_{}", std::process::id()));
    groundcite_pg::migrate(&url, &pg_opts)?;
    let result = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut pg = PgIndex::connect(&url, pg_opts.clone())?;
        println!("PostgreSQL: {}", ChunkIndex::location(&pg));
        let backends: [(&str, &mut dyn ChunkIndex); 2] =
            [("embedded", &mut embedded), ("postgres", &mut pg)];
        let mut rows = Vec::new();
        for (name, index) in backends {
            let t0 = Instant::now();
            let s = index.ingest(std::slice::from_ref(&corpus), &opts, &mut |_| {})?;
            let ingest = t0.elapsed();
            let t1 = Instant::now();
            let again = index.ingest(std::slice::from_ref(&corpus), &opts, &mut |_| {})?;
            let reingest = t1.elapsed();
            println!(
                "\n== {name}: {} files indexed, {} chunks, {} errors; ingest {:.2?}, unchanged re-ingest {:.2?} ({} unchanged)",
                s.indexed,
                index.num_chunks()?,
                s.errors.len(),
                ingest,
                reingest,
                again.unchanged
            );
            rows.push(evaluate(name, &*index, &questions)?);
        }
        let (e, p) = latency(&embedded, &pg, &questions, rounds)?;
        (rows[0].median_ms, rows[0].p95_ms) = e;
        (rows[1].median_ms, rows[1].p95_ms) = p;
        println!(
            "\n== side by side ({} questions, {rounds} rounds)",
            questions.len()
        );
        println!(
            "{:10} {:>9} {:>9} {:>9} {:>12} {:>12} {:>10} {:>10}",
            "backend",
            "recall@3",
            "recall@5",
            "recall@8",
            "median (ms)",
            "p95 (ms)",
            "threshold",
            "default"
        );
        for r in &rows {
            println!(
                "{:10} {:>8.1}% {:>8.1}% {:>8.1}% {:>12.3} {:>12.3} {:>10.2} {:>10.2}",
                r.name,
                r.recall[0],
                r.recall[1],
                r.recall[2],
                r.median_ms,
                r.p95_ms,
                r.rule_threshold,
                r.default_threshold
            );
        }
        let gap = rows[0].recall[1] - rows[1].recall[1];
        println!(
            "recall@5 gap (embedded - postgres): {gap:+.1} points ({})",
            if gap.abs() <= 5.0 {
                "within 5"
            } else {
                "OVER 5"
            }
        );
        Ok(())
    })();
    groundcite_pg::drop_schema(&url, &pg_opts)?;
    result
}

struct Row {
    name: &'static str,
    recall: [f64; 3],
    median_ms: f64,
    p95_ms: f64,
    rule_threshold: f32,
    default_threshold: f32,
}

/// Search latency of both backends, interleaved (embedded, then postgres,
/// for every question of every round) so that both see the same machine
/// load: `((median, p95), (median, p95))` in ms.
#[allow(clippy::type_complexity)]
fn latency(
    embedded: &dyn ChunkIndex,
    pg: &dyn ChunkIndex,
    questions: &[Question],
    rounds: usize,
) -> Result<((f64, f64), (f64, f64)), Box<dyn std::error::Error>> {
    for _ in 0..5 {
        for q in questions {
            embedded.search(&q.question, 5)?;
            pg.search(&q.question, 5)?;
        }
    }
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for q in questions {
            for (i, index) in [embedded, pg].into_iter().enumerate() {
                let t = Instant::now();
                std::hint::black_box(index.search(&q.question, 5)?);
                times[i].push(t.elapsed());
            }
        }
    }
    let mut out = [(0.0, 0.0); 2];
    for (i, name) in ["embedded", "postgres"].into_iter().enumerate() {
        let t = &mut times[i];
        t.sort();
        let pct = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3;
        out[i] = (pct(0.5), pct(0.95));
        println!(
            "latency {name:9} over {} searches (k=5): median {:.3} ms, p95 {:.3} ms, max {:.3} ms",
            t.len(),
            out[i].0,
            out[i].1,
            pct(1.0)
        );
    }
    Ok((out[0], out[1]))
}

fn evaluate(
    name: &'static str,
    index: &dyn ChunkIndex,
    questions: &[Question],
) -> Result<Row, Box<dyn std::error::Error>> {
    let answerable: Vec<&Question> = questions.iter().filter(|q| q.answerable).collect();
    let mut recall = [0.0; 3];
    for (i, k) in [3, 5, 8].into_iter().enumerate() {
        let mut found = 0;
        let mut missed = Vec::new();
        for q in &answerable {
            let hits = index.search(&q.question, k)?;
            if hits.iter().any(|h| q.gold.contains(&h.chunk.path)) {
                found += 1;
            } else {
                missed.push(q.id.as_str());
            }
        }
        recall[i] = 100.0 * found as f64 / answerable.len().max(1) as f64;
        println!(
            "  recall@{k}: {found}/{} = {:.1}%  missed: {missed:?}",
            answerable.len(),
            recall[i]
        );
    }
    let (mut ans, mut unans) = (Vec::new(), Vec::new());
    for q in questions {
        let hits = index.search(&q.question, 5)?;
        let best = hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
        let gold = hits
            .iter()
            .position(|h| q.gold.contains(&h.chunk.path))
            .map_or("-".to_string(), |r| (r + 1).to_string());
        let top = hits.first().map_or("-", |h| h.chunk.id.as_str());
        println!(
            "  {:5} {best:.3} gold@{gold:<2} {:11} top={top}",
            q.id,
            if q.answerable {
                "answerable"
            } else {
                "unanswerable"
            }
        );
        if q.answerable {
            ans.push(best);
        } else {
            unans.push(best);
        }
    }
    ans.sort_by(f32::total_cmp);
    unans.sort_by(f32::total_cmp);
    println!("  answerable   best scores: {}", fmt(&ans));
    println!("  unanswerable best scores: {}", fmt(&unans));
    let min_ans = ans.first().copied().unwrap_or(0.0);
    let rule = (((min_ans - 0.10) / 0.05 + 1e-4).floor() * 0.05).max(0.0);
    let default = index.default_gate_threshold();
    for (label, t) in [
        ("rule: min answerable - 0.10, floored to 0.05", rule),
        ("default", default),
    ] {
        println!(
            "  threshold {t:.2} ({label}): answerable kept {}/{}, unanswerable rejected {}/{}",
            ans.iter().filter(|&&s| s >= t).count(),
            ans.len(),
            unans.iter().filter(|&&s| s < t).count(),
            unans.len()
        );
    }

    Ok(Row {
        name,
        recall,
        median_ms: 0.0,
        p95_ms: 0.0,
        rule_threshold: rule,
        default_threshold: default,
    })
}

fn read_questions(path: &PathBuf) -> Result<Vec<Question>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for line in std::fs::read_to_string(path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line)?;
        out.push(Question {
            id: v["id"].as_str().unwrap_or_default().to_string(),
            question: v["question"].as_str().unwrap_or_default().to_string(),
            answerable: v["answerable"].as_bool().unwrap_or(false),
            gold: v["gold"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|g| g.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

fn fmt(v: &[f32]) -> String {
    v.iter()
        .map(|s| format!("{s:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}
