//! Search latency over the handbook questions, index opened once.
//!
//! ```text
//! cargo bench -p groundcite-index --bench search
//! ```

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use groundcite_index::{ChunkIndex, Index, IngestOptions};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

fn questions() -> Vec<String> {
    std::fs::read_to_string(format!("{SHARED}/cases/questions-dev.jsonl"))
        .expect("questions-dev.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json")["question"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("index");
    {
        let mut index = Index::open_or_create(&dir).expect("create");
        index
            .ingest(
                &[PathBuf::from(format!("{SHARED}/corpora/tts-handbook"))],
                &IngestOptions::handbook(),
                &mut |_| {},
            )
            .expect("ingest");
    }
    let index = Index::open(&dir).expect("open");
    let qs = questions();
    let mut group = c.benchmark_group("search");
    for k in [5, 8] {
        let mut i = 0;
        group.bench_function(format!("handbook question, k={k}"), |b| {
            b.iter(|| {
                let q = &qs[i % qs.len()];
                i += 1;
                black_box(index.search(black_box(q), k).expect("search"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
