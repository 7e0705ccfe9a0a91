//! The structural check over the dev answers (it runs in the request path of
//! every answer), and the full check with support on two 5-passage cases:
//! `full_check_5x1KB_3_sentences` (the support bench's input: five handbook
//! passages of about 1 KB, a 3-sentence answer with two contradictions) and
//! `full_check_5_passages_3_sentences` (shorter dev passages, an answer whose
//! second sentence cites the wrong passage, so the Rule 4 search analyses every
//! passage).
//!
//! `cargo bench -p groundcite-core --bench check`; `bench/compare-python.sh`
//! puts the first figure next to the contract's reference Python `check()`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use groundcite_core::Report;
use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_verify::LexicalVerifier;
use std::hint::black_box;

#[path = "../../verify/benches/data.rs"]
mod data;

mod cases;
use cases::{dev_cases, five_kb_case, five_passage_case};

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
