//! The public JSON shapes, field by field and in order: the answer object
//! (`AskResult`, served and refused) and the check report (`CheckOutput`).
//! Both flatten the check's `Findings`; this pins what clients read.

use std::sync::Arc;

use groundcite_engine::{AskOptions, Engine, Retriever, Settings};
use groundcite_index::{Chunk, Hit};
use groundcite_llm::ScriptedGenerator;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

/// The top-level keys of a JSON object, in the order they were written.
fn keys(json: &str) -> Vec<String> {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                out.push(key);
            }
            Ok(out)
        }
    }
    serde_json::Deserializer::from_str(json)
        .deserialize_map(Keys)
        .expect("a JSON object")
}

/// One passage about reimbursements, scored `score` for every query.
struct OnePassage {
    score: f32,
}

impl Retriever for OnePassage {
    fn search(&self, _: &str, _: usize) -> groundcite_index::Result<Vec<Hit>> {
        let text = "Reimbursements settle within 30 days of approval.";
        Ok(vec![Hit {
            chunk: Chunk {
                id: "expenses.md#L1-L2".into(),
                path: "expenses.md".into(),
                title: "Expenses".into(),
                section: "Reimbursement".into(),
                source_url: "https://handbook.example/expenses#reimbursement".into(),
                text: text.into(),
                start: 0,
                end: text.len(),
                metadata: serde_json::Value::Null,
            },
            score: self.score,
            raw_score: self.score,
            units: None,
        }])
    }
}

fn engine(score: f32) -> Engine {
    let answer = "Reimbursements settle within 30 days of approval [1].".to_string();
    let generator = Arc::new(ScriptedGenerator::new(vec![answer]));
    Engine::new(
        Settings::default(),
        Arc::new(OnePassage { score }),
        generator,
    )
}

/// The check's findings, flattened into both objects.
const FINDINGS: [&str; 10] = [
    "status",
    "supported",
    "grounded",
    "cited",
    "bad_ids",
    "unmarked",
    "coverage",
    "sentences",
    "sources",
    "verifier",
];

fn answer_keys() -> Vec<&'static str> {
    let after = [
        "counts",
        "passages",
        "refusal",
        "answers_question",
        "timings",
        "attempts",
        "generator",
        "retrieval",
        "regenerated",
        "finish_reason",
        "truncated",
        "generation_mode",
    ];
    [&["question", "answer"][..], &FINDINGS, &after].concat()
}

#[tokio::test]
async fn the_answer_object_keeps_its_fields_and_their_order() {
    let question = "How long does reimbursement take?";
    let served = engine(0.9)
        .ask(question, &AskOptions::default())
        .await
        .unwrap();
    assert!(served.refusal.is_none() && served.supported, "{served:#?}");
    assert_eq!(
        keys(&serde_json::to_string(&served).unwrap()),
        answer_keys()
    );

    let refused = engine(0.01)
        .ask(question, &AskOptions::default())
        .await
        .unwrap();
    assert!(refused.refusal.is_some(), "{refused:#?}");
    let json = serde_json::to_string(&refused).unwrap();
    assert_eq!(keys(&json), answer_keys());
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["status"], "no_evidence");
    // The gate refused, but a hit's topic ("Reimbursement") names the
    // question: the refusal links it rather than deny the topic exists.
    assert_eq!(value["refusal"]["reason"], "no_direct_answer");
    assert_eq!(value["coverage"], 1.0);
}

#[test]
fn the_check_report_keeps_its_fields_and_their_order() {
    let engine = engine(0.9);
    let passages = [groundcite_core::Passage {
        id: "p1".into(),
        text: "Reimbursements settle within 30 days of approval.".into(),
        source_url: String::new(),
        section: String::new(),
        score: None,
    }];
    let report = engine.check(None, &passages, "Reimbursements settle in 14 days [1].");
    assert_eq!(report.counts.contradicted, 1);
    let after = ["refusal", "counts", "malformed_markers"];
    assert_eq!(
        keys(&serde_json::to_string(&report).unwrap()),
        [&FINDINGS[..], &after].concat()
    );
}
