//! `ask` with the extractive generator on the handbook (once the index is
//! open), lexical-only and, when `GROUNDCITE_MODEL_DIR` names a model, on
//! the model path (the answerability gate and selection by meaning), and
//! the cost of validating while streaming.
//!
//! `cargo bench -p groundcite-engine --bench engine`

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use groundcite_engine::{AskEvent, AskOptions, Engine, ExtractiveGenerator, Settings};
use groundcite_index::{ChunkIndex, Index, IngestOptions};
use groundcite_llm::{Generator, ScriptedGenerator, StreamEvent};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

fn handbook_engine(dir: &std::path::Path) -> Engine {
    let mut index = Index::open_or_create(dir).unwrap();
    let pages = std::path::PathBuf::from(format!("{SHARED}/corpora/tts-handbook/pages"));
    index
        .ingest(&[pages], &IngestOptions::handbook(), &mut |_| {})
        .unwrap();
    let settings = Settings::default();
    let generator = Arc::new(ExtractiveGenerator::new(
        settings.extractive.clone(),
        settings.check.refusal_form,
    ));
    Engine::new(settings, Arc::new(index), generator)
}

fn ask(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let engine = handbook_engine(dir.path());
    let questions: Vec<String> =
        std::fs::read_to_string(format!("{SHARED}/cases/questions-dev.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["question"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut i = 0usize;
    c.bench_function("ask_extractive_handbook_per_question", |b| {
        b.iter(|| {
            let q = &questions[i % questions.len()];
            i += 1;
            runtime
                .block_on(engine.ask(q, &AskOptions::default()))
                .unwrap()
        })
    });
    let Some(model_dir) = std::env::var_os("GROUNDCITE_MODEL_DIR") else {
        eprintln!("ask_extractive_handbook_with_model: skipped (set GROUNDCITE_MODEL_DIR)");
        return;
    };
    let embedder = Arc::new(groundcite_embed::Embedder::load(model_dir).unwrap());
    let engine = engine.with_embedder(embedder);
    // 23 questions in turn: more than the judgements remembered, so every
    // ask embeds its sentences (this index has no vectors: an `ask` over
    // unit vectors stored at ingest is measured by `bench/hybrid.sh`).
    c.bench_function("ask_extractive_handbook_with_model", |b| {
        b.iter(|| {
            let q = &questions[i % questions.len()];
            i += 1;
            runtime
                .block_on(engine.ask(q, &AskOptions::default()))
                .unwrap()
        })
    });
}

/// Ten sentences, each citing a passage that exists.
fn ten_sentences() -> String {
    (0..10)
        .map(|k| {
            format!(
                "Reimbursements settle within {} days of approval [{}].",
                30 + k,
                1 + k % 3
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

struct Fixed;
impl groundcite_engine::Retriever for Fixed {
    fn search(&self, _q: &str, _k: usize) -> groundcite_index::Result<Vec<groundcite_index::Hit>> {
        let text = "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.";
        Ok((1..=3)
            .map(|k| groundcite_index::Hit {
                chunk: groundcite_index::Chunk {
                    id: format!("p{k}"),
                    path: format!("p{k}"),
                    title: "Reimbursement".into(),
                    section: "Reimbursement".into(),
                    source_url: format!("https://hr.example/{k}"),
                    text: text.into(),
                    start: 0,
                    end: text.len(),
                    metadata: serde_json::Value::Null,
                },
                score: 0.9,
                raw_score: 9.0,
                units: None,
            })
            .collect())
    }
}

fn streaming(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answer = ten_sentences();
    // The raw stream: the scripted generator emitting 8-character deltas.
    let raw =
        ScriptedGenerator::new(vec![answer.clone()]).with_pacing(8, std::time::Duration::ZERO);
    let request = groundcite_llm::ChatRequest::default();
    let mut group = c.benchmark_group("stream_10_sentences");
    group.bench_function("raw", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut s = raw.generate_stream(&request);
                let mut n = 0;
                while let Some(e) = s.next().await {
                    if let Ok(StreamEvent::Text(t)) = e {
                        n += t.len();
                    }
                }
                n
            })
        })
    });
    // The same stream through hold-back, marker validation and support
    // checking of each sentence, to the final report.
    let generator = Arc::new(
        ScriptedGenerator::new(vec![answer.clone()]).with_pacing(8, std::time::Duration::ZERO),
    );
    let engine = Engine::new(Settings::default(), Arc::new(Fixed), generator);
    group.bench_function("validated", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut s =
                    engine.ask_stream("How long does reimbursement take?", &AskOptions::default());
                let mut sentences = 0;
                while let Some(e) = s.next().await {
                    match e {
                        AskEvent::Sentence(_) => sentences += 1,
                        AskEvent::Final(_) => {}
                        AskEvent::Retract(r) => panic!("retracted: {}", r.reason),
                        AskEvent::Error(e) => panic!("{e}"),
                    }
                }
                assert_eq!(sentences, 10);
            })
        })
    });
    group.finish();
}

criterion_group!(benches, ask, streaming);
criterion_main!(benches);
