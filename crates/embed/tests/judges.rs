//! Tests of the released trained judges (`models/groundcite-judges`, in the
//! repository) over the real all-MiniLM-L6-v2 (`scripts/fetch-model.sh`).
//! Required when CI=true and skipped, saying so, otherwise (without the
//! model).

use std::io::Write;
use std::path::PathBuf;

use groundcite_embed::{DEFAULT_MODEL_DIR, Judges, MODEL_DIR_ENV};
use serde::Deserialize;

/// candle and PyTorch, both in float32 over the same fp16 weights, differ by
/// summation order only (measured under 1e-5); a wrong pooler, head, token
/// type or truncation moves a probability by 1e-2 or more.
const TOLERANCE: f32 = 1e-3;

#[derive(Deserialize)]
struct Reference {
    answer: Vec<AnswerCase>,
    support: Vec<SupportCase>,
}

#[derive(Deserialize)]
struct AnswerCase {
    question: String,
    sentence: String,
    probability: f32,
}

#[derive(Deserialize)]
struct SupportCase {
    passage: String,
    claim: String,
    probabilities: [f32; 3],
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn judges_dir() -> PathBuf {
    repo().join("models/groundcite-judges")
}

fn judges() -> Option<Judges> {
    let base = match std::env::var_os(MODEL_DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => repo().join(DEFAULT_MODEL_DIR),
    };
    if !base.join("model.safetensors").is_file() {
        let reason = format!(
            "all-MiniLM-L6-v2 not found at {} (set {MODEL_DIR_ENV} or run scripts/fetch-model.sh)",
            base.display()
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI=true requires the model: {reason}");
        }
        let _ = writeln!(std::io::stderr(), "skipped: {reason}");
        return None;
    }
    Some(Judges::load(judges_dir(), base).expect("the released judges load"))
}

fn reference() -> Reference {
    let path = judges_dir().join("reference.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn the_judges_reproduce_pytorchs_probabilities() {
    let Some(judges) = judges() else { return };
    let reference = reference();
    let pairs: Vec<(&str, &str)> = reference
        .answer
        .iter()
        .map(|c| (c.question.as_str(), c.sentence.as_str()))
        .collect();
    let got = judges.answers(&pairs).unwrap();
    for (case, p) in reference.answer.iter().zip(&got) {
        assert!(
            (p - case.probability).abs() < TOLERANCE,
            "answers({:?}, {:?}) = {p}, PyTorch: {}",
            case.question,
            case.sentence,
            case.probability
        );
    }
    let pairs: Vec<(&str, &str)> = reference
        .support
        .iter()
        .map(|c| (c.passage.as_str(), c.claim.as_str()))
        .collect();
    let got = judges.support(&pairs).unwrap();
    for (case, p) in reference.support.iter().zip(&got) {
        for (a, b) in p.iter().zip(&case.probabilities) {
            assert!(
                (a - b).abs() < TOLERANCE,
                "support({:?}, {:?}) = {p:?}, PyTorch: {:?}",
                case.passage,
                case.claim,
                case.probabilities
            );
        }
    }
    // One batch or one pair at a time: the same probabilities.
    let one = judges.support(&pairs[1..2]).unwrap();
    for (a, b) in one[0].iter().zip(&got[1]) {
        assert!((a - b).abs() < 1e-5);
    }
}

#[test]
fn damaged_judges_are_refused_with_the_file_named() {
    let Some(_) = judges() else { return };
    let dir = tempfile::tempdir().unwrap();
    for name in ["config.json", "manifest.json", "judges.safetensors"] {
        std::fs::copy(judges_dir().join(name), dir.path().join(name)).unwrap();
    }
    let weights = dir.path().join("judges.safetensors");
    let mut bytes = std::fs::read(&weights).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&weights, bytes).unwrap();
    let base = std::env::var_os(MODEL_DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(DEFAULT_MODEL_DIR));
    let err = Judges::load(dir.path(), &base).unwrap_err().to_string();
    assert!(
        err.contains("judges.safetensors") && err.contains("SHA-256"),
        "{err}"
    );
    // Over a base model other than the one they were trained from.
    std::fs::copy(judges_dir().join("judges.safetensors"), &weights).unwrap();
    let other = tempfile::tempdir().unwrap();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(base.join(name), other.path().join(name)).unwrap();
    }
    std::fs::write(other.path().join("model.safetensors"), b"not the base").unwrap();
    let err = Judges::load(dir.path(), other.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("trained over"), "{err}");
}
