//! Dense retrieval alone over the handbook, to inform hybrid retrieval:
//! every heading section (its page title on the first line) is
//! embedded, each answerable question of the question sets ranks the
//! sections by cosine, and a question is recalled at k when one of its gold
//! pages holds one of the k best sections' pages (pages deduplicated).
//!
//!     cargo run --release -p groundcite-bench --bin dense_recall

#[path = "../../../crates/embed/benches/handbook.rs"]
mod handbook;

use std::time::Instant;

use groundcite_embed::{Embedder, cosine};
use serde::Deserialize;

const QUESTION_SETS: &[&str] = &["questions-paraphrase-dev.jsonl", "questions-dev.jsonl"];
const KS: [usize; 3] = [1, 3, 5];

#[derive(Deserialize)]
struct Question {
    id: String,
    question: String,
    answerable: bool,
    #[serde(default)]
    gold: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let embedder = Embedder::load(handbook::model_dir())?;
    println!(
        "model {} loaded in {:.2?}",
        embedder.model_id(),
        started.elapsed()
    );

    let sections = handbook::sections();
    let texts: Vec<String> = sections
        .iter()
        .map(|s| format!("{}\n{}", s.title, s.text))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| embedder.token_count(t).unwrap()).sum();
    let started = Instant::now();
    let vectors = embedder.embed(&refs)?;
    let elapsed = started.elapsed();
    println!(
        "corpus: {} sections, {} tokens after truncation, embedded in {:.2?} ({:.1} sections/s)",
        sections.len(),
        tokens,
        elapsed,
        sections.len() as f64 / elapsed.as_secs_f64()
    );

    let cases_dir = handbook::pages_dir().join("../../../cases");
    for file in QUESTION_SETS {
        let questions: Vec<Question> = std::fs::read_to_string(cases_dir.join(file))?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        let answerable: Vec<&Question> = questions
            .iter()
            .filter(|q| q.answerable && !q.gold.is_empty())
            .collect();
        let started = Instant::now();
        let query_vectors = embedder.embed(
            &answerable
                .iter()
                .map(|q| q.question.as_str())
                .collect::<Vec<_>>(),
        )?;
        let query_time = started.elapsed() / answerable.len().max(1) as u32;
        let mut hits = [0usize; KS.len()];
        let mut misses = Vec::new();
        for (question, query) in answerable.iter().zip(query_vectors.rows()) {
            let mut scored: Vec<(f32, &str)> = vectors
                .rows()
                .zip(&sections)
                .map(|(v, s)| (cosine(query, v), s.page.as_str()))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            let mut pages: Vec<&str> = Vec::new();
            for (_, page) in scored {
                if !pages.contains(&page) {
                    pages.push(page);
                }
                if pages.len() == KS[KS.len() - 1] {
                    break;
                }
            }
            let rank = pages
                .iter()
                .position(|p| question.gold.iter().any(|g| g == p));
            for (hit, k) in hits.iter_mut().zip(KS) {
                *hit += usize::from(rank.is_some_and(|r| r < k));
            }
            if rank.is_none_or(|r| r >= 5) {
                misses.push(format!("{} (top: {})", question.id, pages[0]));
            }
        }
        let n = answerable.len();
        let recall: Vec<String> = KS
            .iter()
            .zip(hits)
            .map(|(k, h)| format!("recall@{k} {h}/{n} = {:.1}%", 100.0 * h as f64 / n as f64))
            .collect();
        println!(
            "{file}: {} ({query_time:.2?} per question)",
            recall.join(", ")
        );
        if !misses.is_empty() {
            println!("  not in top 5: {}", misses.join(", "));
        }
    }
    Ok(())
}
