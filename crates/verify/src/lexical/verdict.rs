//! The verdict on one claim against a set of passages: each rule a function
//! of its own, run in a fixed order over what the alignment found.
//!
//! Contradictions come first (a stated quantity outside the claim's bound,
//! another value of the same kind, opposite words or periods, polarity, an
//! "only" the passage does not say, another entity in the claim's slot, a
//! property of another list item, another agent); then what the passages do
//! not state (missing quantities and content words). A contradiction wins
//! over a gap.

use crate::bits::Bits;
use crate::{Reason, Verdict};
use groundcite_text::quantity::{self, Quantity, Unit};
use groundcite_text::{self as text, CAP};

use super::LexicalVerifier;
use super::analysis::*;
use super::rules::*;

/// What the passages of one judged set state of the claim, taken together.
struct Coverage {
    /// Claim terms stated in some window.
    terms: Bits,
    /// Claim quantities stated in some window.
    quantities: Bits,
    /// Claim quantities stated anywhere in the passages.
    quantities_anywhere: Bits,
    /// Claim terms stated anywhere in the passages.
    terms_anywhere: Bits,
    /// Claim terms of the windows' best-aligned sentences.
    core: Bits,
    /// Claim terms matched only weakly (a derivational prefix).
    weak: Bits,
    /// The passage with the best-scoring window.
    primary: usize,
    /// Passages whose window contributed claim terms or quantities.
    contributing: Vec<usize>,
}

impl Coverage {
    fn of(info: &ClaimInfo<'_>, scratch: &Scratch, set: &[usize]) -> Coverage {
        let mut c = Coverage {
            terms: Bits::default(),
            quantities: Bits::default(),
            quantities_anywhere: Bits::default(),
            terms_anywhere: Bits::default(),
            core: Bits::default(),
            weak: Bits::default(),
            primary: 0,
            contributing: Vec::new(),
        };
        let mut primary: Option<usize> = None;
        for &p in set {
            let w = &scratch.windows[p];
            c.terms.union_with(&w.terms);
            c.quantities.union_with(&w.quantities);
            c.quantities_anywhere
                .union_with(&scratch.passage_quantities[p]);
            c.terms_anywhere.union_with(&scratch.passage_terms[p]);
            c.core.union_with(&w.core);
            c.weak.union_with(&w.weak_terms);
            if mask_weight(&info.terms, &w.terms, true) > 0.0 || !w.quantities.is_empty() {
                c.contributing.push(p);
            }
            if primary.is_none_or(|b| w.score > scratch.windows[b].score) {
                primary = Some(p);
            }
        }
        c.primary = primary.unwrap_or(0);
        c
    }
}

/// The rules' findings so far.
struct Findings {
    /// Write the reasons (not only the verdict).
    detail: bool,
    reasons: Vec<Reason>,
    contradicted: bool,
    /// The passage whose window is shown as evidence.
    evidence_at: usize,
}

impl Findings {
    /// A contradiction, shown with the window of passage `at` when given.
    fn contradiction(&mut self, at: Option<usize>, reason: impl FnOnce() -> Reason) {
        if self.detail {
            self.reasons.push(reason());
        }
        self.contradicted = true;
        if let Some(at) = at {
            self.evidence_at = at;
        }
    }
}

/// The claim's content terms the passages do not state, and how much they weigh.
struct Gap {
    /// Summed weight of the terms not stated in a window (each damped when
    /// stated elsewhere, weakly, or in an adjacent sentence).
    weight: f32,
    /// Terms no window states.
    terms: Bits,
}

/// The sentence a claim is read against: the best-aligned sentence of the
/// primary passage's window.
struct Anchor<'a, 'p> {
    passage: &'a Passage<'p>,
    sentence: usize,
    window: &'a Window,
    /// Share of the claim's weight the sentence states.
    sentence_alignment: f32,
    /// Share of the claim's weight the window states.
    window_alignment: f32,
}

impl LexicalVerifier {
    /// Judge the claim against the passages `set` (0-based indices) taken together.
    ///
    /// `detail`: also write the reasons. Without it the verdict, evidence and contributing
    /// passages are the same; only the reasons are left out (a search over candidate passages
    /// needs no words; a supported assessment has no reasons either way).
    pub(super) fn assess(
        &self,
        passages: &[Passage<'_>],
        info: &ClaimInfo<'_>,
        scratch: &Scratch,
        set: &[usize],
        detail: bool,
    ) -> Assessment {
        let coverage = Coverage::of(info, scratch, set);
        let primary = coverage.primary;
        let mut findings = Findings {
            detail,
            reasons: Vec::new(),
            contradicted: false,
            evidence_at: primary,
        };
        let missing_quantities =
            self.quantity_rules(passages, info, scratch, set, &coverage, &mut findings);
        let gap = self.content_gap(info, &coverage);

        let window = &scratch.windows[primary];
        let window_alignment = alignment(info, &window.terms);
        if let Some(sentence) = best_sentence(passages, scratch, info, primary, window) {
            let passage = &passages[primary];
            let anchor = Anchor {
                passage,
                sentence,
                window,
                sentence_alignment: alignment(
                    info,
                    &scratch.sentence_terms[passage.sent_base + sentence],
                ),
                window_alignment,
            };
            let opposite = self.opposite_words(info, &anchor, primary, &mut findings);
            if !opposite {
                self.polarity(info, &anchor, primary, &mut findings);
            }
            self.exclusive_restriction(info, &anchor, primary, &mut findings);
            if self.config.check_entity_slots && window_alignment >= self.contradiction_floor() {
                self.entity_in_slot(info, &anchor, &gap, &mut findings);
                self.list_mixup(info, &anchor, &mut findings);
                self.agent_conflict(info, &anchor, &mut findings);
            }
        }

        let unsupported = self.unstated(info, &coverage, &gap, &missing_quantities, &mut findings);
        let verdict = if findings.contradicted {
            Verdict::Contradicted
        } else if unsupported {
            Verdict::Unsupported
        } else {
            Verdict::Supported
        };
        let at = findings.evidence_at;
        let evidence = (scratch.windows[at].score > 0.0).then(|| (at, scratch.windows[at].clone()));
        Assessment {
            verdict,
            reasons: findings.reasons,
            evidence,
            contributing: coverage.contributing,
        }
    }

    /// The least alignment at which a rule may call a claim contradicted.
    fn contradiction_floor(&self) -> f32 {
        self.config.contradiction_min_alignment
    }

    /// The claim's quantities: one the passages state with another bound
    /// ("at least 3" where it says "at most 3"), or another value of the same
    /// kind where the claim's is not stated ("5 days" where it says "10
    /// days"), is a contradiction. Returns the quantities stated nowhere and
    /// contradicted by nothing (slices of the claim).
    fn quantity_rules<'c>(
        &self,
        passages: &[Passage<'_>],
        info: &ClaimInfo<'c>,
        scratch: &Scratch,
        set: &[usize],
        coverage: &Coverage,
        findings: &mut Findings,
    ) -> Vec<&'c str> {
        let mut missing = Vec::new();
        if !self.config.check_quantities {
            return missing;
        }
        let aligned_enough =
            |p: usize| alignment(info, &scratch.windows[p].terms) >= self.contradiction_floor();
        for (ci, cq) in info.quants.iter().enumerate() {
            if coverage.quantities.contains(ci) {
                // Stated: check bounds against the stating quantity in the windows.
                if let Some((p, eq)) =
                    self.find_in_windows(passages, scratch, set, |eq| quantity::states(cq, eq))
                    && quantity::bounds_conflict(cq, eq)
                    && aligned_enough(p)
                {
                    findings.contradiction(Some(p), || Reason::BoundMismatch {
                        claim: bound_text(info.text, cq),
                        evidence: bound_text(passages[p].text, eq),
                    });
                }
                continue;
            }
            if coverage.quantities_anywhere.contains(ci) {
                continue; // stated elsewhere in a cited passage: lenient
            }
            // Another value for the same kind of thing: prefer the same unit, the window,
            // and evidence quantities that no other claim quantity states.
            let unclaimed = |eq: &Quantity| !info.quants.iter().any(|o| quantity::states(o, eq));
            let same = |eq: &Quantity| eq.unit == cq.unit && unclaimed(eq);
            let kind = |eq: &Quantity| quantity::comparable(cq, eq) && unclaimed(eq);
            let conflict = self
                .find_in_windows(passages, scratch, set, same)
                .or_else(|| self.find_in_windows(passages, scratch, set, kind))
                .or_else(|| {
                    // Outside the window (a table row below its header): the aligned
                    // sentence that states a comparable quantity.
                    self.find_in_aligned(passages, scratch, info, set, same)
                })
                .or_else(|| self.find_in_aligned(passages, scratch, info, set, kind));
            match conflict {
                Some((p, eq)) if aligned_enough(p) => {
                    findings.contradiction(Some(p), || {
                        let claim = cq.text(info.text).to_owned();
                        let evidence = eq.text(passages[p].text).to_owned();
                        if matches!(cq.unit, Unit::Weekday | Unit::MonthName) {
                            Reason::DateMismatch { claim, evidence }
                        } else {
                            Reason::NumberMismatch { claim, evidence }
                        }
                    });
                }
                _ => missing.push(cq.text(info.text)),
            }
        }
        missing
    }

    /// The claim's content terms the windows do not state, weighed.
    fn content_gap(&self, info: &ClaimInfo<'_>, coverage: &Coverage) -> Gap {
        let cfg = &self.config;
        let mut gap = Gap {
            weight: 0.0,
            terms: Bits::default(),
        };
        for (i, t) in info.terms.iter().enumerate() {
            if t.question || coverage.core.contains(i) {
                continue;
            }
            if coverage.terms.contains(i) {
                // In the window but not its best sentence. A name or code from another
                // sentence may be another subject (a relation the passage does not state);
                // another word joins the sentences of one subject.
                let factor = if t.flags & (CAP | text::DIGIT) != 0 {
                    cfg.adjacent_factor
                } else {
                    cfg.adjacent_word_factor
                };
                gap.weight += t.weight * factor;
            } else {
                let factor = if coverage.terms_anywhere.contains(i) {
                    cfg.elsewhere_factor
                } else if coverage.weak.contains(i) {
                    cfg.derivational_factor
                } else {
                    1.0
                };
                gap.weight += t.weight * factor;
                gap.terms.insert(i);
            }
        }
        gap
    }

    /// Opposite words ("optional" where the sentence says "required") or
    /// another period for a repeated event ("once a month" where it says
    /// "weekly"); a negation on one side as well cancels it ("not required"
    /// for "optional"). Returns whether the claim has such a word pair,
    /// cancelled or not (polarity is then not judged again).
    fn opposite_words(
        &self,
        info: &ClaimInfo<'_>,
        anchor: &Anchor<'_, '_>,
        primary: usize,
        findings: &mut Findings,
    ) -> bool {
        let cfg = &self.config;
        if !cfg.check_antonyms || anchor.window_alignment < self.contradiction_floor() {
            return false;
        }
        let (p, si) = (anchor.passage, anchor.sentence);
        let pair = antonym_conflict(info, p, si).or_else(|| {
            let (c_days, c) = period(&info.tokens, info.text)?;
            let (e_days, e) = unit_tokens(p, si).find_map(|toks| period(toks, p.text))?;
            ((c_days - e_days).abs() > 0.02 * c_days.max(e_days)).then_some((c, e))
        });
        let Some((c, e)) = pair else {
            return false;
        };
        let s = &p.sentences[si];
        let sentence_negated = s.neg && negation_in_scope(info, p, s, cfg.negation_scope);
        if info.neg == sentence_negated {
            findings.contradiction(Some(primary), || Reason::Antonym {
                claim: c.to_owned(),
                evidence: e.to_owned(),
            });
        }
        true
    }

    /// Polarity: the claim negated where the sentence is not, or the
    /// reverse (a prefix such as "un-" on one side flips it too).
    fn polarity(
        &self,
        info: &ClaimInfo<'_>,
        anchor: &Anchor<'_, '_>,
        primary: usize,
        findings: &mut Findings,
    ) {
        let cfg = &self.config;
        if !cfg.check_polarity || anchor.sentence_alignment < cfg.polarity_min_alignment {
            return;
        }
        let (p, w) = (anchor.passage, anchor.window);
        let s = &p.sentences[anchor.sentence];
        let flips = prefix_flips(info, p, s);
        let mut negated = s.neg && negation_in_scope(info, p, s, cfg.negation_scope);
        // A negated claim may merge the window's sentences: its negation may come from
        // any of them ("X aren't posted" from "X are not posted. X include ...").
        if info.neg && !negated {
            negated = p.sentences[w.first..w.end]
                .iter()
                .any(|ws| ws.neg && negation_in_scope(info, p, ws, cfg.negation_scope));
        }
        // "Won't accept it until it's listed" for "before it accepts it, it must be
        // listed": a necessary condition, stated both ways.
        let conditional = info.neg_conditional
            && !negated
            && flips == 0
            && states_requirement(window_tokens(p, w), p.text);
        if (info.neg != negated) ^ (flips % 2 == 1) && !conditional {
            findings.contradiction(Some(primary), || Reason::Negation);
        }
    }

    /// "Only" in the claim where the window states no restriction (unless
    /// the claim's "only if" is the window's requirement).
    fn exclusive_restriction(
        &self,
        info: &ClaimInfo<'_>,
        anchor: &Anchor<'_, '_>,
        primary: usize,
        findings: &mut Findings,
    ) {
        let (p, w) = (anchor.passage, anchor.window);
        if self.config.check_restriction
            && info.excl
            && !p.sentences[w.first..w.end].iter().any(|ws| ws.excl)
            && !(info.excl_conditional && states_requirement(window_tokens(p, w), p.text))
            && anchor.window_alignment >= self.contradiction_floor()
        {
            findings.contradiction(Some(primary), || Reason::Restriction { cue: "only".into() });
        }
    }

    /// Another entity in the slot of a name the passage does not state
    /// ("approved by Finance" where it says "approved by HR").
    fn entity_in_slot(
        &self,
        info: &ClaimInfo<'_>,
        anchor: &Anchor<'_, '_>,
        gap: &Gap,
        findings: &mut Findings,
    ) {
        if findings.contradicted {
            return;
        }
        let (p, s) = (anchor.passage, &anchor.passage.sentences[anchor.sentence]);
        for mi in gap.terms.iter() {
            let t = &info.terms[mi];
            if t.weight < 1.0 || !entity_like(info, t) {
                continue;
            }
            if let Some(sub) = slot_substitute(info, t, p, s, self.config.slot_lookahead) {
                findings.contradiction(None, || Reason::EntityMismatch {
                    claim: info.text[t.start as usize..t.end as usize].to_owned(),
                    evidence: sub.to_owned(),
                });
                return;
            }
        }
    }

    /// A property of another list item or table row ("Synthetics handles
    /// log management" where the list gives log management to Logs).
    fn list_mixup(&self, info: &ClaimInfo<'_>, anchor: &Anchor<'_, '_>, findings: &mut Findings) {
        if findings.contradicted {
            return;
        }
        if let Some((c, e)) = list_mixup(info, anchor.passage) {
            findings.contradiction(None, || Reason::ListMixup {
                claim: c.to_owned(),
                evidence: e.to_owned(),
            });
        }
    }

    /// Another agent for the same action ("Neil Gaiman directed" where it
    /// says "directed by Robert Zemeckis").
    fn agent_conflict(
        &self,
        info: &ClaimInfo<'_>,
        anchor: &Anchor<'_, '_>,
        findings: &mut Findings,
    ) {
        if findings.contradicted {
            return;
        }
        let p = anchor.passage;
        if let Some((c, e)) = agent_conflict(info, p, window_tokens(p, anchor.window)) {
            findings.contradiction(None, || Reason::EntityMismatch {
                claim: c.to_owned(),
                evidence: e.to_owned(),
            });
        }
    }

    /// Whether the passages leave the claim unstated: a quantity stated
    /// nowhere, enough missing content weight (or a missing name or code
    /// after the claim's first content word), or nothing aligned at all.
    fn unstated(
        &self,
        info: &ClaimInfo<'_>,
        coverage: &Coverage,
        gap: &Gap,
        missing_quantities: &[&str],
        findings: &mut Findings,
    ) -> bool {
        let cfg = &self.config;
        let strong_missing = gap.terms.iter().any(|i| {
            let t = &info.terms[i];
            t.flags & (CAP | text::DIGIT) != 0
                && t.start > first_content_start(info)
                && !coverage.terms_anywhere.contains(i)
        });
        let mut unsupported = false;
        if (gap.weight >= cfg.missing_weight_threshold
            && (gap.weight >= cfg.missing_fraction * info.new_weight || strong_missing))
            || !missing_quantities.is_empty()
        {
            if findings.detail {
                let mut list: Vec<String> =
                    missing_quantities.iter().map(|m| m.to_string()).collect();
                for i in gap.terms.iter() {
                    let t = &info.terms[i];
                    list.push(info.text[t.start as usize..t.end as usize].to_owned());
                }
                findings.reasons.push(Reason::Missing(list));
            }
            unsupported = true;
        }
        if coverage.terms.is_empty() && coverage.quantities.is_empty() && info.total_weight > 0.0 {
            if findings.detail {
                findings.reasons.push(Reason::NoAlignment);
            }
            unsupported = true;
        }
        unsupported
    }
}

/// The share of the claim's weight `terms` states (1 for a claim without
/// weighted terms).
fn alignment(info: &ClaimInfo<'_>, terms: &Bits) -> f32 {
    if info.total_weight > 0.0 {
        mask_weight(&info.terms, terms, false) / info.total_weight
    } else {
        1.0
    }
}
