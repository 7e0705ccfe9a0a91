//! Every labelled case (shared/cases/dev.jsonl and paraphrase-dev.jsonl, or
//! their part in the fixtures) gets its bad ids, status and unmarked labels
//! right; support labels of the dev cases are scored to the bars.

use groundcite_core::case::{Case, Label, score};
use groundcite_core::check::{SentenceVerdict, check};
use groundcite_core::config::CheckConfig;
use groundcite_testdata::{Origin, read_shared_or_fixture};
use groundcite_verify::LexicalVerifier;

/// The labelled cases of `cases/{name}`: all of them (at least `full`) when
/// `../shared` is there, else the fixtures' part of them.
fn read_cases(name: &str, full: usize) -> Vec<Case> {
    let (text, origin) = read_shared_or_fixture(&format!("cases/{name}"));
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let least = if origin == Origin::Shared { full } else { 1 };
    assert!(cases.len() >= least, "{name}: {} cases", cases.len());
    cases
}

fn dev_cases() -> Vec<Case> {
    read_cases("dev.jsonl", 28)
}

#[test]
fn structural_labels_are_exact_on_every_case() {
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
    let mut cases = dev_cases();
    cases.extend(read_cases("paraphrase-dev.jsonl", 72));
    for case in &cases {
        let o = check(
            case.question.as_deref(),
            &case.passages,
            &case.answer,
            &config,
            &verifier,
        );
        let labels = case.labels.as_ref().unwrap();
        assert_eq!(o.bad_ids, labels.bad_ids, "{}: bad_ids", case.id);
        assert_eq!(o.status, labels.status, "{}: status", case.id);
        // Unmarked: every `unmarked` label is in the report's list, and the
        // list holds nothing else.
        let expected: Vec<&str> = labels
            .sentences
            .iter()
            .filter(|s| s.label == Label::Unmarked)
            .map(|s| s.matches.as_str())
            .collect();
        assert_eq!(
            o.unmarked.len(),
            expected.len(),
            "{}: unmarked {:?}",
            case.id,
            o.unmarked
        );
        for m in expected {
            assert!(
                o.unmarked.iter().any(|u| u.text.contains(m)),
                "{}: {m:?} not reported unmarked",
                case.id
            );
        }
    }
}

#[test]
fn support_labels_meet_the_bars() {
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
    let (mut contradicted, mut unsupported, mut supported) = ((0, 0), (0, 0), (0, 0));
    for case in dev_cases() {
        let o = check(
            case.question.as_deref(),
            &case.passages,
            &case.answer,
            &config,
            &verifier,
        );
        for s in score(&case, &o).unwrap().sentences {
            let slot = match s.label {
                Label::Contradicted => &mut contradicted,
                Label::Unsupported => &mut unsupported,
                Label::Supported => &mut supported,
                Label::Unmarked => {
                    assert_eq!(
                        s.verdict,
                        Some(SentenceVerdict::Uncited),
                        "{} {:?}",
                        s.case,
                        s.matches
                    );
                    continue;
                }
            };
            slot.0 += 1;
            slot.1 += usize::from(s.correct);
        }
    }
    assert_eq!(
        contradicted.1, contradicted.0,
        "every contradicted sentence flagged contradicted"
    );
    assert!(
        unsupported.1 * 10 >= unsupported.0 * 9,
        "unsupported: {unsupported:?}"
    );
    let false_alarms = supported.0 - supported.1;
    assert!(
        false_alarms * 20 <= supported.0,
        "supported flagged: {false_alarms} of {}",
        supported.0
    );
}
