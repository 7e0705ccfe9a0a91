//! HaluEval QA (2,000 rows): knowledge is passage [1], the answer cites it. Right answers must be
//! `Supported`, hallucinated ones flagged; balanced accuracy at least 93%.

use groundcite_verify::{Claim, LexicalVerifier, Verdict, Verifier};

#[derive(serde::Deserialize)]
struct Row {
    knowledge: String,
    question: String,
    right_answer: String,
    hallucinated_answer: String,
}

#[test]
fn halueval_balanced_accuracy() {
    let Some(shared) = groundcite_testdata::shared("the HaluEval balanced accuracy") else {
        return;
    };
    let data = std::fs::read_to_string(shared.join("datasets/halueval/qa-dev.jsonl"))
        .expect("shared/datasets/halueval/qa-dev.jsonl");
    let verifier = LexicalVerifier::default();
    let (mut n, mut right_ok, mut hall_ok) = (0usize, 0usize, 0usize);
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let row: Row = serde_json::from_str(line).unwrap();
        let right = format!("{} [1]", row.right_answer.trim());
        let hall = format!("{} [1]", row.hallucinated_answer.trim());
        let claims = [
            Claim {
                text: &right,
                cited: &[1],
            },
            Claim {
                text: &hall,
                cited: &[1],
            },
        ];
        let j = verifier.verify(Some(&row.question), &[row.knowledge.as_str()], &claims);
        n += 1;
        right_ok += usize::from(j[0].verdict == Verdict::Supported);
        hall_ok += usize::from(j[1].verdict != Verdict::Supported);
    }
    let right = right_ok as f64 / n as f64;
    let hall = hall_ok as f64 / n as f64;
    let balanced = (right + hall) / 2.0;
    println!(
        "n={n} right->Supported {right:.4} hallucinated->flagged {hall:.4} balanced {balanced:.4}"
    );
    assert!(n >= 2000);
    assert!(balanced >= 0.93, "balanced accuracy {balanced:.4}");
}
