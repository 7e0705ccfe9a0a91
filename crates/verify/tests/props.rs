//! No panic on arbitrary text; evidence spans on char boundaries, within the passage.

use groundcite_verify::{Claim, LexicalVerifier, Verifier};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9 .,!?$%\\-–’'\\[\\]\n|#*]{0,200}",
        proptest::collection::vec(
            prop_oneof![
                Just("30 days".to_owned()),
                Just("not".to_owned()),
                Just("only".to_owned()),
                Just("$1,200.50".to_owned()),
                Just("3–5".to_owned()),
                Just("Friday".to_owned()),
                Just("é".to_owned()),
                Just("[2]".to_owned()),
                Just(". ".to_owned()),
                Just("\n\n".to_owned()),
                Just("non-billable".to_owned()),
                Just("at least".to_owned()),
                Just("a year".to_owned()),
                "[a-zA-Zé]{1,12}".prop_map(|s| s),
            ],
            0..40,
        )
        .prop_map(|v| v.join(" ")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn never_panics_and_spans_are_valid(
        claim in text(),
        question in proptest::option::of(text()),
        passages in proptest::collection::vec(text(), 0..4),
        cite_mask in 0u8..16,
    ) {
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        let cited: Vec<usize> = (1..=refs.len()).filter(|k| cite_mask & (1 << (k - 1)) != 0).collect();
        let claims = [Claim { text: &claim, cited: &cited }, Claim { text: &claim, cited: &[] }];
        let out = LexicalVerifier::default().verify(question.as_deref(), &refs, &claims);
        prop_assert_eq!(out.len(), 2);
        for j in out {
            if let Some(e) = j.evidence {
                prop_assert!(e.passage >= 1 && e.passage <= refs.len());
                let p = refs[e.passage - 1];
                prop_assert!(e.start <= e.end && e.end <= p.len());
                prop_assert!(p.is_char_boundary(e.start) && p.is_char_boundary(e.end));
                prop_assert_eq!(p[e.start..e.end].trim(), &p[e.start..e.end]);
            }
            for k in j.suggested.iter().chain(&j.idle_citations) {
                prop_assert!(*k >= 1 && *k <= refs.len());
            }
        }
    }
}

/// Passages are read in 64-byte blocks: every multi-byte character at every offset around
/// the block boundaries, inside and between words, must tokenize without a panic.
#[test]
fn multibyte_characters_across_block_boundaries() {
    let chars = ["é", "’", "€", "😀", "\u{a0}", "–", "…"];
    let verifier = LexicalVerifier::default();
    for c in chars {
        for at in 0..200 {
            for filler in ["a", " ", "1", "-", "'"] {
                let mut passage = filler.repeat(at);
                passage.push_str(c);
                passage.push_str("word 30 days");
                passage.push_str(&filler.repeat(70));
                let claims = [Claim {
                    text: "The word is 30 days [1].",
                    cited: &[1],
                }];
                let out = verifier.verify(None, &[&passage], &claims);
                assert_eq!(out.len(), 1, "{c:?} at {at} after {filler:?}");
            }
        }
    }
}
