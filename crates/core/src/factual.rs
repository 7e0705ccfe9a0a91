//! Which sentences make a factual claim.
//!
//! The seed's rule ("contains a digit") is only a start: "Refunds go to
//! your wallet." is a claim too. A sentence is factual unless it is a
//! question, a heading, the refusal, empty of words, or a connective that
//! makes no claim ("Here is what I found:", "I hope this helps!"). Every
//! decision carries its reason.

use crate::refusal;
use crate::sentence::SentenceKind;

/// Why a sentence is or is not factual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactualReason {
    /// Factual: it carries a citation marker, so it presents itself as
    /// taken from a passage.
    Cited,
    /// Factual: it states a number.
    Quantity,
    /// Factual: a declarative sentence.
    Statement,
    /// Not factual: a question.
    Question,
    /// Not factual: a heading.
    Heading,
    /// Not factual: the refusal sentence or sentinel.
    Refusal,
    /// Not factual: a connective or pleasantry with no claim.
    Connective,
    /// Not factual: no words at all (punctuation, markers only).
    Empty,
}

impl FactualReason {
    pub fn is_factual(self) -> bool {
        matches!(
            self,
            FactualReason::Cited | FactualReason::Quantity | FactualReason::Statement
        )
    }
}

/// Openings of sentences that introduce or close an answer without making
/// a claim. Matched case-insensitively on the sentence with markers removed.
const CONNECTIVE_PREFIXES: &[&str] = &[
    "here is",
    "here are",
    "here's",
    "the following",
    "in summary",
    "to summarize",
    "in short",
    "according to the passages",
    "according to the documents",
    "based on the passages",
    "based on the documents",
    "based on the provided",
    "sure",
    "certainly",
    "of course",
    "great question",
    "good question",
    "to answer your question",
    "in other words",
    "for example",
    "for instance",
    "the passages say",
    "the documents say",
];

/// Pleasantries that never claim anything, whatever their length.
const PLEASANTRIES: &[&str] = &[
    "i hope this helps",
    "hope this helps",
    "let me know",
    "please let me know",
    "feel free to",
    "if you have any other",
    "if you have other",
    "if you have further",
    "thanks",
    "thank you",
];

/// Classifies one sentence. `has_marker`: the sentence carries a
/// (well-formed) citation marker; `text`: the sentence as written.
pub fn classify(text: &str, kind: SentenceKind, has_marker: bool) -> FactualReason {
    if kind == SentenceKind::Heading {
        return FactualReason::Heading;
    }
    if refusal::is_refusal_sentence(text) {
        return FactualReason::Refusal;
    }
    let words = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
        .count();
    let has_digit = text.bytes().any(|b| b.is_ascii_digit()) && strip_markers_has_digit(text);
    if words == 0 && !has_digit {
        return FactualReason::Empty;
    }
    let body = text.trim_end_matches(|c: char| {
        c.is_whitespace() || c == '[' || c == ']' || c == ',' || c.is_ascii_digit() || c == '-'
    });
    let body = body.trim_end();
    if body.ends_with('?') {
        return FactualReason::Question;
    }
    if has_marker {
        return FactualReason::Cited;
    }
    if is_connective(text, words) {
        return FactualReason::Connective;
    }
    if has_digit {
        return FactualReason::Quantity;
    }
    FactualReason::Statement
}

fn strip_markers_has_digit(text: &str) -> bool {
    let markers = crate::marker::Markers::parse(text);
    let mut pos = 0;
    for m in &markers.markers {
        if text[pos..m.start].bytes().any(|b| b.is_ascii_digit()) {
            return true;
        }
        pos = m.end;
    }
    text[pos..].bytes().any(|b| b.is_ascii_digit())
}

fn is_connective(text: &str, words: usize) -> bool {
    let t = text.trim_start_matches(|c: char| !c.is_alphanumeric());
    let starts = |p: &str| {
        t.len() >= p.len()
            && t.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
            && t[p.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    };
    if PLEASANTRIES.iter().any(|p| starts(p)) {
        return true;
    }
    let trimmed = text.trim_end();
    // "Here is what I found:" — a short lead-in to a list.
    if trimmed.ends_with(':') && (words <= 8 || CONNECTIVE_PREFIXES.iter().any(|p| starts(p))) {
        return true;
    }
    if CONNECTIVE_PREFIXES.iter().any(|p| starts(p)) {
        // "Sure, reimbursements take 30 days." still claims something:
        // only short pleasantries and lead-ins count as connectives.
        return words <= 6 || trimmed.ends_with(':') || trimmed.ends_with('!');
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use FactualReason::*;

    fn c(text: &str) -> FactualReason {
        classify(
            text,
            SentenceKind::Prose,
            crate::marker::Markers::parse(text).len() > 0,
        )
    }

    #[test]
    fn claims_without_digits_are_factual() {
        assert_eq!(c("Refunds go to your wallet."), Statement);
        assert_eq!(c("Reimbursements settle in 14 days."), Quantity);
        assert_eq!(c("Refunds go to your wallet [2]."), Cited);
    }

    #[test]
    fn non_claims() {
        assert_eq!(c("Here is what I found:"), Connective);
        assert_eq!(c("I hope this helps!"), Connective);
        assert_eq!(c("Let me know if you have other questions."), Connective);
        assert_eq!(c("How long does it take?"), Question);
        assert_eq!(c("Not covered by the provided documents."), Refusal);
        assert_eq!(c("[2]"), Empty);
        assert_eq!(
            classify("Reimbursement", SentenceKind::Heading, false),
            Heading
        );
        assert_eq!(
            c("Sure, reimbursements settle within 30 days of approval."),
            Quantity
        );
    }
}
