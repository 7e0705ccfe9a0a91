//! The semantic verifier with the real model. The model is found through
//! GROUNDCITE_MODEL_DIR or at the default path under the repository root; these tests are
//! required when CI=true and skipped, saying so, otherwise.

use std::path::PathBuf;
use std::sync::Arc;

use groundcite_core::check::SentenceVerdict;
use groundcite_core::{CheckConfig, Passage};
use groundcite_embed::Embedder;
use groundcite_engine::Checker;

fn model_dir() -> Option<PathBuf> {
    groundcite_testdata::model_dir("the semantic verifier test")
}

#[test]
fn the_semantic_checker_keeps_paraphrases_and_contradictions() {
    let Some(dir) = model_dir() else {
        return;
    };
    let embedder = Arc::new(Embedder::load(dir).expect("the model loads"));
    let checker = Checker::with_embedder(CheckConfig::default(), embedder);
    let passages = [Passage {
        id: "leave.md#L1-L1".into(),
        text: "Citrix is the easiest way to use software that's available for Windows but not Mac. You should submit leave requests at least three business days in advance.".into(),
        source_url: String::new(),
        section: String::new(),
        score: None,
    }];
    let answer = "Citrix is the simplest way to run software that's available for Windows but not for Mac [1]. You should submit leave requests at least five business days in advance [1].";
    let report = checker.check(None, &passages, answer);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["verifier"], "semantic");
    // The lexical rules miss "simplest" and "run"; the model sees the same sentence.
    let paraphrase = &report.sentences[0];
    assert_eq!(
        paraphrase.verdict,
        SentenceVerdict::Supported,
        "{paraphrase:#?}"
    );
    assert!(
        paraphrase.reasons[0].starts_with("paraphrase: "),
        "{paraphrase:#?}"
    );
    // However similar, a number that differs stays a contradiction.
    let wrong = &report.sentences[1];
    assert_eq!(wrong.verdict, SentenceVerdict::Contradicted, "{wrong:#?}");
    assert_eq!(
        wrong.message,
        "The source says three business days, not five business days."
    );
}
