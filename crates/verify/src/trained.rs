//! The trained verifier: the lexical rules, then groundcite's trained support judge (a
//! cross-encoder over a passage window and a claim) wherever the rules are not exact.
//!
//! Support stays pure: the model is behind [`EntailmentJudge`], which the caller implements (the
//! engine, with `groundcite_embed::Judges`). The rules' exact findings keep their verdict and
//! reasons: a number, date or bound that differs, and a negation. Every other cited claim goes
//! to the judge, against the windows of its cited passages that share the most words with it
//! (each sentence, and each pair of adjacent sentences; at most [`WINDOWS_PER_CLAIM`]), and, for
//! a claim citing several passages, their best windows joined (a claim may merge them). The
//! claim is:
//! - `Supported` when the judge's probability of entailment, at its best window, reaches
//!   [`SupportConfig::trained_entailed`](crate::SupportConfig::trained_entailed); the evidence
//!   is that window;
//! - else `Contradicted` when some window's probability of contradiction reaches
//!   [`SupportConfig::trained_contradicted`](crate::SupportConfig::trained_contradicted);
//! - else `Unsupported`.
//!
//! Either way the reasons end with the note `entailment: 0.93 (contradiction: 0.02)`; the
//! rules' other reasons (missing words, an antonym, an entity in the slot) stay beside it when
//! the judge agrees that the claim is not supported. A short elliptic answer to a question
//! ("The 1980s.") is left to the rules in the default scope, and judged as the question followed
//! by the answer in the `all` scope.
//!
//! A judge that fails leaves the rules' verdicts, each with a note saying why.

use std::collections::HashSet;
use std::ops::Range;

use groundcite_text as text;

use crate::stage::{
    Inputs, evidence, hundredths, one_per_input, second_stage_verifier, sentences_and_pairs,
    unavailable,
};
use crate::{Judgement, LexicalVerifier, Reason, TrainedScope, Verdict, Verifier};

/// At most this many windows of the cited passages are judged per claim.
pub const WINDOWS_PER_CLAIM: usize = 3;

/// A claim of at most this many words, with a question, is judged as the question and the
/// claim.
const ELLIPTIC_WORDS: usize = 5;

/// How sure a support judge is that a passage entails, is silent on, or contradicts a claim
/// (the three sum to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entailment {
    /// The passage says the claim.
    pub entailed: f32,
    /// The passage says nothing either way.
    pub neutral: f32,
    /// The passage says otherwise.
    pub contradicted: f32,
}

/// A support judge over (passage text, claim) pairs. Implemented outside this crate (the engine
/// wraps `groundcite_embed::Judges`); tests use a fake.
pub trait EntailmentJudge {
    /// One judgement per pair, in input order; an error says why the model failed.
    fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String>;
}

/// [`LexicalVerifier`], then the trained judge wherever the rules are not exact. See the module
/// documentation.
#[derive(Debug, Clone)]
pub struct TrainedVerifier<J> {
    /// The rules that run first (their config holds the judge's thresholds).
    pub lexical: LexicalVerifier,
    /// The judge.
    pub judge: J,
}

/// Whether the rules' verdict rests on an exact finding the judge does not overrule.
fn exact(j: &Judgement) -> bool {
    j.verdict == Verdict::Contradicted
        && j.reasons.iter().any(|r| {
            matches!(
                r,
                Reason::NumberMismatch { .. }
                    | Reason::DateMismatch { .. }
                    | Reason::BoundMismatch { .. }
                    | Reason::Negation
            )
        })
}

impl<J: EntailmentJudge> TrainedVerifier<J> {
    /// The `lexical` rules, then the trained `judge` wherever they are not exact.
    pub fn new(lexical: LexicalVerifier, judge: J) -> TrainedVerifier<J> {
        TrainedVerifier { lexical, judge }
    }

    /// Puts the claims the rules are not exact about to the judge.
    fn refine(&self, inputs: Inputs<'_>, mut judgements: Vec<Judgement>) -> Vec<Judgement> {
        let (question, passages, claims) = (inputs.question, inputs.passages, inputs.claims);
        let candidates: Vec<usize> = (0..claims.len())
            .filter(|&i| {
                !claims[i].cited.is_empty()
                    && claims[i]
                        .cited
                        .iter()
                        .all(|&k| k >= 1 && k <= passages.len())
                    && match self.lexical.config.trained_scope {
                        TrainedScope::All => !exact(&judgements[i]),
                        TrainedScope::Unsure => {
                            judgements[i].verdict == Verdict::Unsupported
                                && !elliptic(question, &inputs.claim_without_markers(i))
                        }
                    }
            })
            .collect();
        if candidates.is_empty() {
            return judgements;
        }
        // Each candidate's hypothesis, and its windows.
        let mut hypotheses: Vec<String> = Vec::with_capacity(candidates.len());
        let mut windows: Vec<Window> = Vec::new();
        let mut spans = Vec::new();
        for (c, &i) in candidates.iter().enumerate() {
            let claim = inputs.claim_without_markers(i);
            let hypothesis = match question {
                Some(q) if elliptic(question, &claim) => {
                    format!("{}? {}", q.trim().trim_end_matches('?').trim(), claim)
                }
                _ => claim,
            };
            let keys = word_keys(&hypothesis);
            let mut scored: Vec<(usize, usize, usize, Range<usize>)> = Vec::new();
            for &k in claims[i].cited {
                spans.clear();
                text::sentence_spans(passages[k - 1], &mut spans);
                if spans.is_empty() {
                    spans.push((0, passages[k - 1].len() as u32));
                }
                for range in sentences_and_pairs(&spans) {
                    let overlap = word_keys(&passages[k - 1][range.clone()])
                        .intersection(&keys)
                        .count();
                    scored.push((overlap, scored.len(), k, range));
                }
            }
            // Most shared words first; among equals, the earlier (a single sentence before the
            // pair it starts).
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            // A claim citing several passages may merge them: their best windows, joined, are
            // judged too.
            if claims[i].cited.len() > 1 {
                let best: Vec<&(usize, usize, usize, Range<usize>)> = claims[i]
                    .cited
                    .iter()
                    .filter_map(|&k| scored.iter().find(|w| w.2 == k))
                    .collect();
                if let Some(first) = best.first() {
                    let joined: Vec<&str> = best
                        .iter()
                        .map(|w| &passages[w.2 - 1][w.3.clone()])
                        .collect();
                    windows.push(Window {
                        candidate: c,
                        passage: first.2,
                        range: first.3.clone(),
                        joined: Some(joined.join(" ")),
                    });
                }
            }
            for (_, _, k, range) in scored.into_iter().take(WINDOWS_PER_CLAIM) {
                windows.push(Window {
                    candidate: c,
                    passage: k,
                    range,
                    joined: None,
                });
            }
            hypotheses.push(hypothesis);
        }
        let pairs: Vec<(&str, &str)> = windows
            .iter()
            .map(|w| {
                let premise = match &w.joined {
                    Some(joined) => joined.as_str(),
                    None => &passages[w.passage - 1][w.range.clone()],
                };
                (premise, hypotheses[w.candidate].as_str())
            })
            .collect();
        let verdicts = self
            .judge
            .judge(&pairs)
            .and_then(|v| one_per_input(v, pairs.len(), "the judge", "verdicts", "pairs"));
        let verdicts = match verdicts {
            Ok(v) => v,
            Err(why) => return unavailable(judgements, &candidates, "trained judge", &why),
        };
        let config = &self.lexical.config;
        for (c, &i) in candidates.iter().enumerate() {
            let judged = || {
                windows
                    .iter()
                    .zip(&verdicts)
                    .filter(|(w, _)| w.candidate == c)
            };
            let Some((supporting, best)) =
                judged().max_by(|a, b| a.1.entailed.total_cmp(&b.1.entailed))
            else {
                continue;
            };
            let Some((contradicting, worst)) =
                judged().max_by(|a, b| a.1.contradicted.total_cmp(&b.1.contradicted))
            else {
                continue;
            };
            let note = Reason::Entailment {
                entailed: hundredths(best.entailed),
                contradicted: hundredths(worst.contradicted),
            };
            let j = &mut judgements[i];
            let evidence = |w: &Window| evidence(passages, w.passage, w.range.clone());
            if best.entailed >= config.trained_entailed {
                j.verdict = Verdict::Supported;
                j.reasons = vec![note];
                j.suggested.clear();
                j.evidence = Some(evidence(supporting));
            } else if worst.contradicted >= config.trained_contradicted {
                j.verdict = Verdict::Contradicted;
                j.reasons.push(note);
                j.evidence = Some(evidence(contradicting));
            } else {
                j.verdict = Verdict::Unsupported;
                j.reasons.push(note);
            }
        }
        judgements
    }
}

impl<J: EntailmentJudge> Verifier for TrainedVerifier<J> {
    second_stage_verifier!(first: lexical, kind: Trained);
}

/// Whether `claim` (without its markers) is a short answer to a question ("The 1980s."): the
/// judge reads it after its question, and in the `unsure` scope it is left to the rules, which
/// read it with its question (measured: judged, HaluEval QA's hallucinated answers flagged fell
/// from 86.5% to 58.8%).
fn elliptic(question: Option<&str>, claim: &str) -> bool {
    question.is_some_and(|q| !q.trim().is_empty())
        && claim.split_whitespace().count() <= ELLIPTIC_WORDS
}

/// A premise the judge reads for one claim: a window of a cited passage, or the best windows
/// of every cited passage joined (`joined`; the evidence is then the first of them).
struct Window {
    /// The index of the claim among the candidates.
    candidate: usize,
    /// The cited passage (1-based) and the window's byte range in it.
    passage: usize,
    range: Range<usize>,
    joined: Option<String>,
}

/// The folded, stemmed keys of a text's words that are not stop words.
fn word_keys(s: &str) -> HashSet<u64> {
    let mut tokens = Vec::new();
    text::tokenize(s, &[], false, &mut tokens);
    tokens
        .iter()
        .filter(|t| t.flags & text::STOP == 0)
        .map(|t| t.key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SupportConfig, judge_one};

    /// The probabilities of a judge's verdict.
    fn entailment(entailed: f32, neutral: f32, contradicted: f32) -> Entailment {
        Entailment {
            entailed,
            neutral,
            contradicted,
        }
    }

    /// A fake judge: a window holding "30 days" entails a claim holding "30 days"; one holding
    /// "managers" contradicts a claim holding "employees"; anything else is neutral.
    struct Fake;

    impl EntailmentJudge for Fake {
        fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
            Ok(pairs
                .iter()
                .map(|(window, claim)| {
                    if window.contains("30 days") && claim.contains("30 days") {
                        entailment(0.9, 0.05, 0.05)
                    } else if window.contains("managers") && claim.contains("employees") {
                        entailment(0.05, 0.05, 0.9)
                    } else {
                        entailment(0.1, 0.8, 0.1)
                    }
                })
                .collect())
        }
    }

    struct Broken;

    impl EntailmentJudge for Broken {
        fn judge(&self, _: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
            Err("judges.safetensors: truncated".into())
        }
    }

    const PASSAGE: &str = "Reimbursements settle within 30 days of approval. Only managers approve \
                           travel. Receipts are kept for a year.";

    /// The judge deciding every claim but the rules' exact findings.
    fn all() -> SupportConfig {
        SupportConfig {
            trained_scope: TrainedScope::All,
            ..SupportConfig::default()
        }
    }

    /// The judgement on `claim`, citing [`PASSAGE`], with `config` and the judge `j`.
    fn judged<J: EntailmentJudge>(config: SupportConfig, j: J, claim: &str) -> Judgement {
        let verifier = TrainedVerifier::new(LexicalVerifier::new(config), j);
        judge_one(&verifier, None, &[PASSAGE], claim, &[1])
    }

    /// The judgement on `claim`, citing [`PASSAGE`], with the judge `j` deciding every claim
    /// but the rules' exact findings.
    fn judge<J: EntailmentJudge>(j: J, claim: &str) -> Judgement {
        judged(all(), j, claim)
    }

    #[test]
    fn the_judge_supports_a_rewording_the_rules_miss_and_cites_its_window() {
        let j = judge(Fake, "Paybacks are settled in 30 days once approved [1].");
        assert_eq!(j.verdict, Verdict::Supported);
        assert_eq!(
            j.reasons,
            [Reason::Entailment {
                entailed: 0.9,
                contradicted: 0.1
            }]
        );
        let e = j.evidence.unwrap();
        assert!(PASSAGE[e.start..e.end].starts_with("Reimbursements settle within 30 days"));
    }

    #[test]
    fn the_judge_contradicts_a_claim_the_rules_let_through() {
        let j = judge(Fake, "Only employees approve travel [1].");
        assert_eq!(j.verdict, Verdict::Contradicted);
        assert_eq!(
            j.reasons.last().unwrap().to_string(),
            "entailment: 0.05 (contradiction: 0.90)"
        );
        let e = j.evidence.unwrap();
        assert!(PASSAGE[e.start..e.end].contains("managers"));
    }

    #[test]
    fn an_exact_finding_of_the_rules_is_never_overruled() {
        // The fake would say "entailed" (both hold "30 days"), but the rules found 14 vs 30.
        let j = judge(
            Fake,
            "Reimbursements settle within 14 days, not 30 days [1].",
        );
        assert_eq!(j.verdict, Verdict::Contradicted);
        assert!(
            !j.reasons
                .iter()
                .any(|r| matches!(r, Reason::Entailment { .. }))
        );
    }

    #[test]
    fn neither_entailed_nor_contradicted_is_unsupported() {
        let j = judge(
            Fake,
            "Receipts are kept for a decade by the finance team [1].",
        );
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert!(matches!(j.reasons.last(), Some(Reason::Entailment { .. })));
    }

    #[test]
    fn a_short_answer_is_judged_with_its_question() {
        struct Echo;
        impl EntailmentJudge for Echo {
            fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
                assert!(
                    pairs
                        .iter()
                        .all(|(_, c)| *c == "How long do reimbursements take? 30 days.")
                );
                Ok(vec![entailment(0.9, 0.05, 0.05); pairs.len()])
            }
        }
        let verifier = TrainedVerifier::new(LexicalVerifier::new(all()), Echo);
        let question = Some("How long do reimbursements take?");
        let j = judge_one(&verifier, question, &[PASSAGE], "30 days. [1]", &[1]);
        assert_eq!(j.verdict, Verdict::Supported);
    }

    #[test]
    fn a_claim_merging_two_cited_passages_is_judged_against_both() {
        /// Entails only a premise that says both halves of the claim.
        struct Both;
        impl EntailmentJudge for Both {
            fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
                Ok(pairs
                    .iter()
                    .map(|(premise, _)| {
                        let both = premise.contains("30 days") && premise.contains("badges");
                        let p = if both { 0.9 } else { 0.1 };
                        entailment(p, 1.0 - p, 0.0)
                    })
                    .collect())
            }
        }
        let passages = [PASSAGE, "New badges are printed on Fridays."];
        let verifier = TrainedVerifier::new(LexicalVerifier::new(all()), Both);
        let claim = "Reimbursements take 30 days and badges are printed on Fridays [1][2].";
        let j = judge_one(&verifier, None, &passages, claim, &[1, 2]);
        assert_eq!(j.verdict, Verdict::Supported, "{j:?}");
        assert_eq!(j.evidence.unwrap().passage, 1);
        // Citing one of them only, the other half is nowhere.
        let j = judge_one(&verifier, None, &passages, claim, &[1]);
        assert_ne!(j.verdict, Verdict::Supported, "{j:?}");
    }

    #[test]
    fn by_default_the_judge_decides_only_what_the_rules_found_unsupported() {
        /// Calls every claim contradicted.
        struct Contradicts;
        impl EntailmentJudge for Contradicts {
            fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
                Ok(vec![entailment(0.0, 0.0, 1.0); pairs.len()])
            }
        }
        let default = SupportConfig::default();
        // The rules miss the rewording; the judge supports it.
        let rewording = "Paybacks are settled in 30 days once approved [1].";
        let j = judged(default.clone(), Fake, rewording);
        assert_eq!(j.verdict, Verdict::Supported);
        // The rules support it: the judge is not asked.
        let j = judged(default, Contradicts, "Only managers approve travel [1].");
        assert_eq!(j.verdict, Verdict::Supported, "{j:?}");
        assert!(j.reasons.is_empty(), "{j:?}");
    }

    #[test]
    fn a_failing_judge_leaves_the_rules_verdict_and_says_so() {
        let j = judge(Broken, "Paybacks are settled in 30 days once approved [1].");
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert_eq!(
            j.reasons.last().unwrap().to_string(),
            r#"unchecked: "trained judge unavailable: judges.safetensors: truncated""#
        );
    }
}
