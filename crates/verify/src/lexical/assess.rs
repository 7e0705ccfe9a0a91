//! Aligning a claim with the passages it cites, and judging it.

use crate::bits::Bits;
use crate::{Claim, Judgement, Reason, Verdict, Verifier};
use groundcite_text::quantity::{self, Quantity};
use groundcite_text::{self as text, CAP, Token};
use std::ops::Range;

use super::LexicalVerifier;
use super::analysis::*;
use super::rules::*;

impl Verifier for LexicalVerifier {
    /// `stop()` is asked before each claim.
    fn verify_until(
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
            sentence_terms: Vec::with_capacity(sentences_hint),
            sentence_quantities: Vec::with_capacity(sentences_hint),
            windows: vec![Window::default(); analysed.len()],
            passage_quantities: vec![Bits::default(); analysed.len()],
            passage_terms: vec![Bits::default(); analysed.len()],
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
}

impl LexicalVerifier {
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
                    let weight = mask_weight(&info.terms, &w.terms, true);
                    if w.quantities.is_empty() && weight < cfg.idle_min_weight {
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
                scratch.sentence_terms[p.sent_base + si] = mask;
                scratch.sentence_quantities[p.sent_base + si] = qmask;
            }
            if judged.contains(&pi) {
                for i in seen.iter() {
                    df[i] += 1;
                }
            }
            scratch.passage_quantities[pi] = anywhere;
            scratch.passage_terms[pi] = seen;
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
            for first in 0..ns {
                let mut terms = Bits::default();
                let mut quantities = Bits::default();
                // The weight of `terms`, recomputed only when a sentence adds terms.
                let mut weight = 0.0;
                for end in first + 1..=(first + cfg.max_window_sentences.max(1)).min(ns) {
                    let added = &scratch.sentence_terms[p.sent_base + end - 1];
                    if !added.is_empty() {
                        terms.union_with(added);
                        weight = mask_weight(&info.terms, &terms, false);
                    }
                    quantities.union_with(&scratch.sentence_quantities[p.sent_base + end - 1]);
                    let score = weight + quantities.len() as f32 * cfg.quantity_weight
                        - cfg.window_sentence_penalty * (end - first - 1) as f32;
                    if score > best_score + 1e-6 {
                        best_score = score;
                        best = Window {
                            first,
                            end,
                            core: Bits::default(),
                            terms: terms.clone(),
                            weak_terms: Bits::default(),
                            quantities: quantities.clone(),
                            score,
                        };
                    }
                }
            }
            let base = p.sent_base;
            // Weak (derivational) matches: needed for the best window only.
            best.weak_terms.clear();
            for s in &p.sentences[best.first..best.end] {
                for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
                    if let Some(weak) = info.pre_index.get(&tok.pre) {
                        let mut strong = Bits::default();
                        add_token_terms(info, tok, &mut strong);
                        weak.add_missing_to(&strong, &mut best.weak_terms);
                    }
                }
            }
            // The best-aligned sentence, read with its lead-in or table header.
            let unit = |k: usize| {
                let mut m = scratch.sentence_terms[base + k].clone();
                if let Some(l) = p.sentences[k].lead {
                    m.union_with(&scratch.sentence_terms[base + l as usize]);
                }
                m
            };
            best.core = (best.first..best.end)
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
            stated.union_with(&scratch.windows[p].quantities);
            stated.union_with(&scratch.passage_quantities[p]);
        }
        (0..info.quants.len()).all(|i| stated.contains(i))
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
                let mask = &scratch.sentence_terms[pass.sent_base + si];
                let qmask = &scratch.sentence_quantities[pass.sent_base + si];
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
            if w.end == 0 {
                continue;
            }
            let lo = pass.sentences[w.first].q_lo as usize;
            let hi = pass.sentences[w.end - 1].q_hi as usize;
            if let Some(q) = pass.quants[lo..hi].iter().find(|q| pred(q)) {
                return Some((p, q));
            }
        }
        None
    }
}
