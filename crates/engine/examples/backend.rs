//! Put groundcite in front of a model it has no backend for: implement
//! [`Generator`] over your own client. The engine renders the citation
//! contract and the numbered passages into the request (`system`, or
//! `documents` for a backend that takes them natively), and checks
//! whatever comes back: an id that was never sent is regenerated once,
//! then refused; every cited sentence is checked against its passage.
//!
//! Here the "model" is a function that cites a passage it was never sent
//! on its first try, so the run shows the regeneration.
//!
//! ```sh
//! cargo run -p groundcite-engine --example backend
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{FutureExt, StreamExt};
use groundcite_engine::{AskOptions, Engine, Settings};
use groundcite_index::{ChunkIndex, Index, IngestOptions};
use groundcite_llm::{
    BoxFuture, ChatRequest, EventStream, Generation, Generator, LlmError, StreamEvent,
};

/// Your model client. `calls` counts the requests, to show the retry.
struct MyModel {
    calls: AtomicUsize,
}

impl MyModel {
    /// What your client would return for `request`: here, the first
    /// sentence of passage 1 with a citation of it, after a first answer
    /// that cites a passage that was never sent.
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let first = request.documents.first().map_or("", |d| d.text.as_str());
        // The passage's first line of text (a chunk begins with its heading).
        let line = first
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap_or(first);
        let sentence = line.split_inclusive(". ").next().unwrap_or(line).trim();
        let sentence = sentence.trim_end_matches('.');
        Ok(match self.calls.fetch_add(1, Ordering::Relaxed) {
            0 => format!("{sentence} [9]."),
            _ => format!("{sentence} [1]."),
        })
    }
}

impl Generator for MyModel {
    fn name(&self) -> &str {
        "my-model"
    }

    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        let answer = self.complete(request);
        async move {
            let text = answer?;
            Ok(Generation {
                raw: text.clone(),
                text,
                model: "my-model".into(),
                finish_reason: Some("stop".into()),
                ..Generation::default()
            })
        }
        .boxed()
    }

    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        // A backend without streaming sends its whole answer as one event.
        let done = self.generate(request);
        futures::stream::once(async move { done.await.map(StreamEvent::Done) }).boxed()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The embedded index over the demo handbook, in a folder of its own.
    let dir = tempfile::tempdir()?;
    let mut index = Index::open_or_create(dir.path())?;
    index.ingest_documents(
        "handbook",
        groundcite_index::demo_documents(),
        &IngestOptions::default(),
        &mut |_| {},
    )?;

    let model = Arc::new(MyModel {
        calls: AtomicUsize::new(0),
    });
    let engine = Engine::new(Settings::default(), Arc::new(index), model.clone());
    let result = engine
        .ask("How long does reimbursement take?", &AskOptions::default())
        .await?;
    println!("answer: {}", result.answer);
    println!(
        "status: {}   supported: {}   regenerated: {}   model calls: {}",
        result.findings.status.as_str(),
        result.findings.supported,
        result.regenerated,
        model.calls.load(Ordering::Relaxed)
    );
    for (i, attempt) in result.attempts.iter().enumerate() {
        println!(
            "attempt {}: {:?}, ids never sent: {:?}",
            i + 1,
            attempt.raw,
            attempt.bad_ids
        );
    }
    Ok(())
}
