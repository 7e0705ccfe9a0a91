//! `verify` end to end: 5 handbook passages of about 1 KB, a 3-sentence answer citing them
//! (the input is in `benches/data.rs`).
//!
//! `cargo bench -p groundcite-verify --bench support`
//!
//! Wall-clock numbers are noisy on a shared machine; instruction counts are not:
//! `bench/src/bin/profile.rs` loops `verify` over the same input for `valgrind --tool=callgrind`.
//! Any optimisation must leave every verdict unchanged: `bench/src/bin/golden.rs` prints every
//! judgement over the dev cases, the HaluEval slice and this input; diff its output before and
//! after a change.

use criterion::{Criterion, criterion_group, criterion_main};
use groundcite_verify::{LexicalVerifier, SupportConfig, Verifier};
use std::hint::black_box;

mod data;
use data::{CLAIMS, PASSAGES, QUESTION};

fn bench(c: &mut Criterion) {
    let verifier = LexicalVerifier::default();
    c.bench_function("verify_5x1KB_3_claims", |b| {
        b.iter(|| {
            verifier.verify(
                black_box(QUESTION),
                black_box(&PASSAGES),
                black_box(&CLAIMS),
            )
        })
    });
}

/// The same without WordNet synonyms and antonyms: what the lexicon costs.
fn bench_without_lexicon(c: &mut Criterion) {
    let verifier = LexicalVerifier::new(SupportConfig {
        check_synonyms: false,
        check_antonyms: false,
        ..SupportConfig::default()
    });
    c.bench_function("verify_5x1KB_3_claims_without_lexicon", |b| {
        b.iter(|| {
            verifier.verify(
                black_box(QUESTION),
                black_box(&PASSAGES),
                black_box(&CLAIMS),
            )
        })
    });
}

criterion_group!(benches, bench, bench_without_lexicon);
criterion_main!(benches);
