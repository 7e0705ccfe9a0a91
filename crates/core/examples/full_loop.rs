//! Runs the full check (structure, support, sources) on one of the bench's
//! 5-passage cases many times: for instruction counts under
//! `valgrind --tool=callgrind` and quick timings.
//! `cargo run --release -p groundcite-core --example full_loop [PASSES] [rule4|kb]`
//! (`rule4`: `full_check_5_passages_3_sentences`, the default; `kb`:
//! `full_check_5x1KB_3_sentences`).
use groundcite_core::Passage;
use groundcite_core::case::Case;
use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_support::LexicalVerifier;
use std::hint::black_box;

#[path = "../../support/benches/data.rs"]
mod data;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/cases/dev.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("shared/cases/dev.jsonl");
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut passages: Vec<Passage> = Vec::new();
    for case in &cases {
        for p in &case.passages {
            if p.text.len() > 300 && !passages.iter().any(|q| q.id == p.id) {
                passages.push(p.clone());
            }
        }
    }
    passages.truncate(5);
    let mut answer = "GSA processes new badges every Wednesday [1]. In a 40-hour week you are expected to bill at least 32 hours to project work [3]. The default event duration is 30 minutes [4].".to_string();
    let mut question = "What should a new employee know?";
    if std::env::args().nth(2).as_deref() == Some("kb") {
        for (p, text) in passages.iter_mut().zip(data::PASSAGES) {
            p.text = text.to_string();
        }
        answer = data::CLAIMS
            .iter()
            .map(|c| c.text)
            .collect::<Vec<_>>()
            .join(" ");
        question = data::QUESTION.unwrap_or_default();
    }
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
    let start = std::time::Instant::now();
    for _ in 0..passes {
        black_box(check(
            Some(question),
            black_box(&passages),
            black_box(&answer),
            &config,
            &verifier,
        ));
    }
    let per = start.elapsed().as_nanos() as f64 / passes as f64;
    println!("{per:.0} ns per check over {passes} passes");
}
