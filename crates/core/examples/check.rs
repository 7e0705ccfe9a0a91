//! Check an answer that your own LLM wrote against the passages you sent
//! it: every `[k]` must name the k-th passage sent, and the cited passage
//! must state what the sentence says. Pure: no index, no model, no I/O.
//!
//! ```sh
//! cargo run -p groundcite-core --example check
//! ```

use groundcite_core::{CheckConfig, Passage, check};
use groundcite_verify::LexicalVerifier;

fn main() {
    // The passages in the order they were numbered in the prompt: `[1]` is
    // `passages[0]`.
    let passage = |id: &str, section: &str, text: &str| Passage {
        id: id.into(),
        text: text.into(),
        source_url: format!("https://hr.example/policy#{id}"),
        section: section.into(),
        score: None,
    };
    let passages = [
        passage(
            "leave",
            "Annual leave",
            "Staff get 13 days of annual leave a year.",
        ),
        passage(
            "expenses",
            "Reimbursement",
            "Reimbursements settle within 30 days of approval.",
        ),
    ];
    let answer = "Staff get 15 days of leave [1]. Reimbursements settle within 30 days [2]. \
                  The office is in Paris.";

    let report = check(
        Some("How much leave do I get, and when are expenses paid?"),
        &passages,
        answer,
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );

    let findings = &report.findings;
    println!(
        "status: {}   supported: {}   coverage: {:.0}%",
        findings.status.as_str(),
        findings.supported,
        findings.coverage * 100.0
    );
    for sentence in &findings.sentences {
        println!("{:>12}  {}", sentence.verdict.as_str(), sentence.text);
        if !sentence.message.is_empty() {
            println!("{:>12}  {}", "", sentence.message);
        }
    }
    for source in &findings.sources {
        println!(
            "{:?} {} <{}>: {:?}",
            source.passages, source.label, source.url, source.quote
        );
    }
}
