//! The structural check over the dev answers (it runs in the request path of
//! every answer), and the full check with support on two 5-passage cases:
//! `full_check_5x1KB_3_sentences` (the support bench's input: five handbook
//! passages of about 1 KB, a 3-sentence answer with two contradictions) and
//! `full_check_5_passages_3_sentences` (shorter dev passages, an answer whose
//! second sentence cites the wrong passage, so the Rule 4 search analyses every
//! passage).
//!
//! `cargo bench -p groundcite-core --bench check`; `bench/compare-python.sh`
//! puts the first figure next to the seed's Python `check()`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use groundcite_core::case::Case;
use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_core::{Passage, Report};
use groundcite_support::LexicalVerifier;
use std::hint::black_box;

#[path = "../../support/benches/data.rs"]
mod data;

const DEV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/cases/dev.jsonl"
);

fn dev_cases() -> Vec<Case> {
    std::fs::read_to_string(DEV)
        .expect("shared/cases/dev.jsonl beside the repo")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn structural(c: &mut Criterion) {
    let cases = dev_cases();
    let answers: Vec<(&str, usize)> = cases
        .iter()
        .map(|c| (c.answer.as_str(), c.passages.len()))
        .collect();
    let mut group = c.benchmark_group("structural");
    group.throughput(Throughput::Elements(answers.len() as u64));
    // The request path: one report reused across answers (no allocation
    // after warm-up beyond the report's own buffers).
    group.bench_function("dev_answers_reused_report", |b| {
        let mut report = Report::default();
        b.iter(|| {
            for &(answer, n) in &answers {
                report.recheck(black_box(answer), n);
                black_box(&report);
            }
        })
    });
    group.bench_function("dev_answers_fresh_report", |b| {
        b.iter(|| {
            for &(answer, n) in &answers {
                black_box(Report::check(black_box(answer), n));
            }
        })
    });
    group.finish();
}

/// Five real handbook chunks of about 1 KB and a 3-sentence answer.
fn five_passage_case() -> (Vec<Passage>, String, String) {
    let cases = dev_cases();
    let mut passages: Vec<Passage> = Vec::new();
    for case in &cases {
        for p in &case.passages {
            if p.text.len() > 300 && !passages.iter().any(|q| q.id == p.id) {
                passages.push(p.clone());
            }
        }
    }
    passages.truncate(5);
    assert_eq!(passages.len(), 5);
    let answer = "GSA processes new badges every Wednesday [1]. In a 40-hour week you are expected to bill at least 32 hours to project work [3]. The default event duration is 30 minutes [4].".to_string();
    let question = "What should a new employee know?".to_string();
    (passages, answer, question)
}

/// The support bench's input (`crates/support/benches/data.rs`) as a full
/// check: five passages of about 1 KB and the three claims as one answer.
fn five_kb_case() -> (Vec<Passage>, String, String) {
    let passages = data::PASSAGES
        .iter()
        .enumerate()
        .map(|(i, text)| Passage {
            id: format!("p{}", i + 1),
            text: text.to_string(),
            source_url: format!("https://handbook.example/{}", i + 1),
            section: format!("Section {}", i + 1),
            score: None,
        })
        .collect();
    let answer = data::CLAIMS
        .iter()
        .map(|c| c.text)
        .collect::<Vec<_>>()
        .join(" ");
    let question = data::QUESTION.unwrap_or_default().to_string();
    (passages, answer, question)
}

fn full(c: &mut Criterion) {
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
    let (passages, answer, question) = five_kb_case();
    c.bench_function("full_check_5x1KB_3_sentences", |b| {
        b.iter(|| {
            black_box(check(
                Some(&question),
                black_box(&passages),
                black_box(&answer),
                &config,
                &verifier,
            ))
        })
    });
    let (passages, answer, question) = five_passage_case();
    c.bench_function("full_check_5_passages_3_sentences", |b| {
        b.iter(|| {
            black_box(check(
                Some(&question),
                black_box(&passages),
                black_box(&answer),
                &config,
                &verifier,
            ))
        })
    });
}

criterion_group!(benches, structural, full);
criterion_main!(benches);
