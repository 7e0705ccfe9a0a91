//! Second stages: verifiers that run a first verifier, then reconsider what it judged with a
//! model ([`SemanticVerifier`](crate::SemanticVerifier),
//! [`TrainedVerifier`](crate::TrainedVerifier), [`LlmVerifier`](crate::LlmVerifier)), and the
//! helpers they share.
//!
//! A second stage's [`Verifier`] methods are [`second_stage_verifier!`]: the first verifier
//! runs, the work stops if `stop()` turned true meanwhile, then the stage's `refine` reconsiders
//! the first verifier's judgements ([`verify_then_refine`]).

use std::ops::Range;

use groundcite_text as text;

use crate::{Claim, Evidence, Judgement, Reason, Verifier};

/// What a verifier judges: the question, the passages that were sent (passage k is
/// `passages[k-1]`), the claims of one answer and, when the caller parsed them, their marker
/// spans (the arguments of [`Verifier::verify_until`] but `stop`).
#[derive(Clone, Copy)]
pub(crate) struct Inputs<'a> {
    pub(crate) question: Option<&'a str>,
    pub(crate) passages: &'a [&'a str],
    pub(crate) claims: &'a [Claim<'a>],
    pub(crate) markers: Option<&'a [Vec<Range<usize>>]>,
}

impl Inputs<'_> {
    /// The text of claim `i` without its citation markers (and a leading list bullet).
    pub(crate) fn claim_without_markers(&self, i: usize) -> String {
        without_markers(self.claims[i].text, self.markers.and_then(|m| m.get(i)))
    }
}

/// The judgements of `first`, then `refine`d; `None` when `stop()` turns true before they are
/// refined.
pub(crate) fn verify_then_refine(
    first: &impl Verifier,
    inputs: Inputs<'_>,
    stop: &dyn Fn() -> bool,
    refine: impl FnOnce(Vec<Judgement>) -> Vec<Judgement>,
) -> Option<Vec<Judgement>> {
    let Inputs {
        question,
        passages,
        claims,
        markers,
    } = inputs;
    let judgements = first.verify_until(question, passages, claims, markers, stop)?;
    if stop() {
        return None;
    }
    Some(refine(judgements))
}

/// The [`Verifier`] methods of a second stage, written inside its `impl Verifier` block:
/// `kind` is `VerifierKind::$kind`, and `verify_until` runs the verifier in field `$first`,
/// then the stage's own `fn refine(&self, inputs: Inputs<'_>, judgements: Vec<Judgement>) ->
/// Vec<Judgement>` ([`verify_then_refine`]).
macro_rules! second_stage_verifier {
    (first: $first:ident, kind: $kind:ident) => {
        fn kind(&self) -> $crate::VerifierKind {
            $crate::VerifierKind::$kind
        }

        fn verify_until(
            &self,
            question: Option<&str>,
            passages: &[&str],
            claims: &[$crate::Claim<'_>],
            markers: Option<&[Vec<std::ops::Range<usize>>]>,
            stop: &dyn Fn() -> bool,
        ) -> Option<Vec<$crate::Judgement>> {
            let inputs = $crate::stage::Inputs {
                question,
                passages,
                claims,
                markers,
            };
            $crate::stage::verify_then_refine(&self.$first, inputs, stop, |judgements| {
                self.refine(inputs, judgements)
            })
        }
    };
}
pub(crate) use second_stage_verifier;

/// `outputs` when a model returned one per input; else why not ("`who` returned 3 `output`
/// for 4 `input`").
pub(crate) fn one_per_input<T>(
    outputs: Vec<T>,
    inputs: usize,
    who: &str,
    output: &str,
    input: &str,
) -> Result<Vec<T>, String> {
    if outputs.len() == inputs {
        Ok(outputs)
    } else {
        Err(format!(
            "{who} returned {} {output} for {inputs} {input}",
            outputs.len()
        ))
    }
}

/// The model failed: the first verifier's verdicts of `candidates` stand, and say so ("`what`
/// unavailable: `why`").
pub(crate) fn unavailable(
    mut judgements: Vec<Judgement>,
    candidates: &[usize],
    what: &str,
    why: &str,
) -> Vec<Judgement> {
    for &i in candidates {
        judgements[i]
            .reasons
            .push(Reason::Unchecked(format!("{what} unavailable: {why}")));
    }
    judgements
}

/// The windows of a passage whose sentences are `spans`: each sentence and each pair of
/// adjacent sentences, in order (a sentence before the pair it starts).
pub(crate) fn sentences_and_pairs(spans: &[(u32, u32)]) -> impl Iterator<Item = Range<usize>> {
    spans.iter().enumerate().flat_map(|(n, &(start, end))| {
        let pair = spans
            .get(n + 1)
            .map(|&(_, next_end)| start as usize..next_end as usize);
        std::iter::once(start as usize..end as usize).chain(pair)
    })
}

/// The evidence of a model's verdict: `range` of passage `k` (1-based), without surrounding
/// whitespace.
pub(crate) fn evidence(passages: &[&str], k: usize, range: Range<usize>) -> Evidence {
    let t = trim(passages[k - 1], range);
    Evidence {
        passage: k,
        start: t.start,
        end: t.end,
    }
}

/// A model's score as reported in a reason: rounded to two decimals.
pub(crate) fn hundredths(x: f32) -> f32 {
    (x * 100.0).round() / 100.0
}

/// The claim without its citation markers (and a leading list bullet).
pub(crate) fn without_markers(claim: &str, markers: Option<&Vec<Range<usize>>>) -> String {
    let mut skip: Vec<Range<usize>> = match markers {
        Some(m) => m.clone(),
        None => text::Markers::parse(claim)
            .markers
            .iter()
            .map(|m| m.start..m.end)
            .collect(),
    };
    skip.extend(text::list_bullet(claim));
    skip.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(claim.len());
    let mut at = 0;
    for r in skip {
        if r.start >= at && r.end <= claim.len() {
            out.push_str(&claim[at..r.start]);
            at = r.end;
        }
    }
    out.push_str(&claim[at..]);
    out.trim().to_string()
}

/// `range` of `text` without surrounding whitespace.
fn trim(text: &str, range: Range<usize>) -> Range<usize> {
    let s = &text[range.clone()];
    let start = range.start + (s.len() - s.trim_start().len());
    let end = range.end - (s.len() - s.trim_end().len());
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_sentences_then_the_pair_each_starts() {
        let windows: Vec<Range<usize>> =
            sentences_and_pairs(&[(0, 5), (6, 10), (11, 20)]).collect();
        assert_eq!(windows, [0..5, 0..10, 6..10, 6..20, 11..20]);
        assert_eq!(sentences_and_pairs(&[]).count(), 0);
    }

    #[test]
    fn a_count_mismatch_says_what_came_back() {
        assert_eq!(
            one_per_input(vec![1, 2], 3, "the model", "vectors", "texts"),
            Err("the model returned 2 vectors for 3 texts".to_string())
        );
        assert_eq!(one_per_input(vec![1], 1, "", "", ""), Ok(vec![1]));
    }

    #[test]
    fn a_claim_is_read_without_its_markers_and_bullet() {
        assert_eq!(
            without_markers("- Settles in 30 days [2][3].", None),
            "Settles in 30 days ."
        );
    }
}
