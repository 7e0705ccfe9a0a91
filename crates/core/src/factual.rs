//! Which sentences make a factual claim.
//!
//! A rule such as "contains a digit" is only a start: "Refunds go to
//! your wallet." is a claim too. A sentence is factual unless it is a
//! question, a heading, the refusal, empty of words, or a connective that
//! makes no claim ("Here is what I found:", "I hope this helps!"). Every
//! decision carries its reason.

use crate::marker::Marker;
use crate::refusal;
use crate::sentence::SentenceKind;

/// Why a sentence is or is not factual.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The reason makes the sentence factual: `Cited`, `Quantity` or `Statement`.
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

/// Classifies one sentence. `text`: the sentence as written; `markers`:
/// its citation markers, in order, with spans relative to the text the
/// sentence starts in at byte `base`.
///
/// Inlined into the report's per-sentence loop: most sentences are decided
/// in a few tests, fewer than a call costs.
#[inline]
pub fn classify(
    text: &str,
    kind: SentenceKind,
    question: bool,
    markers: &[Marker],
    base: usize,
) -> FactualReason {
    if kind == SentenceKind::Heading {
        return FactualReason::Heading;
    }
    if refusal::is_refusal_sentence(text) {
        return FactualReason::Refusal;
    }
    if !markers.is_empty() {
        // A cited sentence: only emptiness and questions can make it
        // non-factual, and both are decided without reading it all.
        if !has_content_outside(text, markers, base) {
            return FactualReason::Empty;
        }
        if question {
            return FactualReason::Question;
        }
        return FactualReason::Cited;
    }
    let (words, has_digit) = words_and_digits(text);
    if words == 0 && !has_digit {
        return FactualReason::Empty;
    }
    if question {
        return FactualReason::Question;
    }
    if is_connective(text, words) {
        return FactualReason::Connective;
    }
    if has_digit {
        return FactualReason::Quantity;
    }
    FactualReason::Statement
}

/// Is there a letter or digit outside the markers?
fn has_content_outside(text: &str, markers: &[Marker], base: usize) -> bool {
    let b = text.as_bytes();
    let mut pos = 0;
    let spans = markers
        .iter()
        .map(|m| (m.start - base, m.end - base))
        .chain(std::iter::once((b.len(), b.len())));
    for (start, end) in spans {
        if b[pos..start.max(pos)]
            .iter()
            .any(|&c| c.is_ascii_alphanumeric() || c >= 0x80)
        {
            return true;
        }
        pos = end.max(pos);
    }
    false
}

/// Word bytes: ASCII letters and anything outside ASCII count as letters.
const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const WORD_BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = if b.is_ascii_digit() {
            DIGIT
        } else if b.is_ascii_alphabetic() || b >= 0x80 {
            LETTER
        } else {
            0
        };
        c += 1;
    }
    table
};

/// Counts words with a letter (up to 9: only "none" and "short" matter)
/// and whether a digit appears, in one pass without allocating. Called for
/// sentences without markers only.
fn words_and_digits(text: &str) -> (usize, bool) {
    let mut words = 0usize;
    // What the current word holds, and what all words so far held.
    let (mut word, mut seen) = (0u8, 0u8);
    for &c in text.as_bytes() {
        let class = WORD_BYTES[usize::from(c)];
        if class != 0 {
            word |= class;
        } else if word != 0 {
            words += usize::from(word & LETTER != 0);
            seen |= word;
            word = 0;
            if words > 8 && seen & DIGIT != 0 {
                break;
            }
        }
    }
    words += usize::from(word & LETTER != 0);
    seen |= word;
    (words, seen & DIGIT != 0)
}

/// The first bytes of [`PLEASANTRIES`] and [`CONNECTIVE_PREFIXES`]: most
/// sentences start with none of them and skip both lists.
const PREFIX_FIRST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let lists = [PLEASANTRIES, CONNECTIVE_PREFIXES];
    let mut l = 0;
    while l < lists.len() {
        let mut k = 0;
        while k < lists[l].len() {
            table[lists[l][k].as_bytes()[0] as usize] = true;
            k += 1;
        }
        l += 1;
    }
    table
};

fn is_connective(text: &str, words: usize) -> bool {
    let t = text.trim_start_matches(|c: char| !c.is_alphanumeric());
    let first = t.as_bytes().first().map(u8::to_ascii_lowercase);
    let starts_with_any = |list: &[&str]| match first {
        Some(f) if PREFIX_FIRST_BYTES[usize::from(f)] => list
            .iter()
            .any(|p| p.as_bytes()[0] == f && starts_with_phrase(t, p)),
        _ => false,
    };
    if starts_with_any(PLEASANTRIES) {
        return true;
    }
    let lead_in = starts_with_any(CONNECTIVE_PREFIXES);
    let trimmed = text.trim_end();
    // "Here is what I found:" — a short lead-in to a list.
    if trimmed.ends_with(':') && (words <= 8 || lead_in) {
        return true;
    }
    if lead_in {
        // "Sure, reimbursements take 30 days." still claims something:
        // only short pleasantries and lead-ins count as connectives.
        return words <= 6 || trimmed.ends_with(':') || trimmed.ends_with('!');
    }
    false
}

/// `t` starts with the phrase `p` (lower-case ASCII; any case in `t`) as
/// whole words: what follows is not a letter or digit.
fn starts_with_phrase(t: &str, p: &str) -> bool {
    t.len() >= p.len()
        && t.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        && t[p.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use FactualReason::*;

    fn c(text: &str) -> FactualReason {
        let m = crate::marker::Markers::parse(text);
        let question = crate::sentence::segment(text)[0].question;
        classify(text, SentenceKind::Prose, question, &m.markers, 0)
    }

    #[test]
    fn claims_without_digits_are_factual() {
        assert_eq!(c("Refunds go to your wallet."), Statement);
        assert_eq!(c("Reimbursements settle in 14 days."), Quantity);
        assert_eq!(c("Refunds go to your wallet [2]."), Cited);
    }

    #[test]
    fn counts_words_with_letters_and_digits() {
        assert_eq!(words_and_digits(""), (0, false));
        assert_eq!(words_and_digits("-- 42 --"), (0, true));
        assert_eq!(words_and_digits("Refunds take 14 days."), (3, true));
        assert_eq!(words_and_digits("über café x2"), (3, true));
        assert_eq!(words_and_digits("a b c d e f g h i j k"), (11, false));
        // Past eight words with a digit seen, counting stops.
        assert_eq!(words_and_digits("1 a b c d e f g h i j k"), (9, true));
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
            classify("Reimbursement", SentenceKind::Heading, false, &[], 0),
            Heading
        );
        assert_eq!(
            c("Sure, reimbursements settle within 30 days of approval."),
            Quantity
        );
    }
}
