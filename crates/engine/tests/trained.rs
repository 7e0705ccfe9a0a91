//! The trained judges in the engine: the trained verifier and the trained
//! unit scorer, with the released judges (`models/groundcite-judges`) over
//! all-MiniLM-L6-v2. Required when CI=true and skipped, saying so,
//! otherwise (without the model).

use std::path::PathBuf;
use std::sync::Arc;

use groundcite_core::Passage;
use groundcite_core::check::SentenceVerdict;
use groundcite_engine::{
    AskOptions, Checker, Engine, ExtractiveGenerator, Relevance, Retriever, Settings, UnitScorer,
};
use groundcite_index::{Chunk, Hit};
use groundcite_verify::{TrainedScope, VerifierKind};

fn dirs(what: &str) -> Option<(PathBuf, PathBuf)> {
    let model = groundcite_testdata::model_dir(what)?;
    let judges = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/groundcite-judges");
    Some((model, judges))
}

fn settings(model: PathBuf, judges: PathBuf) -> Settings {
    let mut settings = Settings {
        model_dir: Some(model),
        judges_dir: Some(judges),
        ..Settings::default()
    };
    settings.check.verifier = VerifierKind::Trained;
    settings
}

const PASSAGE: &str =
    "Reimbursements settle within 30 days of approval. Only managers approve travel requests.";

#[test]
fn the_trained_verifier_judges_what_the_rules_leave_open_and_keeps_their_exact_findings() {
    let Some((model, judges)) = dirs("the trained verifier") else {
        return;
    };
    for scope in [TrainedScope::Unsure, TrainedScope::All] {
        let mut settings = settings(model.clone(), judges.clone());
        settings.check.support.trained_scope = scope;
        let checker = Checker::from_settings(&settings, None).expect("the judges load");
        let passages = [Passage {
            id: "expenses.md#L1-L2".into(),
            text: PASSAGE.into(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }];
        let answer = "Paybacks are settled in a month once approved [1]. Reimbursements settle within 90 days of approval [1].";
        let report = checker.check(None, &passages, answer);
        assert_eq!(
            serde_json::to_value(&report).unwrap()["verifier"],
            "trained"
        );
        // Words the rules cannot match: the judge decided, and its probabilities are shown.
        let reworded = &report.sentences[0];
        assert!(
            reworded
                .reasons
                .iter()
                .any(|r| r.starts_with("entailment: ")),
            "{reworded:#?}"
        );
        // A number that differs is the rules' exact finding: it stands, with its message.
        let wrong = &report.sentences[1];
        assert_eq!(wrong.verdict, SentenceVerdict::Contradicted, "{wrong:#?}");
        assert_eq!(wrong.message, "The source says 30 days, not 90 days.");
    }
}

#[test]
fn the_trained_verifier_without_judges_is_a_configuration_error() {
    let Some((model, _)) = dirs("the trained verifier's configuration") else {
        return;
    };
    let settings = Settings {
        judges_dir: None,
        ..settings(model.clone(), PathBuf::new())
    };
    let err = settings.validate().unwrap_err().to_string();
    assert!(err.contains("judges_dir"), "{err}");
    let settings = settings_with_missing_judges(model);
    let err = Checker::from_settings(&settings, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/judges"), "{err}");
}

fn settings_with_missing_judges(model: PathBuf) -> Settings {
    settings(model, PathBuf::from("/nonexistent/judges"))
}

/// The same passage, scored 0.9, for every query.
struct Fixed;

impl Retriever for Fixed {
    fn search(&self, _: &str, _: usize) -> groundcite_index::Result<Vec<Hit>> {
        Ok(vec![Hit {
            chunk: Chunk {
                id: "expenses.md#L1-L2".into(),
                path: "expenses.md".into(),
                title: "Expenses".into(),
                section: "Expenses".into(),
                source_url: "https://handbook.example/expenses".into(),
                text: PASSAGE.into(),
                start: 0,
                end: PASSAGE.len(),
                metadata: serde_json::Value::Null,
            },
            score: 0.9,
            raw_score: 0.9,
            units: None,
        }])
    }
}

#[test]
fn the_trained_scorer_judges_answerability_and_says_so() {
    let Some((model, judges)) = dirs("the trained answer scorer") else {
        return;
    };
    let mut settings = settings(model.clone(), judges.clone());
    settings.check.verifier = VerifierKind::Lexical;
    settings.answerability.scorer = UnitScorer::Trained;
    let embedder = groundcite_engine::load_embedder(&settings)
        .unwrap()
        .unwrap();
    let judges = groundcite_engine::load_judges(&settings).unwrap().unwrap();
    let generator = Arc::new(ExtractiveGenerator::new(
        settings.extractive.clone(),
        settings.check.refusal_form,
    ));
    let engine =
        Engine::new(settings, Arc::new(Fixed), generator).with_models(embedder, Some(judges));
    let judged = engine
        .judge("How long do reimbursements take?", &AskOptions::default())
        .unwrap()
        .expect("a model is configured");
    // Probabilities (adjusted by the answer type), one per unit of the passage.
    assert_eq!(judged.judgement.units.len(), 2);
    assert!(
        judged
            .judgement
            .similarity
            .iter()
            .all(|p| (0.0..=1.0).contains(p)),
        "{:?}",
        judged.judgement.similarity
    );
    let relevance = engine
        .answerability()
        .expect("a model is configured")
        .answers_question(
            "How long do reimbursements take?",
            &["Reimbursements settle within 30 days of approval [1]."],
        )
        .unwrap();
    assert_eq!(relevance.method, "trained", "{relevance:?}");
    assert!(relevance.score.is_some(), "{relevance:?}");
    assert_ne!(relevance.verdict, Relevance::Unchecked);
}
