//! The inputs of the check bench, shared with `bench/src/bin/full_loop.rs` so that
//! callgrind counts and criterion times are taken on the same cases. The
//! including crate also includes `support/benches/data.rs` as `data`.

#![allow(dead_code)]

use groundcite_core::Passage;
use groundcite_core::case::Case;

const DEV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/cases/dev.jsonl"
);

/// The labelled dev cases, from `shared/` beside the repository.
pub fn dev_cases() -> Vec<Case> {
    std::fs::read_to_string(DEV)
        .expect("shared/cases/dev.jsonl beside the repo")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Passages, answer, question.
pub type FullCase = (Vec<Passage>, String, String);

/// The first five distinct dev passages over 300 bytes (about 660 bytes on
/// average) and a 3-sentence answer whose second sentence cites the wrong
/// passage, so the Rule 4 search analyses every passage.
pub fn five_passage_case() -> FullCase {
    let cases = dev_cases();
    let mut passages: Vec<Passage> = Vec::new();
    for case in &cases {
        for p in &case.passages {
            if p.text.len() > 300 && !passages.iter().any(|q| q.id == p.id) {
                passages.push(p.clone());
            }
        }
    }
    passages.truncate(5);
    assert_eq!(passages.len(), 5);
    let answer = "GSA processes new badges every Wednesday [1]. In a 40-hour week you are expected to bill at least 32 hours to project work [3]. The default event duration is 30 minutes [4].".to_string();
    let question = "What should a new employee know?".to_string();
    (passages, answer, question)
}

/// The support bench's input (`crates/verify/benches/data.rs`) as a full
/// check: five passages of about 1 KB and the three claims as one answer.
pub fn five_kb_case() -> FullCase {
    let passages = crate::data::PASSAGES
        .iter()
        .enumerate()
        .map(|(i, text)| Passage {
            id: format!("p{}", i + 1),
            text: text.to_string(),
            source_url: format!("https://handbook.example/{}", i + 1),
            section: format!("Section {}", i + 1),
            score: None,
        })
        .collect();
    let answer = crate::data::CLAIMS
        .iter()
        .map(|c| c.text)
        .collect::<Vec<_>>()
        .join(" ");
    let question = crate::data::QUESTION.unwrap_or_default().to_string();
    (passages, answer, question)
}
