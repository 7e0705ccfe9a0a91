//! The finalize policies: what is served when a check finds problems.
//!
//! Bad ids are a hard failure ([`finalize`]): the caller regenerates once
//! with a corrective message, and if the second answer still cites ids
//! never sent, refuses, or (by config) strips the unresolvable markers or
//! drops the sentences carrying them. An unverifiable marker is never
//! served as if it were checked.
//!
//! Contradicted and unsupported sentences ([`finalize_support`], after the
//! support check) are served flagged, dropped, or make the whole answer a
//! refusal, by [`UnsupportedPolicy`].
//!
//! Low citation coverage is, by option, a second chance like bad ids
//! ([`finalize_coverage`]): regenerate once naming the uncited factual
//! sentences, then serve flagged (not grounded) or refuse, by
//! [`LowCoveragePolicy`].
//!
//! A reply the model stopped at its token limit ([`is_cut_off`]) loses its
//! unfinished last sentence ([`drop_unfinished_tail`]) before any check.

use serde::{Deserialize, Serialize};

use crate::check::CheckOutput;
use crate::prompt;
use crate::validate::Report;

/// What to do with an answer whose markers still do not resolve after the
/// regeneration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadIdPolicy {
    /// Refuse the answer (default).
    #[default]
    Refuse,
    /// Remove the unresolvable ids from the markers (and empty markers).
    Strip,
    /// Drop every sentence that carries an unresolvable id.
    Drop,
}

/// What is served when a sentence is contradicted or unsupported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnsupportedPolicy {
    /// Serve the answer with the sentence marked (default).
    #[default]
    Flag,
    /// Remove the sentence from the served text.
    Drop,
    /// Refuse the whole answer.
    Refuse,
}

/// What is served when citation coverage is still under
/// `grounded_threshold` after the regeneration
/// (`regenerate_on_low_coverage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LowCoveragePolicy {
    /// Serve the answer; it is reported not grounded (default).
    #[default]
    Flag,
    /// Refuse the whole answer.
    Refuse,
}

/// What the caller does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Serve this text (the answer, or the answer repaired per policy).
    Serve {
        /// The text to serve.
        text: String,
        /// The text differs from the answer (markers stripped or sentences dropped): check it
        /// again.
        repaired: bool,
    },
    /// Generate again with this corrective message appended.
    Regenerate {
        /// The message to append to the prompt, naming what to fix.
        corrective: String,
    },
    /// Refuse: the answer cannot be verified.
    Refuse,
}

/// Decides on an answer after its structural check. `attempt` counts from
/// 0; `regenerate_once` allows one more attempt after the first.
pub fn finalize(
    answer: &str,
    report: &Report,
    attempt: u32,
    regenerate_once: bool,
    policy: BadIdPolicy,
) -> Decision {
    if report.bad_ids.is_empty() && report.malformed == 0 {
        return Decision::Serve {
            text: answer.to_string(),
            repaired: false,
        };
    }
    if regenerate_once && attempt == 0 {
        return Decision::Regenerate {
            corrective: prompt::corrective_message(&report.bad_ids, report.n_passages),
        };
    }
    match policy {
        BadIdPolicy::Refuse => Decision::Refuse,
        BadIdPolicy::Strip => Decision::Serve {
            text: strip_bad_markers(answer, report),
            repaired: true,
        },
        BadIdPolicy::Drop => {
            let text = drop_bad_sentences(answer, report);
            if text.trim().is_empty() {
                Decision::Refuse
            } else {
                Decision::Serve {
                    text,
                    repaired: true,
                }
            }
        }
    }
}

/// Decides on an answer after its full check: with no contradicted or
/// unsupported sentence, or under [`UnsupportedPolicy::Flag`], serve it as
/// it is; under `Drop`, serve it without the flagged sentences (`repaired`:
/// check the new text again), or refuse when no factual sentence would be
/// left; under `Refuse`, refuse. Never [`Decision::Regenerate`].
pub fn finalize_support(answer: &str, output: &CheckOutput, policy: UnsupportedPolicy) -> Decision {
    let flagged = output.counts.contradicted + output.counts.unsupported;
    if flagged == 0 || policy == UnsupportedPolicy::Flag {
        return Decision::Serve {
            text: answer.to_string(),
            repaired: false,
        };
    }
    if policy == UnsupportedPolicy::Refuse {
        return Decision::Refuse;
    }
    let kept: Vec<&str> = output
        .sentences
        .iter()
        .filter(|s| !s.verdict.is_flagged())
        .map(|s| s.text.as_str())
        .collect();
    let text = kept.join(" ");
    let factual_left = output
        .sentences
        .iter()
        .any(|s| s.factual && !s.verdict.is_flagged());
    if text.trim().is_empty() || !factual_left {
        Decision::Refuse
    } else {
        Decision::Serve {
            text,
            repaired: true,
        }
    }
}

/// Decides on an answer whose markers all resolve, by its citation
/// coverage: at or over `threshold` (or with no uncited factual sentence),
/// serve it; under it, regenerate on the first attempt with a corrective
/// message quoting the uncited factual sentences, then serve it (`Flag`:
/// the report says it is not grounded) or refuse, by `policy`.
pub fn finalize_coverage(
    answer: &str,
    report: &Report,
    attempt: u32,
    threshold: f64,
    policy: LowCoveragePolicy,
) -> Decision {
    let uncited: Vec<&str> = report.unmarked().map(|s| &answer[s.span()]).collect();
    if uncited.is_empty() || report.coverage >= threshold {
        return Decision::Serve {
            text: answer.to_string(),
            repaired: false,
        };
    }
    if attempt == 0 {
        return Decision::Regenerate {
            corrective: prompt::coverage_message(&uncited),
        };
    }
    match policy {
        LowCoveragePolicy::Flag => Decision::Serve {
            text: answer.to_string(),
            repaired: false,
        },
        LowCoveragePolicy::Refuse => Decision::Refuse,
    }
}

/// Whether a backend's `finish_reason` says the reply was cut at the token
/// limit: `length` (OpenAI-compatible servers) or `max_tokens` (Anthropic).
pub fn is_cut_off(finish_reason: Option<&str>) -> bool {
    matches!(finish_reason, Some("length" | "max_tokens"))
}

/// A reply cut at the token limit without its unfinished last sentence
/// (one that does not end in `.`, `!` or `?`, closing quotes, brackets and
/// markers aside), trimmed at the end. A reply whose last sentence is
/// complete is returned whole.
pub fn drop_unfinished_tail(answer: &str) -> &str {
    let report = Report::check(answer, 0);
    match report.sentences.last() {
        Some(last) if !is_finished(&answer[last.span()]) => answer[..last.start].trim_end(),
        _ => answer.trim_end(),
    }
}

/// Ends in sentence-final punctuation, before any markers, closing quotes
/// and brackets.
fn is_finished(sentence: &str) -> bool {
    let mut s = sentence.trim_end();
    loop {
        let before = s.len();
        if s.ends_with(']')
            && let Some(open) = s.rfind('[')
        {
            s = s[..open].trim_end();
        }
        s = s.trim_end_matches(['"', '\'', ')', '\u{201d}', '\u{2019}', '*']);
        if s.len() == before {
            break;
        }
    }
    s.ends_with(['.', '!', '?', '\u{2026}'])
}

/// Rewrites markers so they name only ids that were sent: `[1][5]` →
/// `[1]`, `[1, 5]` → `[1]`, `[5]` → removed (with the space before it).
pub fn strip_bad_markers(answer: &str, report: &Report) -> String {
    let n = report.n_passages as u64;
    let mut out = String::with_capacity(answer.len());
    let mut last = 0;
    for m in &report.markers.markers {
        let ids: Vec<u64> = report.markers.ids_of(m).collect();
        let good: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|&id| id >= 1 && id <= n)
            .collect();
        if !m.malformed && good.len() == ids.len() {
            continue;
        }
        let mut cut = m.start;
        if good.is_empty() {
            while cut > last && answer.as_bytes()[cut - 1] == b' ' {
                cut -= 1;
            }
        }
        out.push_str(&answer[last..cut]);
        if !good.is_empty() {
            let list: Vec<String> = good.iter().map(u64::to_string).collect();
            out.push('[');
            out.push_str(&list.join(", "));
            out.push(']');
        }
        last = m.end;
    }
    out.push_str(&answer[last..]);
    out
}

/// Removes the sentences that carry an unresolvable id.
pub fn drop_bad_sentences(answer: &str, report: &Report) -> String {
    let mut out = String::with_capacity(answer.len());
    let mut last = 0;
    for s in report.sentences.iter().filter(|s| s.has_bad_id) {
        out.push_str(&answer[last..s.start]);
        last = s.end;
        // Swallow the white space after the dropped sentence on its line.
        while last < answer.len() && answer.as_bytes()[last] == b' ' {
            last += 1;
        }
    }
    out.push_str(&answer[last..]);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regenerate_once_then_refuse() {
        let a = "Refunds take 14 days [7].";
        let r = Report::check(a, 3);
        assert!(matches!(
            finalize(a, &r, 0, true, BadIdPolicy::Refuse),
            Decision::Regenerate { .. }
        ));
        assert_eq!(
            finalize(a, &r, 1, true, BadIdPolicy::Refuse),
            Decision::Refuse
        );
    }

    #[test]
    fn a_cut_reply_loses_its_unfinished_sentence() {
        let a = "Reimbursements settle within 30 days [2]. We strongly";
        assert_eq!(
            drop_unfinished_tail(a),
            "Reimbursements settle within 30 days [2]."
        );
        assert_eq!(drop_unfinished_tail("Settled in 30 days [2"), "");
        let whole = "Settled in 30 days. [2]\n";
        assert_eq!(drop_unfinished_tail(whole), "Settled in 30 days. [2]");
        assert!(is_cut_off(Some("length")) && is_cut_off(Some("max_tokens")));
        assert!(!is_cut_off(Some("stop")) && !is_cut_off(None));
    }

    #[test]
    fn low_coverage_regenerates_once_then_follows_the_policy() {
        let a = "Refunds take 14 days [1]. Claims are filed within 60 days.";
        let r = Report::check(a, 3);
        match finalize_coverage(a, &r, 0, 0.9, LowCoveragePolicy::Flag) {
            Decision::Regenerate { corrective } => {
                assert!(corrective.contains("\"Claims are filed within 60 days.\""))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            finalize_coverage(a, &r, 1, 0.9, LowCoveragePolicy::Flag),
            Decision::Serve {
                repaired: false,
                ..
            }
        ));
        assert_eq!(
            finalize_coverage(a, &r, 1, 0.9, LowCoveragePolicy::Refuse),
            Decision::Refuse
        );
        let full = "Refunds take 14 days [1].";
        let r = Report::check(full, 3);
        assert!(matches!(
            finalize_coverage(full, &r, 0, 0.9, LowCoveragePolicy::Refuse),
            Decision::Serve { .. }
        ));
    }

    #[test]
    fn strip_and_drop() {
        let a = "Vouchers within 5 days [1][5]. Also [1, 9]. Nope [8]. Fine [2].";
        let r = Report::check(a, 3);
        assert_eq!(
            strip_bad_markers(a, &r),
            "Vouchers within 5 days [1]. Also [1]. Nope. Fine [2]."
        );
        assert_eq!(drop_bad_sentences(a, &r), "Fine [2].");
        let stripped = strip_bad_markers(a, &r);
        assert!(Report::check(&stripped, 3).bad_ids.is_empty());
    }

    #[test]
    fn flagged_sentences_are_kept_dropped_or_refused() {
        let passages = [crate::Passage {
            id: "p1".into(),
            text: "Reimbursements settle within 30 days of approval.".into(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }];
        let a = "Reimbursements settle within 30 days of approval [1]. Reimbursements settle within 14 days [1].";
        let config = crate::CheckConfig::default();
        let verifier = groundcite_verify::LexicalVerifier::new(config.support.clone());
        let output = crate::check(None, &passages, a, &config, &verifier);
        assert_eq!(output.counts.contradicted, 1, "{output:#?}");
        assert_eq!(
            finalize_support(a, &output, UnsupportedPolicy::Flag),
            Decision::Serve {
                text: a.to_string(),
                repaired: false
            }
        );
        assert_eq!(
            finalize_support(a, &output, UnsupportedPolicy::Drop),
            Decision::Serve {
                text: "Reimbursements settle within 30 days of approval [1].".into(),
                repaired: true
            }
        );
        assert_eq!(
            finalize_support(a, &output, UnsupportedPolicy::Refuse),
            Decision::Refuse
        );
        // Nothing factual left once the flagged sentence is dropped.
        let only_flagged = "Reimbursements settle within 14 days [1].";
        let output = crate::check(None, &passages, only_flagged, &config, &verifier);
        assert_eq!(
            finalize_support(only_flagged, &output, UnsupportedPolicy::Drop),
            Decision::Refuse
        );
    }
}
