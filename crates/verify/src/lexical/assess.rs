//! Aligning a claim with the passages it cites, and judging it.

use crate::bits::Bits;
use crate::{Claim, Judgement, Reason, Verdict};
use groundcite_text::quantity::{self, Quantity, Unit};
use groundcite_text::{self as text, CAP, Token};
use std::ops::Range;

use super::LexicalVerifier;
use super::analysis::*;
use super::rules::*;

impl LexicalVerifier {
    /// `verify`, with the claims' marker spans when the caller has them; `None` as soon as
    /// `stop()` (asked before each claim) turns true.
    pub(super) fn verify_claims(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: Option<&[Vec<Range<usize>>]>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Vec<Judgement>> {
        if stop() {
            return None;
        }
        let mut analysed: Vec<Passage<'_>> = passages.iter().map(|p| Passage::pending(p)).collect();
        // Room for the sentences of every passage (about one per 40 bytes), so that analysing
        // passages does not reallocate.
        let sentences_hint = passages.iter().map(|p| p.len() / 40 + 2).sum::<usize>();
        let mut scratch = Scratch {
            masks: Vec::with_capacity(sentences_hint),
            qmasks: Vec::with_capacity(sentences_hint),
            windows: vec![Window::default(); analysed.len()],
            anywhere_q: vec![Bits::default(); analysed.len()],
            anywhere_t: vec![Bits::default(); analysed.len()],
            spans: Vec::with_capacity(sentences_hint),
            claim: ClaimBufs::default(),
        };
        // Analyse what the citations need now; the rest only if a claim needs it.
        let valid = |k: &usize| *k >= 1 && *k <= passages.len();
        if claims.iter().any(|c| !c.cited.iter().any(valid)) {
            ensure_analysed(&mut analysed, &mut scratch, 0..passages.len());
        } else {
            for c in claims {
                ensure_analysed(
                    &mut analysed,
                    &mut scratch,
                    c.cited.iter().copied().filter(|k| valid(k)).map(|k| k - 1),
                );
            }
        }
        let mut question_tokens = Vec::with_capacity(question.map_or(0, |q| q.len() / 4 + 1));
        if let Some(q) = question {
            text::tokenize(q, &[], true, &mut question_tokens);
        }
        claims
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if stop() {
                    return None;
                }
                let spans = markers.map(|m| m.get(i).map_or(&[][..], Vec::as_slice));
                Some(self.judge(&question_tokens, &mut analysed, c, spans, &mut scratch))
            })
            .collect()
    }

    pub(super) fn judge(
        &self,
        question_tokens: &[Token],
        all_passages: &mut [Passage<'_>],
        claim: &Claim<'_>,
        markers: Option<&[Range<usize>]>,
        scratch: &mut Scratch,
    ) -> Judgement {
        let bufs = std::mem::take(&mut scratch.claim);
        let mut info = analyse_claim(claim.text, markers, question_tokens, &self.config, bufs);
        let judgement = self.judge_claim(all_passages, &mut info, claim, scratch);
        scratch.claim = info.into_bufs();
        judgement
    }

    pub(super) fn judge_claim(
        &self,
        all_passages: &mut [Passage<'_>],
        info: &mut ClaimInfo<'_>,
        claim: &Claim<'_>,
        scratch: &mut Scratch,
    ) -> Judgement {
        let passages: &[Passage<'_>] = all_passages;
        let cfg = &self.config;
        let cited: Vec<usize> = claim
            .cited
            .iter()
            .filter(|&&k| k >= 1 && k <= passages.len())
            .map(|&k| k - 1)
            .collect();
        if passages.is_empty() {
            return Judgement {
                verdict: Verdict::Unsupported,
                reasons: vec![Reason::NoAlignment],
                evidence: None,
                suggested: Vec::new(),
                idle_citations: Vec::new(),
            };
        }
        let judged: Vec<usize> = if cited.is_empty() {
            (0..passages.len()).collect()
        } else {
            cited.clone()
        };
        self.match_all(passages, info, scratch, &judged, true, |p| {
            judged.contains(&p)
        });

        let only_polar = info.claim_weight == 0.0 && info.quants.is_empty();
        let mut judgement = if cited.is_empty() {
            let all: Vec<usize> = (0..passages.len()).collect();
            let mut a = self.assess(passages, info, scratch, &all, true);
            let mut suggested = Vec::new();
            if a.verdict == Verdict::Supported {
                // Prefer one passage that supports it alone.
                let single = (0..passages.len())
                    .filter(|&p| self.quantities_stated(info, scratch, &[p]))
                    .map(|p| (p, self.assess(passages, info, scratch, &[p], false)))
                    .filter(|(_, s)| s.verdict == Verdict::Supported)
                    .max_by(|x, y| {
                        scratch.windows[x.0]
                            .score
                            .total_cmp(&scratch.windows[y.0].score)
                    });
                match single {
                    Some((p, s)) => {
                        suggested.push(p + 1);
                        a = s;
                    }
                    None => suggested.extend(a.contributing.iter().map(|p| p + 1)),
                }
            }
            Judgement {
                verdict: a.verdict,
                reasons: a.reasons,
                evidence: a.evidence.map(|(p, w)| evidence(passages, p, &w)),
                suggested,
                idle_citations: Vec::new(),
            }
        } else {
            let a = self.assess(passages, info, scratch, &cited, true);
            let mut reasons = a.reasons;
            let mut suggested = Vec::new();
            let mut passages = passages;
            if a.verdict == Verdict::Unsupported && !only_polar && cited.len() < passages.len() {
                if passages.iter().any(|p| !p.analysed) {
                    ensure_analysed(all_passages, scratch, 0..all_passages.len());
                    passages = all_passages;
                }
                // The uncited passages were not matched yet (same weights: no damping now).
                self.match_all(passages, info, scratch, &judged, false, |p| {
                    !cited.contains(&p)
                });
                // Rule 4: is it stated by a passage it did not cite?
                for p in (0..passages.len()).filter(|p| !cited.contains(p)) {
                    if self.quantities_stated(info, scratch, &[p])
                        && self.assess(passages, info, scratch, &[p], false).verdict
                            == Verdict::Supported
                    {
                        suggested.push(p + 1);
                    }
                }
                if suggested.is_empty() {
                    // Or by the cited and uncited passages together?
                    let all: Vec<usize> = (0..passages.len()).collect();
                    if self.quantities_stated(info, scratch, &all) {
                        let b = self.assess(passages, info, scratch, &all, false);
                        if b.verdict == Verdict::Supported {
                            suggested.extend(
                                b.contributing
                                    .iter()
                                    .filter(|p| !cited.contains(p))
                                    .map(|p| p + 1),
                            );
                        }
                    }
                }
                if !suggested.is_empty() {
                    reasons.push(Reason::UncitedSupport(suggested.clone()));
                }
            }
            let mut idle = Vec::new();
            if cited.len() >= 2 {
                for &p in &cited {
                    let w = &scratch.windows[p];
                    let weight = mask_weight(&info.terms, &w.mask, true);
                    if w.qmask.is_empty() && weight < cfg.idle_min_weight {
                        idle.push(p + 1);
                    }
                }
            }
            Judgement {
                verdict: a.verdict,
                reasons,
                evidence: a.evidence.map(|(p, w)| evidence(passages, p, &w)),
                suggested,
                idle_citations: idle,
            }
        };
        if only_polar && judgement.verdict == Verdict::Supported {
            judgement
                .reasons
                .push(Reason::Unchecked("yes/no answer".into()));
        }
        judgement
    }

    /// Per-sentence term and quantity masks for the passages `which` selects, term weights
    /// adjusted by document frequency over `judged` (with `damp`; `which` must then select all
    /// of `judged`), and each selected passage's best window. Passages no claim judges are
    /// matched only when Rule 4 needs them.
    pub(super) fn match_all(
        &self,
        passages: &[Passage<'_>],
        info: &mut ClaimInfo<'_>,
        scratch: &mut Scratch,
        judged: &[usize],
        damp: bool,
        which: impl Fn(usize) -> bool,
    ) {
        let cfg = &self.config;
        // Per term: the judged passages that have it.
        let mut df = vec![0usize; info.terms.len()];
        for (pi, p) in passages.iter().enumerate() {
            if !which(pi) {
                continue;
            }
            let mut seen = Bits::default();
            let mut anywhere = Bits::default();
            for (si, s) in p.sentences.iter().enumerate() {
                let mut mask = Bits::default();
                for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
                    add_token_terms(info, tok, &mut mask);
                }
                let mut qmask = Bits::default();
                for (ci, cq) in info.quants.iter().enumerate() {
                    if p.quants[s.q_lo as usize..s.q_hi as usize]
                        .iter()
                        .any(|eq| quantity::states(cq, eq))
                    {
                        qmask.insert(ci);
                    }
                }
                seen.union_with(&mask);
                anywhere.union_with(&qmask);
                scratch.masks[p.sent_base + si] = mask;
                scratch.qmasks[p.sent_base + si] = qmask;
            }
            if judged.contains(&pi) {
                for i in seen.iter() {
                    df[i] += 1;
                }
            }
            scratch.anywhere_q[pi] = anywhere;
            scratch.anywhere_t[pi] = seen;
        }
        let n = judged.len();
        if damp && n >= cfg.damping_min_passages {
            let mut changed = false;
            for (i, t) in info.terms.iter_mut().enumerate() {
                if df[i] * 2 > n && t.flags & CAP == 0 {
                    t.weight *= cfg.shared_term_damping;
                    changed = true;
                }
            }
            if changed {
                info.claim_weight = info
                    .terms
                    .iter()
                    .filter(|t| !t.question)
                    .map(|t| t.weight)
                    .sum();
                info.total_weight = info.terms.iter().map(|t| t.weight).sum();
                info.new_weight = new_weight(&info.terms);
            }
        }
        for (pi, p) in passages.iter().enumerate() {
            if !which(pi) {
                continue;
            }
            let mut best = Window::default();
            let mut best_score = f32::NEG_INFINITY;
            let ns = p.sentences.len();
            for s0 in 0..ns {
                let mut mask = Bits::default();
                let mut qmask = Bits::default();
                // The weight of `mask`, recomputed only when a sentence adds terms.
                let mut weight = 0.0;
                for s1 in s0 + 1..=(s0 + cfg.max_window_sentences.max(1)).min(ns) {
                    let added = &scratch.masks[p.sent_base + s1 - 1];
                    if !added.is_empty() {
                        mask.union_with(added);
                        weight = mask_weight(&info.terms, &mask, false);
                    }
                    qmask.union_with(&scratch.qmasks[p.sent_base + s1 - 1]);
                    let score = weight + qmask.len() as f32 * cfg.quantity_weight
                        - cfg.window_sentence_penalty * (s1 - s0 - 1) as f32;
                    if score > best_score + 1e-6 {
                        best_score = score;
                        best = Window {
                            s0,
                            s1,
                            core: Bits::default(),
                            mask: mask.clone(),
                            pmask: Bits::default(),
                            qmask: qmask.clone(),
                            score,
                        };
                    }
                }
            }
            let base = p.sent_base;
            // Weak (derivational) matches: needed for the best window only.
            best.pmask.clear();
            for s in &p.sentences[best.s0..best.s1] {
                for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
                    if let Some(weak) = info.pre_index.get(&tok.pre) {
                        let mut strong = Bits::default();
                        add_token_terms(info, tok, &mut strong);
                        weak.add_missing_to(&strong, &mut best.pmask);
                    }
                }
            }
            // The best-aligned sentence, read with its lead-in or table header.
            let unit = |k: usize| {
                let mut m = scratch.masks[base + k].clone();
                if let Some(l) = p.sentences[k].lead {
                    m.union_with(&scratch.masks[base + l as usize]);
                }
                m
            };
            best.core = (best.s0..best.s1)
                .map(unit)
                .max_by(|a, b| {
                    (
                        mask_weight(&info.terms, a, true),
                        mask_weight(&info.terms, a, false),
                    )
                        .partial_cmp(&(
                            mask_weight(&info.terms, b, true),
                            mask_weight(&info.terms, b, false),
                        ))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .unwrap_or_default();
            scratch.windows[pi] = best;
        }
    }

    /// Whether the passages `set` state every claim quantity somewhere. Without that, `assess`
    /// of `set` cannot come out supported (a quantity is then missing or contradicted), so a
    /// search for supporting passages skips the assessment.
    pub(super) fn quantities_stated(
        &self,
        info: &ClaimInfo<'_>,
        scratch: &Scratch,
        set: &[usize],
    ) -> bool {
        if !self.config.check_quantities || info.quants.is_empty() {
            return true;
        }
        let mut stated = Bits::default();
        for &p in set {
            stated.union_with(&scratch.windows[p].qmask);
            stated.union_with(&scratch.anywhere_q[p]);
        }
        (0..info.quants.len()).all(|i| stated.contains(i))
    }

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
        let cfg = &self.config;
        let mut union = Bits::default();
        let mut qunion = Bits::default();
        let mut q_anywhere = Bits::default();
        let mut primary: Option<usize> = None;
        let mut contributing = Vec::new();
        for &p in set {
            let w = &scratch.windows[p];
            union.union_with(&w.mask);
            qunion.union_with(&w.qmask);
            q_anywhere.union_with(&scratch.anywhere_q[p]);
            if !w.mask.is_empty() || !w.qmask.is_empty() {
                let own = mask_weight(&info.terms, &w.mask, true);
                if own > 0.0 || !w.qmask.is_empty() {
                    contributing.push(p);
                }
            }
            if primary.is_none_or(|b| w.score > scratch.windows[b].score) {
                primary = Some(p);
            }
        }
        let primary = primary.unwrap_or(0);
        let pw = scratch.windows[primary].clone();
        let align = |w: &Window| {
            if info.total_weight > 0.0 {
                mask_weight(&info.terms, &w.mask, false) / info.total_weight
            } else {
                1.0
            }
        };
        let mut reasons = Vec::new();
        let mut contradicted = false;
        let mut evidence_at = primary;

        // Quantities.
        // Claim quantities no judged passage states (slices of the claim).
        let mut missing: Vec<&str> = Vec::new();
        if cfg.check_quantities {
            for (ci, cq) in info.quants.iter().enumerate() {
                if qunion.contains(ci) {
                    // Stated: check bounds against the stating quantity in the windows.
                    if let Some((p, eq)) =
                        self.find_in_windows(passages, scratch, set, |eq| quantity::states(cq, eq))
                        && quantity::bounds_conflict(cq, eq)
                        && align(&scratch.windows[p]) >= cfg.contradiction_min_alignment
                    {
                        if detail {
                            reasons.push(Reason::BoundMismatch {
                                claim: bound_text(info.text, cq),
                                evidence: bound_text(passages[p].text, eq),
                            });
                        }
                        contradicted = true;
                        evidence_at = p;
                    }
                    continue;
                }
                if q_anywhere.contains(ci) {
                    continue; // stated elsewhere in a cited passage: lenient
                }
                // Another value for the same kind of thing: prefer the same unit, the window,
                // and evidence quantities that no other claim quantity states.
                let unclaimed =
                    |eq: &Quantity| !info.quants.iter().any(|o| quantity::states(o, eq));
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
                    Some((p, eq))
                        if align(&scratch.windows[p]) >= cfg.contradiction_min_alignment =>
                    {
                        if detail {
                            let c = cq.text(info.text).to_owned();
                            let e = eq.text(passages[p].text).to_owned();
                            reasons.push(if matches!(cq.unit, Unit::Weekday | Unit::MonthName) {
                                Reason::DateMismatch {
                                    claim: c,
                                    evidence: e,
                                }
                            } else {
                                Reason::NumberMismatch {
                                    claim: c,
                                    evidence: e,
                                }
                            });
                        }
                        contradicted = true;
                        evidence_at = p;
                    }
                    _ => missing.push(cq.text(info.text)),
                }
            }
        }

        // Content terms.
        let mut missing_weight = 0.0f32;
        // The claim terms no window states.
        let mut missing_terms = Bits::default();
        let mut anywhere = Bits::default();
        let mut core = Bits::default();
        let mut weak = Bits::default();
        for &p in set {
            anywhere.union_with(&scratch.anywhere_t[p]);
            core.union_with(&scratch.windows[p].core);
            weak.union_with(&scratch.windows[p].pmask);
        }
        for (i, t) in info.terms.iter().enumerate() {
            if t.question || core.contains(i) {
                continue;
            }
            if union.contains(i) {
                // A name or code from another sentence may be another subject (a relation the
                // passage does not state); another word joins the sentences of one subject.
                let factor = if t.flags & (CAP | text::DIGIT) != 0 {
                    cfg.adjacent_factor
                } else {
                    cfg.adjacent_word_factor
                };
                missing_weight += t.weight * factor;
            } else {
                let factor = if anywhere.contains(i) {
                    cfg.elsewhere_factor
                } else if weak.contains(i) {
                    cfg.derivational_factor
                } else {
                    1.0
                };
                missing_weight += t.weight * factor;
                missing_terms.insert(i);
            }
        }

        let pw_align = align(&pw);
        let best_sentence = best_sentence(passages, scratch, info, primary, &pw);
        if let Some(si) = best_sentence {
            let p = &passages[primary];
            let s = &p.sentences[si];
            let s_align = if info.total_weight > 0.0 {
                mask_weight(&info.terms, &scratch.masks[p.sent_base + si], false)
                    / info.total_weight
            } else {
                1.0
            };
            // Opposite words ("optional" where the sentence says "required"). A negation on
            // one side as well cancels it ("not required" for "optional").
            let antonym = if cfg.check_antonyms && pw_align >= cfg.contradiction_min_alignment {
                antonym_conflict(info, p, si)
            } else {
                None
            };
            // Another period for a repeated event ("once a month" where it says "weekly").
            let antonym = antonym.or_else(|| {
                if !cfg.check_antonyms || pw_align < cfg.contradiction_min_alignment {
                    return None;
                }
                let (c_days, c) = period(&info.tokens, info.text)?;
                let (e_days, e) = unit_tokens(p, si).find_map(|toks| period(toks, p.text))?;
                ((c_days - e_days).abs() > 0.02 * c_days.max(e_days)).then_some((c, e))
            });
            let s_neg_any = s.neg && negation_in_scope(info, p, s, cfg.negation_scope);
            if let Some((c, e)) = antonym
                && info.neg == s_neg_any
            {
                if detail {
                    reasons.push(Reason::Antonym {
                        claim: c.to_owned(),
                        evidence: e.to_owned(),
                    });
                }
                contradicted = true;
                evidence_at = primary;
            }
            // Polarity.
            if cfg.check_polarity && antonym.is_none() && s_align >= cfg.polarity_min_alignment {
                let flips = prefix_flips(info, p, s);
                let mut s_neg = s_neg_any;
                // A negated claim may merge the window's sentences: its negation may come from
                // any of them ("X aren't posted" from "X are not posted. X include ...").
                if info.neg && !s_neg {
                    s_neg = p.sentences[pw.s0..pw.s1]
                        .iter()
                        .any(|w| w.neg && negation_in_scope(info, p, w, cfg.negation_scope));
                }
                // "Won't accept it until it's listed" for "before it accepts it, it must be
                // listed": a necessary condition, stated both ways.
                let conditional = info.neg_conditional
                    && !s_neg
                    && flips == 0
                    && states_requirement(window_tokens(p, &pw), p.text);
                if (info.neg != s_neg) ^ (flips % 2 == 1) && !conditional {
                    reasons.push(Reason::Negation);
                    contradicted = true;
                    evidence_at = primary;
                }
            }
            // Exclusive restriction.
            if cfg.check_restriction
                && info.excl
                && !p.sentences[pw.s0..pw.s1].iter().any(|w| w.excl)
                && !(info.excl_conditional && states_requirement(window_tokens(p, &pw), p.text))
                && pw_align >= cfg.contradiction_min_alignment
            {
                if detail {
                    reasons.push(Reason::Restriction { cue: "only".into() });
                }
                contradicted = true;
                evidence_at = primary;
            }
            // Another entity in the same slot.
            if cfg.check_entity_slots
                && !contradicted
                && pw_align >= cfg.contradiction_min_alignment
            {
                for mi in missing_terms.iter() {
                    if info.terms[mi].weight < 1.0 || !entity_like(info, &info.terms[mi]) {
                        continue;
                    }
                    if let Some(sub) =
                        slot_substitute(info, &info.terms[mi], p, s, cfg.slot_lookahead)
                    {
                        if detail {
                            let t = &info.terms[mi];
                            reasons.push(Reason::EntityMismatch {
                                claim: info.text[t.start as usize..t.end as usize].to_owned(),
                                evidence: sub.to_owned(),
                            });
                        }
                        contradicted = true;
                        break;
                    }
                }
            }
            // A property of another list item or table row ("Synthetics handles log management"
            // where the list gives log management to Logs).
            if cfg.check_entity_slots
                && !contradicted
                && pw_align >= cfg.contradiction_min_alignment
                && let Some((c, e)) = list_mixup(info, p)
            {
                if detail {
                    reasons.push(Reason::ListMixup {
                        claim: c.to_owned(),
                        evidence: e.to_owned(),
                    });
                }
                contradicted = true;
            }
            // Another agent for the same action ("Neil Gaiman directed" vs "directed by Robert
            // Zemeckis").
            if cfg.check_entity_slots
                && !contradicted
                && pw_align >= cfg.contradiction_min_alignment
                && let Some((c, e)) = agent_conflict(info, p, window_tokens(p, &pw))
            {
                if detail {
                    reasons.push(Reason::EntityMismatch {
                        claim: c.to_owned(),
                        evidence: e.to_owned(),
                    });
                }
                contradicted = true;
            }
        }

        let strong_missing = missing_terms.iter().any(|i| {
            let t = &info.terms[i];
            t.flags & (CAP | text::DIGIT) != 0
                && t.start > first_content_start(info)
                && !anywhere.contains(i)
        });
        let mut unsupported = false;
        if (missing_weight >= cfg.missing_weight_threshold
            && (missing_weight >= cfg.missing_fraction * info.new_weight || strong_missing))
            || !missing.is_empty()
        {
            if detail {
                let mut list: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
                for i in missing_terms.iter() {
                    let t = &info.terms[i];
                    list.push(info.text[t.start as usize..t.end as usize].to_owned());
                }
                reasons.push(Reason::Missing(list));
            }
            unsupported = true;
        }
        if union.is_empty() && qunion.is_empty() && info.total_weight > 0.0 {
            reasons.push(Reason::NoAlignment);
            unsupported = true;
        }
        let verdict = if contradicted {
            Verdict::Contradicted
        } else if unsupported {
            Verdict::Unsupported
        } else {
            Verdict::Supported
        };
        let evidence = if scratch.windows[evidence_at].score > 0.0 {
            Some((evidence_at, scratch.windows[evidence_at].clone()))
        } else {
            None
        };
        Assessment {
            verdict,
            reasons,
            evidence,
            contributing,
        }
    }

    /// The best-aligned sentence (claim quantities stated first, then term weight) of the
    /// passages `set` that holds a quantity satisfying `pred`.
    pub(super) fn find_in_aligned<'p, F: Fn(&Quantity) -> bool>(
        &self,
        passages: &'p [Passage<'_>],
        scratch: &Scratch,
        info: &ClaimInfo<'_>,
        set: &[usize],
        pred: F,
    ) -> Option<(usize, &'p Quantity)> {
        let mut best: Option<(usize, f32, usize, &'p Quantity)> = None;
        for &p in set {
            let pass = &passages[p];
            for (si, s) in pass.sentences.iter().enumerate() {
                let mask = &scratch.masks[pass.sent_base + si];
                let qmask = &scratch.qmasks[pass.sent_base + si];
                if mask.is_empty() && qmask.is_empty() {
                    continue;
                }
                let Some(q) = pass.quants[s.q_lo as usize..s.q_hi as usize]
                    .iter()
                    .find(|q| pred(q))
                else {
                    continue;
                };
                let key = (qmask.len(), mask_weight(&info.terms, mask, false));
                if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                    best = Some((key.0, key.1, p, q));
                }
            }
        }
        best.map(|(_, _, p, q)| (p, q))
    }

    pub(super) fn find_in_windows<'p, F: Fn(&Quantity) -> bool>(
        &self,
        passages: &'p [Passage<'_>],
        scratch: &Scratch,
        set: &[usize],
        pred: F,
    ) -> Option<(usize, &'p Quantity)> {
        // Best-aligned window first (a stable sort: ties keep `set` order). Most claims cite
        // one passage: nothing to sort.
        let sorted: Vec<usize>;
        let order: &[usize] = if set.len() < 2 {
            set
        } else {
            let mut v = set.to_vec();
            v.sort_by(|a, b| {
                scratch.windows[*b]
                    .score
                    .total_cmp(&scratch.windows[*a].score)
            });
            sorted = v;
            &sorted
        };
        for &p in order {
            let w = &scratch.windows[p];
            let pass = &passages[p];
            if w.s1 == 0 {
                continue;
            }
            let lo = pass.sentences[w.s0].q_lo as usize;
            let hi = pass.sentences[w.s1 - 1].q_hi as usize;
            if let Some(q) = pass.quants[lo..hi].iter().find(|q| pred(q)) {
                return Some((p, q));
            }
        }
        None
    }
}
