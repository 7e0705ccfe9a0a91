//! A check can be stopped between sentences: a caller whose deadline passed or whose client
//! left gets `None` instead of keeping a core busy.

use std::cell::Cell;

use groundcite_core::check::{check, check_until};
use groundcite_core::{CheckConfig, Passage};
use groundcite_verify::LexicalVerifier;

fn passage(text: &str) -> Passage {
    Passage {
        id: "p1".into(),
        text: text.into(),
        source_url: String::new(),
        section: String::new(),
        score: None,
    }
}

fn answer(sentences: usize) -> String {
    (0..sentences)
        .map(|k| format!("Refunds take {} days [1].", k + 1))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_check_never_stopped_is_the_plain_check() {
    let passages = [passage("Refunds take 3 days. The office opens at nine.")];
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    let answer = answer(5);
    let asked = Cell::new(0usize);
    let stop = || {
        asked.set(asked.get() + 1);
        false
    };
    let out = check_until(None, &passages, &answer, &config, &verifier, &stop).unwrap();
    assert_eq!(out, check(None, &passages, &answer, &config, &verifier));
    // Asked before the work and before every sentence's support check.
    assert!(asked.get() > 5, "asked {} times", asked.get());
}

#[test]
fn a_check_told_to_stop_judges_no_further_sentence() {
    let passages = [passage("Refunds take 3 days. The office opens at nine.")];
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    let answer = answer(50);
    // Stops after the third question: the remaining sentences are never judged.
    let asked = Cell::new(0usize);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 3
    };
    assert_eq!(
        check_until(None, &passages, &answer, &config, &verifier, &stop),
        None
    );
    assert_eq!(asked.get(), 4, "no question after the answer was to stop");
    // Already stopped: nothing runs.
    assert_eq!(
        check_until(None, &passages, &answer, &config, &verifier, &|| true),
        None
    );
}
