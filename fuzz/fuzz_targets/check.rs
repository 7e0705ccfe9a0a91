//! The whole check (structure, support, resolution) of any answer over
//! three handbook passages: no panic, sentence spans inside the answer on
//! character boundaries, every source quote inside its passage. Answers
//! over the request limits are refused first, as the service does.
#![no_main]

use std::sync::LazyLock;

use groundcite_core::{CheckConfig, Passage, check};
use groundcite_verify::LexicalVerifier;
use libfuzzer_sys::fuzz_target;

static PASSAGES: LazyLock<Vec<Passage>> = LazyLock::new(|| {
    let p = |id: &str, text: &str| Passage {
        id: id.into(),
        text: text.into(),
        source_url: format!("https://handbook.example.com/{id}"),
        section: id.into(),
        score: None,
    };
    vec![
        p("leave", "Annual leave accrues by years of service:\n- Fewer than 3 years: 4 hours per pay period\n- 3 to 15 years: 6 hours per pay period"),
        p("travel", "Unused travel compensatory time is forfeited after 26 pay periods. It is not paid out."),
        p("expenses", "Reimbursements settle within 30 days of approval [2024]. Receipts over $75 are required."),
    ]
});
static CONFIG: LazyLock<CheckConfig> = LazyLock::new(CheckConfig::default);
static VERIFIER: LazyLock<LexicalVerifier> =
    LazyLock::new(|| LexicalVerifier::new(CONFIG.support.clone()));

fuzz_target!(|answer: &str| {
    if CONFIG.limits.admit(&PASSAGES, answer).is_err() {
        return;
    }
    let out = check(Some("How long?"), &PASSAGES, answer, &CONFIG, &*VERIFIER);
    for s in &out.sentences {
        assert!(s.start <= s.end && s.end <= answer.len());
        assert!(answer.is_char_boundary(s.start) && answer.is_char_boundary(s.end));
    }
    for src in &out.sources {
        let text = &PASSAGES[src.quote_passage - 1].text;
        assert!(src.quote_start <= src.quote_end && src.quote_end <= text.len());
    }
    serde_json::to_string(&out).expect("the report serialises");
});
