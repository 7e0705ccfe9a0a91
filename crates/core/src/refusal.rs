//! The two refusal forms of the contract, recognised on input whichever one
//! the prompt asked for.
//!
//! - the exact sentence [`REFUSAL_SENTENCE`] (surrounding white space and
//!   optional surrounding quotes allowed), and
//! - the sentinel [`SENTINEL_PREFIX`] `<what would be needed>`, at the start
//!   of the answer.

/// The default refusal form: the exact sentence the citation contract
/// asks for.
pub const REFUSAL_SENTENCE: &str = "Not covered by the provided documents.";
/// The sentinel form: `NOT_IN_SOURCES: <what would be needed>`.
pub const SENTINEL_PREFIX: &str = "NOT_IN_SOURCES:";

/// Which refusal form the prompt asks the model for.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalForm {
    /// Reply exactly `Not covered by the provided documents.`
    #[default]
    Sentence,
    /// Reply `NOT_IN_SOURCES: <what would be needed to answer>`.
    Sentinel,
}

/// A recognised refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// Which of the two forms the answer used.
    pub form: RefusalForm,
    /// For the sentinel: the byte span of the "needed" text (trimmed), if
    /// any was given.
    pub needed: Option<(usize, usize)>,
}

impl Refusal {
    /// The sentinel's "needed" text within `answer` (the answer it was detected in); `None`
    /// for the refusal sentence or a sentinel with nothing after the prefix.
    pub fn needed<'a>(&self, answer: &'a str) -> Option<&'a str> {
        self.needed.map(|(s, e)| &answer[s..e])
    }
}

/// Recognises a whole answer that is a refusal.
///
/// Inlined up to the fast exit, which decides most answers.
#[inline]
pub fn detect(answer: &str) -> Option<Refusal> {
    // Fast exit: both forms start with `N`, perhaps after a quote.
    let first = answer.bytes().find(|b| !b.is_ascii_whitespace())?;
    if !matches!(first, b'N' | b'"' | 0xE2) {
        return None;
    }
    detect_form(answer)
}

/// [`detect`] past the fast exit.
fn detect_form(answer: &str) -> Option<Refusal> {
    let trimmed = answer.trim();
    let unquoted = trimmed
        .strip_prefix(['"', '“'])
        .and_then(|t| t.strip_suffix(['"', '”']))
        .unwrap_or(trimmed);
    if unquoted == REFUSAL_SENTENCE {
        return Some(Refusal {
            form: RefusalForm::Sentence,
            needed: None,
        });
    }
    let lead = answer.len() - answer.trim_start().len();
    let rest = answer[lead..].strip_prefix(SENTINEL_PREFIX)?;
    let rest_start = lead + SENTINEL_PREFIX.len();
    let inner_lead = rest.len() - rest.trim_start().len();
    let s = rest_start + inner_lead;
    let e = rest_start + rest.trim_end().len();
    Some(Refusal {
        form: RefusalForm::Sentinel,
        needed: (e > s).then_some((s, e)),
    })
}

/// Is this one sentence the refusal sentence (inside a longer answer)?
pub fn is_refusal_sentence(sentence: &str) -> bool {
    if sentence.as_bytes().first() != Some(&b'N') {
        return false;
    }
    let t = sentence.trim_end();
    t == REFUSAL_SENTENCE || t.starts_with(SENTINEL_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sentence_with_whitespace() {
        assert_eq!(
            detect("  Not covered by the provided documents.\n")
                .unwrap()
                .form,
            RefusalForm::Sentence
        );
        assert!(detect("Not covered by the provided documents").is_none());
        assert!(detect("Not covered by the provided documents. [2]").is_none());
    }

    #[test]
    fn sentinel_with_needed_text() {
        let a = "NOT_IN_SOURCES: the reimbursement schedule for contractors";
        let r = detect(a).unwrap();
        assert_eq!(r.form, RefusalForm::Sentinel);
        assert_eq!(
            r.needed(a),
            Some("the reimbursement schedule for contractors")
        );
        assert_eq!(detect("NOT_IN_SOURCES:").unwrap().needed, None);
    }
}
