//! The structural check over the dev answers (it runs in the request path of
//! every answer), and the full check with support on a 5-passage case.
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

fn full(c: &mut Criterion) {
    let (passages, answer, question) = five_passage_case();
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
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
