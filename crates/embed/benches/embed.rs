//! Embedding speed with all-MiniLM-L6-v2 (`scripts/fetch-model.sh`; the
//! folder from GROUNDCITE_MODEL_DIR or the default path):
//! - `question`: one question, the cost added to every query;
//! - `chunks_32`: a batch of 32 handbook sections of 400 to 1500 bytes, the
//!   unit of work at ingest.
//!
//!     cargo bench -p groundcite-embed --bench embed

mod handbook;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use groundcite_embed::Embedder;

const QUESTION: &str = "How long do I have to edit a message I sent in a team chat channel?";

fn bench(c: &mut Criterion) {
    let dir = handbook::model_dir();
    let embedder = match Embedder::load(&dir) {
        Ok(embedder) => embedder,
        Err(err) => {
            eprintln!("embed bench skipped: {err}");
            return;
        }
    };
    let chunks: Vec<String> = handbook::sections()
        .into_iter()
        .map(|s| s.text)
        .filter(|t| (400..=1500).contains(&t.len()))
        .take(32)
        .collect();
    assert_eq!(chunks.len(), 32);
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();

    let mut group = c.benchmark_group("embed");
    group.sample_size(20);
    group.bench_function("question", |b| {
        b.iter(|| embedder.embed_one(QUESTION).unwrap())
    });
    group.throughput(Throughput::Elements(chunks.len() as u64));
    group.bench_function("chunks_32", |b| b.iter(|| embedder.embed(&chunks).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
