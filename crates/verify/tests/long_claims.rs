//! A claim costs its length, not its square: one sentence of hundreds of thousands of words
//! (an answer is admitted up to 256 KiB) is read in one pass. Each input here took minutes when
//! every word was compared with every term or quantity before it.

use groundcite_verify::{Claim, LexicalVerifier, Verdict, Verifier};

fn judge(question: Option<&str>, claim: &str) -> Verdict {
    let passages = ["Refunds take 30 days. The office opens at nine."];
    let claims = [Claim {
        text: claim,
        cited: &[1],
    }];
    LexicalVerifier::default().verify(question, &passages, &claims)[0].verdict
}

/// `[1](` is a link's start, not a marker: every `1` is a quantity of the claim.
#[test]
fn a_claim_of_many_quantities_is_read_in_one_pass() {
    let claim = "[1](".repeat(400_000);
    assert_eq!(judge(None, &claim), Verdict::Unsupported);
}

#[test]
fn a_claim_of_many_distinct_words_is_read_in_one_pass() {
    let words: String = (0..200_000u32).map(|k| format!("w{k:x}q ")).collect();
    let question: String = (0..100_000u32).map(|k| format!("v{k:x}q ")).collect();
    assert_eq!(judge(Some(&question), &words), Verdict::Unsupported);
}
