//! Plain words for a sentence's verdict (its `message`): what a reader needs to know first
//! ("The source says 13 days, not 15 days."), made from the typed reasons
//! the machine strings (`number_mismatch: "15 days" vs "13 days"`) are
//! made from. The CLI and the web page both show this note and keep the
//! machine reasons for `--json`, `--reasons` and the full report.

use groundcite_verify::Reason;

use crate::check::SentenceVerdict;

/// What [`note`] knows about one sentence.
pub struct NoteInput<'a> {
    /// The sentence's verdict.
    pub verdict: SentenceVerdict,
    /// The support checker's reasons (empty when it did not run).
    pub reasons: &'a [Reason],
    /// Cited ids that were never sent.
    pub bad_ids: &'a [u64],
    /// Some citation names a passage that was sent.
    pub cites_sent: bool,
    /// Whether the support checker judged the sentence.
    pub judged: bool,
    /// The passage the evidence quote comes from, if any.
    pub evidence_passage: Option<usize>,
    /// Passages that would support it.
    pub suggested: &'a [usize],
}

/// "passage 2", "passages 2 and 3": written out, so that a message shown
/// beside an answer never reads as one of its citation markers.
fn ids(list: impl IntoIterator<Item = String>) -> String {
    let list: Vec<String> = list.into_iter().collect();
    let noun = if list.len() == 1 {
        "passage"
    } else {
        "passages"
    };
    format!("{noun} {}", and_list(&list))
}

fn capitalized(text: String) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The note of one sentence; empty for a sentence that states no fact.
pub fn note(input: &NoteInput<'_>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !input.bad_ids.is_empty() {
        let plural = input.bad_ids.len() > 1;
        parts.push(format!(
            "It cites {}, which {} never sent: {} cannot be checked.",
            ids(input.bad_ids.iter().map(u64::to_string)),
            if plural { "were" } else { "was" },
            if plural { "they" } else { "it" },
        ));
    }
    let suggested = || ids(input.suggested.iter().map(usize::to_string));
    match input.verdict {
        SentenceVerdict::NotFactual => return String::new(),
        SentenceVerdict::Supported if !input.judged => {
            parts.push("Its citation resolves; support was not checked.".into());
        }
        SentenceVerdict::Supported => match input.evidence_passage {
            Some(k) => parts.push(format!("Stated in passage {k}.")),
            None => parts.push("Stated in the cited passage.".into()),
        },
        SentenceVerdict::Contradicted => {
            let said = input.reasons.iter().find_map(|r| match r {
                Reason::NumberMismatch { claim, evidence }
                | Reason::DateMismatch { claim, evidence }
                | Reason::BoundMismatch { claim, evidence }
                | Reason::EntityMismatch { claim, evidence } => {
                    Some(format!("The source says {evidence}, not {claim}."))
                }
                Reason::Antonym { claim, evidence } => {
                    Some(format!("The source says this is {evidence}, not {claim}."))
                }
                Reason::ListMixup { claim, evidence } => Some(format!(
                    "The source says this of \u{201c}{evidence}\u{201d}, not of \u{201c}{claim}\u{201d}."
                )),
                Reason::Negation => Some("The source says the opposite.".into()),
                Reason::Restriction { cue } => {
                    Some(format!("The source does not say \u{201c}{cue}\u{201d}."))
                }
                Reason::Judge { explanation, .. } => Some(judged(
                    "The judge model found that the source says otherwise",
                    explanation,
                )),
                _ => None,
            });
            parts.push(said.unwrap_or_else(|| "The source says otherwise.".into()));
        }
        SentenceVerdict::Unsupported => {
            let missing = input.reasons.iter().find_map(|r| match r {
                Reason::Missing(items) if !items.is_empty() => Some(items),
                _ => None,
            });
            let judge = input.reasons.iter().find_map(|r| match r {
                Reason::Judge { explanation, .. } => Some(explanation),
                _ => None,
            });
            if let (true, Some(explanation)) = (input.cites_sent, judge) {
                parts.push(judged(
                    "The judge model found that the cited passage does not say this",
                    explanation,
                ));
            } else if !input.cites_sent {
                // The bad-id sentence above says it all: no passage sent
                // is cited, so none can be said to leave anything out.
            } else if let Some(items) = missing {
                let shown: Vec<String> = items
                    .iter()
                    .take(3)
                    .map(|w| format!("\u{201c}{w}\u{201d}"))
                    .collect();
                let more = items.len().saturating_sub(3);
                parts.push(format!(
                    "The cited passage does not mention {}{}.",
                    and_list(&shown),
                    if more > 0 {
                        format!(" (and {more} more)")
                    } else {
                        String::new()
                    }
                ));
            } else if input.bad_ids.is_empty() || input.judged {
                parts.push("The cited passage does not say this.".into());
            }
            if !input.suggested.is_empty() {
                parts.push(format!("{} would support it.", capitalized(suggested())));
            }
        }
        SentenceVerdict::Uncited => {
            parts.push("No citation: nothing shows where this comes from.".into());
            if !input.suggested.is_empty() {
                parts.push(format!("{} would support it.", capitalized(suggested())));
            }
        }
    }
    if let Some(why) = input.reasons.iter().find_map(|r| match r {
        Reason::JudgeUnavailable(why) => Some(why),
        _ => None,
    }) {
        parts.push(format!(
            "The judge model gave no verdict ({why}); this is the rules' verdict."
        ));
    }
    parts.join(" ")
}

/// `lead`, then the judge's own explanation when it gave one.
fn judged(lead: &str, explanation: &str) -> String {
    let explanation = explanation.trim().trim_end_matches('.');
    if explanation.is_empty() {
        format!("{lead}.")
    } else {
        format!("{lead}: {explanation}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(verdict: SentenceVerdict, reasons: &[Reason]) -> NoteInput<'_> {
        NoteInput {
            verdict,
            reasons,
            bad_ids: &[],
            cites_sent: true,
            judged: true,
            evidence_passage: Some(1),
            suggested: &[],
        }
    }

    #[test]
    fn the_correction_comes_first_in_plain_words() {
        let r = [Reason::NumberMismatch {
            claim: "15 days".into(),
            evidence: "13 days".into(),
        }];
        assert_eq!(
            note(&input(SentenceVerdict::Contradicted, &r)),
            "The source says 13 days, not 15 days."
        );
        let r = [Reason::Antonym {
            claim: "paid out".into(),
            evidence: "forfeited".into(),
        }];
        assert_eq!(
            note(&input(SentenceVerdict::Contradicted, &r)),
            "The source says this is forfeited, not paid out."
        );
        let r = [Reason::ListMixup {
            claim: "Synthetics".into(),
            evidence: "Logs".into(),
        }];
        assert_eq!(
            note(&input(SentenceVerdict::Contradicted, &r)),
            "The source says this of \u{201c}Logs\u{201d}, not of \u{201c}Synthetics\u{201d}."
        );
        let r = [Reason::Missing(vec![
            "office".into(),
            "Paris".into(),
            "a".into(),
            "b".into(),
        ])];
        assert_eq!(
            note(&input(SentenceVerdict::Unsupported, &r)),
            "The cited passage does not mention \u{201c}office\u{201d}, \u{201c}Paris\u{201d} and \u{201c}a\u{201d} (and 1 more)."
        );
        let bad = NoteInput {
            bad_ids: &[3],
            cites_sent: false,
            judged: false,
            ..input(SentenceVerdict::Unsupported, &[])
        };
        assert_eq!(
            note(&bad),
            "It cites passage 3, which was never sent: it cannot be checked."
        );
        let unchecked = NoteInput {
            judged: false,
            ..input(SentenceVerdict::Supported, &[])
        };
        assert!(note(&unchecked).contains("not checked"));
        assert_eq!(note(&input(SentenceVerdict::NotFactual, &[])), "");
    }

    #[test]
    fn the_judge_speaks_in_its_own_name() {
        let judge = |verdict, explanation: &str| Reason::Judge {
            verdict,
            explanation: explanation.into(),
        };
        use groundcite_verify::Verdict;
        let r = [judge(
            Verdict::Contradicted,
            "It is forfeited, not paid out.",
        )];
        assert_eq!(
            note(&input(SentenceVerdict::Contradicted, &r)),
            "The judge model found that the source says otherwise: It is forfeited, not paid out."
        );
        let r = [
            judge(Verdict::Unsupported, ""),
            Reason::Missing(vec!["notarised".into()]),
        ];
        assert_eq!(
            note(&input(SentenceVerdict::Unsupported, &r)),
            "The judge model found that the cited passage does not say this."
        );
        let r = [Reason::JudgeUnavailable("deadline of 60 s passed".into())];
        assert_eq!(
            note(&input(SentenceVerdict::Supported, &r)),
            "Stated in passage 1. The judge model gave no verdict (deadline of 60 s passed); this is the rules' verdict."
        );
    }
}
