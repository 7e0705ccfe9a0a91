//! Calibrates the retrieval gate on the handbook questions.
//!
//! ```text
//! cargo run --release -p groundcite-bench --bin calibrate [-- QUESTIONS.jsonl [INDEX_DIR]]
//! ```
//!
//! Ingests `../shared/corpora/tts-handbook` into a temporary directory (or
//! `INDEX_DIR`), then prints recall@3/5/8 (a gold page among the top-k), the
//! best normalised score of every question among its top 5, the score
//! distributions of answerable and unanswerable questions, and the threshold
//! the rule below picks: the lowest best score of an answerable question,
//! minus a margin of 0.10, floored to a multiple of 0.05 (these 23 questions
//! are not the only ones the gate will see: a paraphrase with one stray word,
//! "please tell me...", costs an answerable question 0.1 to 0.2).

use std::path::PathBuf;
use std::time::Instant;

use groundcite_index::{ChunkIndex, DEFAULT_GATE_THRESHOLD, Index, IngestOptions};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared");

struct Question {
    id: String,
    question: String,
    answerable: bool,
    hard: bool,
    gold: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let questions_path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("{SHARED}/cases/questions-dev.jsonl")));
    let tmp = tempfile::tempdir()?;
    let dir = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("index"));

    let t0 = Instant::now();
    let mut index = Index::open_or_create(&dir)?;
    let summary = index.ingest(
        &[PathBuf::from(format!("{SHARED}/corpora/tts-handbook"))],
        &IngestOptions::handbook(),
        &mut |_| {},
    )?;
    let ingest_time = t0.elapsed();
    println!(
        "ingest: {} files seen, {} indexed, {} unchanged, {} skipped, {} chunks, {} errors in {:.2?}",
        summary.files_seen,
        summary.indexed,
        summary.unchanged,
        summary.skipped,
        summary.chunks,
        summary.errors.len(),
        ingest_time
    );
    for e in &summary.errors {
        println!("  error: {e}");
    }

    let mut questions = Vec::new();
    for line in std::fs::read_to_string(&questions_path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line)?;
        questions.push(Question {
            id: v["id"].as_str().unwrap_or_default().to_string(),
            question: v["question"].as_str().unwrap_or_default().to_string(),
            answerable: v["answerable"].as_bool().unwrap_or(false),
            hard: v["hard"].as_bool().unwrap_or(false),
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
    let answerable: Vec<&Question> = questions.iter().filter(|q| q.answerable).collect();

    println!(
        "\nrecall (a gold page among the top k), {} answerable questions:",
        answerable.len()
    );
    for k in [3, 5, 8] {
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
        println!(
            "  recall@{k}: {found}/{} = {:.1}%  missed: {:?}",
            answerable.len(),
            100.0 * found as f64 / answerable.len() as f64,
            missed
        );
    }

    println!(
        "\nbest normalised score among the top 5 (raw BM25 of the top hit), rank of first gold hit:"
    );
    let mut ans_scores = Vec::new();
    let mut unans_scores = Vec::new();
    for q in &questions {
        let hits = index.search(&q.question, 5)?;
        let best = hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
        let raw = hits.first().map_or(0.0, |h| h.raw_score);
        let gold_rank = hits
            .iter()
            .position(|h| q.gold.contains(&h.chunk.path))
            .map(|r| r + 1);
        let kind = if q.answerable {
            "answerable"
        } else if q.hard {
            "unanswerable (hard)"
        } else {
            "unanswerable"
        };
        let top = hits.first().map(|h| h.chunk.id.as_str()).unwrap_or("-");
        println!(
            "  {:5} {best:.3} ({raw:6.2}) gold@{:<4} {kind:20} top={top}  {}",
            q.id,
            gold_rank.map_or("-".into(), |r| r.to_string()),
            q.question
        );
        if q.answerable {
            ans_scores.push(best)
        } else {
            unans_scores.push(best)
        }
    }
    ans_scores.sort_by(f32::total_cmp);
    unans_scores.sort_by(f32::total_cmp);
    println!("\nanswerable   scores: {}", fmt(&ans_scores));
    println!("unanswerable scores: {}", fmt(&unans_scores));

    let min_ans = ans_scores.first().copied().unwrap_or(0.0);
    let chosen = (((min_ans - 0.10) / 0.05 + 1e-4).floor() * 0.05).max(0.0);
    for (name, t) in [
        ("rule: min answerable - 0.10, floored to 0.05", chosen),
        ("DEFAULT_GATE_THRESHOLD", DEFAULT_GATE_THRESHOLD),
    ] {
        let kept = ans_scores.iter().filter(|&&s| s >= t).count();
        let rejected = unans_scores.iter().filter(|&&s| s < t).count();
        println!(
            "threshold {t:.2} ({name}): answerable kept {kept}/{}, unanswerable rejected {rejected}/{}",
            ans_scores.len(),
            unans_scores.len()
        );
    }
    Ok(())
}

fn fmt(v: &[f32]) -> String {
    v.iter()
        .map(|s| format!("{s:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}
