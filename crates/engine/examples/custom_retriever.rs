//! Ask a question over passages that live in your own store: implement
//! [`Retriever`] (search only; no index, no ingest), pair it with a
//! generator (here the embedded extractive one, no model and no key), and
//! [`Engine::ask`] runs the whole contract: the retrieval gate, dense
//! numbering of what is sent, generation, validation of every citation and
//! the support check.
//!
//! ```sh
//! cargo run -p groundcite-engine --example custom_retriever
//! ```

use std::sync::Arc;

use groundcite_engine::{
    AskOptions, Engine, EngineError, ExtractiveGenerator, Retriever, Settings,
};
use groundcite_index::{Chunk, Hit};

/// Your documents, searched by the share of the question's words a
/// passage holds (a stand-in for any search you already have).
struct Store {
    passages: Vec<(&'static str, &'static str, &'static str)>, // id, section, text
}

impl Retriever for Store {
    fn search(&self, query: &str, k: usize) -> groundcite_index::Result<Vec<Hit>> {
        let words: Vec<String> = groundcite_index::query_words(query);
        let mut hits: Vec<Hit> = self
            .passages
            .iter()
            .map(|&(id, section, text)| {
                let lower = text.to_lowercase();
                let found = words.iter().filter(|w| lower.contains(w.as_str())).count();
                // Scores are in 0..=1: the gate refuses below its threshold.
                let score = found as f32 / words.len().max(1) as f32;
                Hit {
                    chunk: Chunk {
                        id: id.into(),
                        path: format!("{id}.md"),
                        title: section.into(),
                        section: section.into(),
                        source_url: format!("https://wiki.example/{id}"),
                        text: text.into(),
                        start: 0,
                        end: text.len(),
                        metadata: serde_json::Value::Null,
                    },
                    score,
                    raw_score: score,
                    units: None,
                }
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(k);
        Ok(hits)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), EngineError> {
    let store = Store {
        passages: vec![
            (
                "vpn",
                "Remote access",
                "The VPN client must be updated every 90 days. Contact IT to reset a token.",
            ),
            (
                "laptops",
                "Equipment",
                "Laptops are replaced every three years. Lost laptops are reported to security.",
            ),
        ],
    };
    let settings = Settings {
        // The last line of a refusal: where to go when the documents do not
        // cover a question.
        handoff: "Ask #it-help for anything the wiki does not cover.".into(),
        demo_on_first_use: false,
        ..Settings::default()
    };
    let generator =
        ExtractiveGenerator::new(settings.extractive.clone(), settings.check.refusal_form);
    let engine = Engine::new(settings, Arc::new(store), Arc::new(generator));

    for question in [
        "How often must the VPN client be updated?",
        "What is the parking policy?",
    ] {
        let result = engine.ask(question, &AskOptions::default()).await?;
        println!("Q: {question}");
        println!("A: {}", result.answer);
        println!(
            "   status {}, supported {}, refused {}",
            result.findings.status.as_str(),
            result.findings.supported,
            result.refusal.is_some()
        );
        for source in &result.findings.sources {
            println!(
                "   source {:?}: {} <{}>",
                source.passages, source.label, source.url
            );
        }
        println!();
    }
    Ok(())
}
