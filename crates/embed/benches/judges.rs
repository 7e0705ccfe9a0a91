//! The trained judges' speed (`models/groundcite-judges` over
//! all-MiniLM-L6-v2; the folders from GROUNDCITE_JUDGES_DIR and
//! GROUNDCITE_MODEL_DIR, else the repository's and the fetch script's):
//! - `support_1`: one (passage window, claim) pair, the cost of a check
//!   that sends the judge one claim;
//! - `support_32`, `answers_32`: 32 pairs in one call, the way a check of a
//!   long answer or an ask's candidate sentences are judged (criterion
//!   reports the time per pair).
//!
//! Each pair is about 60 tokens (printed): the first 160 bytes of a
//! handbook section (the passage window) and the first 100 bytes of the
//! next one (the claim or question), cut at a space.
//!
//!     cargo bench -p groundcite-embed --bench judges

mod handbook;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use groundcite_embed::{JUDGES_DIR_ENV, Judges, RELEASED_JUDGES_DIR};

/// The first `max` bytes of `text`, cut at the last space before them.
fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end]
        .rfind(' ')
        .map_or(&text[..end], |at| &text[..at])
}

fn bench(c: &mut Criterion) {
    let judges_dir = match std::env::var_os(JUDGES_DIR_ENV) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(RELEASED_JUDGES_DIR),
    };
    let judges = match Judges::load(&judges_dir, handbook::model_dir()) {
        Ok(judges) => judges,
        Err(err) => {
            eprintln!("judges bench skipped: {err}");
            return;
        }
    };
    let texts: Vec<String> = handbook::sections()
        .into_iter()
        .map(|s| s.text.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| t.len() >= 400)
        .take(33)
        .collect();
    assert_eq!(texts.len(), 33);
    let pairs: Vec<(&str, &str)> = texts
        .windows(2)
        .map(|w| (prefix(&w[0], 160), prefix(&w[1], 100)))
        .collect();
    // [CLS] passage [SEP] claim [SEP]: each text's count has two specials.
    let tokens = groundcite_embed::Embedder::load(handbook::model_dir())
        .map(|e| {
            pairs
                .iter()
                .map(|(a, b)| e.token_count(a).unwrap() + e.token_count(b).unwrap() - 1)
                .sum::<usize>() as f64
                / pairs.len() as f64
        })
        .unwrap_or(f64::NAN);
    eprintln!(
        "judges bench: {} pairs of {tokens:.1} tokens on average",
        pairs.len()
    );

    let mut group = c.benchmark_group("judges");
    group.sample_size(20);
    group.bench_function("support_1", |b| {
        b.iter(|| judges.support(&pairs[..1]).unwrap())
    });
    group.throughput(Throughput::Elements(pairs.len() as u64));
    group.bench_function("support_32", |b| b.iter(|| judges.support(&pairs).unwrap()));
    group.bench_function("answers_32", |b| b.iter(|| judges.answers(&pairs).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
