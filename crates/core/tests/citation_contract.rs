//! The worked examples of the citation contract, with the exact outputs its
//! reference functions print: checking markers, resolving sources, the two
//! refusal forms, and the retrieval gate.

use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_core::{Passage, Report, Status, gate};
use groundcite_verify::LexicalVerifier;

fn hr_passages() -> Vec<Passage> {
    let p = |id: &str, section: &str, url: &str, text: &str| Passage {
        id: id.into(),
        text: text.into(),
        source_url: url.into(),
        section: section.into(),
        score: None,
    };
    vec![
        p(
            "hr-1",
            "Filing",
            "https://hr.example/policy",
            "Expense claims must be filed within 60 days of the expense.",
        ),
        p(
            "hr-2",
            "Reimbursement",
            "https://hr.example/policy",
            "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
        ),
        p(
            "hr-3",
            "Help",
            "https://hr.example/faq",
            "Questions about reimbursement go to the finance help desk.",
        ),
    ]
}

fn unmarked(answer: &str, r: &Report) -> Vec<String> {
    r.unmarked().map(|s| answer[s.span()].to_string()).collect()
}

#[test]
fn a_contract_answer_cites_only_ids_sent() {
    // {'cited': [2], 'bad_ids': [], 'unmarked': []}
    let answer = "Reimbursements settle within 30 days of approval [2]. Claims for per diem are\npaid on the same schedule [2].";
    let r = Report::check(answer, 3);
    assert_eq!(r.cited, [2]);
    assert!(r.bad_ids.is_empty());
    assert!(unmarked(answer, &r).is_empty());
}

#[test]
fn a_bad_answer_has_a_bad_id_and_an_unmarked_claim() {
    // {'cited': [7], 'bad_ids': [7], 'unmarked': ['Reimbursements settle in 14 days.']}
    let answer = "Refunds take 14 days [7]. Reimbursements settle in 14 days.";
    let r = Report::check(answer, 3);
    assert_eq!(r.cited, [7]);
    assert_eq!(r.bad_ids, [7]);
    assert_eq!(unmarked(answer, &r), ["Reimbursements settle in 14 days."]);
}

#[test]
fn markers_resolve_to_the_source_with_its_quote() {
    // {'status': 'ok', 'sources': [{'label': 'Reimbursement', 'url': 'https://hr.example/policy',
    //   'quote': 'Reimbursements settle within 30 days of approval...'}]}
    let answer = "Reimbursements settle within 30 days of approval [2]. Claims for per diem are\npaid on the same schedule [2].";
    let o = check(
        None,
        &hr_passages(),
        answer,
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    assert_eq!(o.status, Status::Ok);
    assert_eq!(o.sources.len(), 1);
    let s = &o.sources[0];
    assert_eq!(
        (s.label.as_str(), s.url.as_str()),
        ("Reimbursement", "https://hr.example/policy")
    );
    assert!(
        s.quote
            .starts_with("Reimbursements settle within 30 days of approval"),
        "{}",
        s.quote
    );
    assert_eq!(s.passages, [2]);
}

#[test]
fn the_refusal_sentence_gives_no_evidence_and_is_grounded() {
    // {"status": "no_evidence", "sources": []}
    let o = check(
        Some("does the plan cover home office furniture?"),
        &hr_passages(),
        "Not covered by the provided documents.",
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    assert_eq!(o.status, Status::NoEvidence);
    assert!(o.sources.is_empty());
    assert!(o.grounded, "an honest refusal is grounded");
}

#[test]
fn two_passages_of_one_document_make_one_source() {
    let answer = "Claims are filed within 60 days [1]. Reimbursements settle within 30 days of approval [2].";
    let o = check(
        None,
        &hr_passages(),
        answer,
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    assert_eq!(o.sources.len(), 1);
    assert_eq!(o.sources[0].passages, [1, 2]);
    assert_eq!(o.sources[0].markers.len(), 2);
}

#[test]
fn the_sentinel_is_a_refusal_with_what_is_needed() {
    let o = check(
        None,
        &hr_passages(),
        "NOT_IN_SOURCES: the reimbursement schedule for contractors",
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    assert_eq!(o.status, Status::NoEvidence);
    assert_eq!(
        o.refusal.unwrap().needed.as_deref(),
        Some("the reimbursement schedule for contractors")
    );
}

#[test]
fn cited_ids_unknown_ids_and_uncited_claims_per_line() {
    // context_ids = {1, 2}
    let lines = [
        (
            "COD refunds go to your bank account or wallet [2], within 5-7 working days [1].",
            vec![1u64, 2],
            vec![],
            true,
        ),
        (
            "Refunds are instant for all orders [4].",
            vec![4],
            vec![4],
            true,
        ),
        ("You will get your refund soon.", vec![], vec![], false),
    ];
    for (answer, cited, unknown, has_citation) in lines {
        let r = Report::check(answer, 2);
        assert_eq!(r.cited, cited, "{answer}");
        assert_eq!(r.bad_ids, unknown, "{answer}");
        assert_eq!(!r.cited.is_empty(), has_citation, "{answer}");
    }
    // "You will get your refund soon." is a claim without a marker.
    let r = Report::check("You will get your refund soon.", 2);
    assert_eq!(r.unmarked().count(), 1);
}

#[test]
fn the_retrieval_gate_refuses_weak_or_no_scores() {
    assert!(gate::should_answer(&[0.83, 0.79], 0.55));
    assert!(!gate::should_answer(&[0.31, 0.22], 0.55));
    assert!(!gate::should_answer(&[], 0.55));
}

/// Every factual sentence carries a plain message beside its machine reason (the
/// correction first), and the report names the verifier that ran (none when support checking
/// is off).
#[test]
fn flagged_sentences_get_a_message_and_the_report_its_verifier() {
    let answer = "Reimbursements settle in 14 days [2]. Expense claims must be filed within 60 days of the expense [1]. Refunds come by courier [9].";
    let out = check(
        None,
        &hr_passages(),
        answer,
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["verifier"], "lexical");
    assert_eq!(
        out.sentences[0].reasons,
        [r#"number_mismatch: "14 days" vs "30 days""#]
    );
    assert_eq!(
        out.sentences[0].message,
        "The source says 30 days, not 14 days."
    );
    assert_eq!(out.sentences[1].message, "Stated in passage 1.");
    assert_eq!(
        out.sentences[2].message,
        "It cites passage 9, which was never sent: it cannot be checked."
    );
    let off = CheckConfig {
        verify_support: false,
        ..CheckConfig::default()
    };
    let out = check(
        None,
        &hr_passages(),
        answer,
        &off,
        &LexicalVerifier::default(),
    );
    assert_eq!(
        serde_json::to_value(&out).unwrap()["verifier"],
        serde_json::Value::Null
    );
}

/// Every sentence carries its markers as byte spans of the
/// answer with the ids they name (ids never sent included), so a reader
/// places chips without parsing markers again.
#[test]
fn sentences_carry_their_markers_as_answer_spans() {
    let answer =
        "Réimbursements settle within 30 days [1, 2]. Claims are filed within 60 days [2-3][9].";
    let o = check(
        None,
        &hr_passages(),
        answer,
        &CheckConfig::default(),
        &LexicalVerifier::default(),
    );
    let spans: Vec<Vec<(&str, Vec<u64>)>> = o
        .sentences
        .iter()
        .map(|s| {
            s.markers
                .iter()
                .map(|m| (&answer[m.start..m.end], m.ids.clone()))
                .collect()
        })
        .collect();
    assert_eq!(
        spans,
        [
            vec![("[1, 2]", vec![1, 2])],
            vec![("[2-3]", vec![2, 3]), ("[9]", vec![9])],
        ]
    );
    for s in &o.sentences {
        assert!(
            s.markers
                .iter()
                .all(|m| m.start >= s.start && m.end <= s.end)
        );
    }
}
