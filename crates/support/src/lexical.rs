//! The default verifier: lexical alignment, quantities, polarity, restriction and entity slots.

use groundcite_text::quantity::{self, Quantity, Unit};
use groundcite_text::{
    self as text, CAP, COMMON, EXCL, NEG_CUE, NEG_PREFIX, QUANT, STOP, Token, marker_ranges,
};
use crate::{Claim, Evidence, Judgement, Reason, SupportConfig, Verdict, Verifier};

/// The default, deterministic verifier. See the crate documentation for its rules.
#[derive(Debug, Clone, Default)]
pub struct LexicalVerifier {
    /// Thresholds and switches.
    pub config: SupportConfig,
}

impl LexicalVerifier {
    /// A verifier with the given configuration.
    pub fn new(config: SupportConfig) -> LexicalVerifier {
        LexicalVerifier { config }
    }
}

/// Maximum number of claim + question terms considered (bits of a `u64` mask).
const MAX_TERMS: usize = 64;
/// Maximum number of claim quantities considered (bits of a `u32` mask).
const MAX_QUANTS: usize = 32;

struct Sentence {
    start: u32,
    end: u32,
    tok_lo: u32,
    tok_hi: u32,
    q_lo: u32,
    q_hi: u32,
    neg: bool,
    excl: bool,
    /// A token with a negating prefix ("unpaid"): Rule "polarity" may flip.
    neg_prefix: bool,
}

struct Passage<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    sentences: Vec<Sentence>,
    quants: Vec<Quantity>,
    /// Index of this passage's first sentence in the flat per-claim scratch arrays.
    sent_base: usize,
    /// Passages no claim cites are analysed only when needed (Rule 4, uncited claims).
    analysed: bool,
}

impl<'a> Passage<'a> {
    fn pending(text: &'a str) -> Passage<'a> {
        Passage {
            text,
            tokens: Vec::new(),
            sentences: Vec::new(),
            quants: Vec::new(),
            sent_base: 0,
            analysed: false,
        }
    }
}

/// "not to exceed", "no more than", "no later than": bounds, not negations of the claim.
fn clear_bound_negations(tokens: &mut [Token], text: &str) {
    for i in 0..tokens.len() {
        if tokens[i].flags & NEG_CUE != 0 && is_bound_negation(tokens, text, i) {
            tokens[i].flags &= !NEG_CUE;
        }
    }
}

/// Whether the negation cue at `i` starts a bound ("no more", "not to exceed").
fn is_bound_negation(tokens: &[Token], text: &str, i: usize) -> bool {
    let next = |k: usize| tokens.get(i + k).map_or("", |t| t.text(text));
    let n1 = next(1);
    [
        "more", "less", "fewer", "later", "earlier", "longer", "greater",
    ]
    .iter()
    .any(|w| n1.eq_ignore_ascii_case(w))
        || (n1.eq_ignore_ascii_case("to") && next(2).eq_ignore_ascii_case("exceed"))
}

/// Analyse the passages in `which` (0-based) that are still pending.
fn ensure_analysed(
    passages: &mut [Passage<'_>],
    scratch: &mut Scratch,
    which: impl Iterator<Item = usize>,
) {
    for k in which {
        if passages[k].analysed {
            continue;
        }
        let base = scratch.masks.len();
        let a = analyse_passage(passages[k].text, base, &mut scratch.spans);
        let n = a.sentences.len();
        scratch.masks.resize(base + n, 0);
        scratch.qmasks.resize(base + n, 0);
        passages[k] = a;
    }
}

/// `spans`: a buffer for the sentence spans (reused across passages).
fn analyse_passage<'a>(
    text: &'a str,
    sent_base: usize,
    spans: &mut Vec<(u32, u32)>,
) -> Passage<'a> {
    spans.clear();
    text::sentence_spans(text, spans);
    let mut tokens = Vec::with_capacity(text.len() / 5 + 1);
    text::tokenize(text, &[], false, &mut tokens);
    let mut quants = Vec::with_capacity(8);
    let mut sentences = Vec::with_capacity(spans.len());
    let mut t = 0usize;
    // One pass over the tokens: bound negations ("no more than"), negation cues inside names,
    // and the flags each sentence needs.
    for &(start, end) in spans.iter() {
        while t < tokens.len() && tokens[t].start < start {
            clear_bound_negation_at(&mut tokens, text, t);
            t += 1;
        }
        let lo = t;
        let mut any = 0u16;
        for tok in &tokens[lo..] {
            if tok.end > end {
                break;
            }
            any |= tok.flags;
            t += 1;
        }
        if any & NEG_CUE != 0 {
            // The sentence has negation cues: some are not negations.
            any = 0;
            for k in lo..t {
                let mut f = tokens[k].flags;
                if f & NEG_CUE != 0 {
                    if is_bound_negation(&tokens, text, k) {
                        f &= !NEG_CUE;
                    }
                    // A capitalised "Never"/"No" inside a sentence is part of a name ("Never
                    // Shout Never").
                    if k > lo && f & (NEG_CUE | CAP) == (NEG_CUE | CAP) {
                        f &= !NEG_CUE;
                    }
                    tokens[k].flags = f;
                }
                any |= f;
            }
        }
        let toks = &tokens[lo..t];
        let q_lo = quants.len();
        if any & (QUANT | text::TIME) != 0 {
            quantity::extract(text, toks, &mut quants);
        }
        sentences.push(Sentence {
            start,
            end,
            tok_lo: lo as u32,
            tok_hi: t as u32,
            q_lo: q_lo as u32,
            q_hi: quants.len() as u32,
            neg: any & NEG_CUE != 0,
            excl: any & EXCL != 0,
            neg_prefix: any & NEG_PREFIX != 0,
        });
    }
    Passage {
        text,
        tokens,
        sentences,
        quants,
        sent_base,
        analysed: true,
    }
}

/// `clear_bound_negations` for token `i` (each token is visited once, in order).
#[inline]
fn clear_bound_negation_at(tokens: &mut [Token], text: &str, i: usize) {
    if tokens[i].flags & NEG_CUE != 0 && is_bound_negation(tokens, text, i) {
        tokens[i].flags &= !NEG_CUE;
    }
}

#[derive(Clone, Copy)]
struct Term {
    key: u64,
    alt: u64,
    pre: u64,
    flags: u16,
    weight: f32,
    start: u32,
    end: u32,
    /// A question term (alignment only).
    question: bool,
    /// A claim term the question also contains (restated, not new).
    given: bool,
}

struct ClaimInfo<'c> {
    text: &'c str,
    /// Byte ranges of the claim's markers (not words).
    skip: Vec<(usize, usize)>,
    tokens: Vec<Token>,
    terms: Vec<Term>,
    quants: Vec<Quantity>,
    neg: bool,
    excl: bool,
    /// Term keys and prefix-stripped keys.
    index: TermIndex,
    /// Derivational (first letters) keys.
    pre_index: TermIndex,
    /// Sum of the weights of the claim's own terms.
    claim_weight: f32,
    /// Sum of the weights of all terms (claim + question).
    total_weight: f32,
    /// Sum of the weights of the claim's terms that the question does not contain.
    new_weight: f32,
}

/// The buffers of a claim's analysis, reused from one claim to the next.
#[derive(Default)]
struct ClaimBufs {
    skip: Vec<(usize, usize)>,
    tokens: Vec<Token>,
    quants: Vec<Quantity>,
    terms: Vec<Term>,
    slots: Vec<(u64, u64)>,
    pre_slots: Vec<(u64, u64)>,
}

impl ClaimInfo<'_> {
    /// Gives the buffers back for the next claim.
    fn into_bufs(self) -> ClaimBufs {
        ClaimBufs {
            skip: self.skip,
            tokens: self.tokens,
            quants: self.quants,
            terms: self.terms,
            slots: self.index.slots,
            pre_slots: self.pre_index.slots,
        }
    }
}

/// Exact map from a key to the mask of claim terms having it (open addressing, at most half
/// full: at most 64 terms with two keys each): one probe per passage token instead of a loop
/// over the terms. Sized to the claim, so that a short claim clears a small table.
struct TermIndex {
    /// Key and mask per slot (key 0: empty).
    slots: Vec<(u64, u64)>,
    bits: u32,
    /// A bit per key present, chosen by key bits 1 to 8 (bit 0 is always set): most passage
    /// tokens are not claim terms, and this answers without probing.
    filter: [u64; 4],
}

impl TermIndex {
    /// A table for up to `entries` keys, in `slots` (a buffer to reuse).
    fn with_entries(entries: usize, mut slots: Vec<(u64, u64)>) -> TermIndex {
        let size = (entries * 2).next_power_of_two().max(8);
        slots.clear();
        slots.resize(size, (0, 0));
        TermIndex {
            slots,
            bits: size.trailing_zeros(),
            filter: [0; 4],
        }
    }
    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key >> (64 - self.bits)) as usize
    }
    fn insert(&mut self, key: u64, bit: u64) {
        if key == 0 {
            return;
        }
        self.filter[(key >> 7) as usize & 3] |= 1 << ((key >> 1) & 63);
        let m = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let s = &mut self.slots[i];
            if s.0 == key || s.0 == 0 {
                s.0 = key;
                s.1 |= bit;
                return;
            }
            i = (i + 1) & m;
        }
    }
    #[inline]
    fn get(&self, key: u64) -> u64 {
        if self.filter[(key >> 7) as usize & 3] & (1 << ((key >> 1) & 63)) == 0 {
            return 0;
        }
        let m = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let (k, mask) = self.slots[i];
            if k == key {
                return mask;
            }
            if k == 0 {
                return 0;
            }
            i = (i + 1) & m;
        }
    }
}

fn analyse_claim<'c>(
    text: &'c str,
    question_tokens: &[Token],
    cfg: &SupportConfig,
    bufs: ClaimBufs,
) -> ClaimInfo<'c> {
    let ClaimBufs {
        mut skip,
        mut tokens,
        mut quants,
        mut terms,
        slots,
        pre_slots,
    } = bufs;
    skip.clear();
    tokens.clear();
    quants.clear();
    terms.clear();
    marker_ranges(text, &mut skip);
    tokens.reserve(text.len() / 5 + 1);
    text::tokenize(text, &skip, true, &mut tokens);
    clear_bound_negations(&mut tokens, text);
    // A leading "Yes," / "No," answers the question; it is not a negation of the claim.
    let mut first = 0;
    if let Some(t) = tokens.first() {
        let w = t.text(text);
        if w.eq_ignore_ascii_case("yes") || w.eq_ignore_ascii_case("no") {
            first = 1;
        }
    }
    quantity::extract(text, &tokens[first.min(tokens.len())..], &mut quants);
    quants.truncate(MAX_QUANTS);
    let mut neg = false;
    let mut excl = false;
    for (i, t) in tokens.iter().enumerate().skip(first) {
        if t.flags & NEG_CUE != 0 && (i == first || t.flags & CAP == 0) {
            neg = true;
        }
        if t.flags & EXCL != 0 && !(i > 0 && tokens[i - 1].flags & NEG_CUE != 0) {
            excl = true;
        }
        let adverbial = t.flags & QUANT != 0
            && !quants.iter().any(|q| t.start >= q.start && t.end <= q.end)
            && t.flags & text::DIGIT == 0;
        if (t.flags & STOP != 0 || (t.flags & QUANT != 0 && !adverbial)) || terms.len() >= MAX_TERMS
        {
            continue;
        }
        if terms.iter().any(|x| x.key == t.key)
            || quants.iter().any(|q| t.start >= q.start && t.end <= q.end)
        {
            continue;
        }
        let weight = if t.flags & COMMON != 0 {
            cfg.common_word_weight
        } else {
            1.0
        };
        terms.push(Term {
            key: t.key,
            alt: t.alt,
            pre: t.pre,
            flags: t.flags,
            weight,
            start: t.start,
            end: t.end,
            question: false,
            given: question_tokens.iter().any(|q| q.key == t.key),
        });
    }
    if !question_tokens.is_empty() {
        for t in question_tokens {
            if t.flags & (STOP | QUANT) != 0 || terms.len() >= MAX_TERMS {
                continue;
            }
            if terms.iter().any(|x| x.key == t.key) {
                continue;
            }
            let w = if t.flags & COMMON != 0 {
                cfg.common_word_weight
            } else {
                1.0
            };
            terms.push(Term {
                key: t.key,
                alt: t.alt,
                pre: 0,
                flags: t.flags,
                weight: w * cfg.question_term_weight,
                start: 0,
                end: 0,
                question: true,
                given: false,
            });
        }
    }
    let mut index = TermIndex::with_entries(2 * terms.len(), slots);
    let mut pre_index = TermIndex::with_entries(terms.len(), pre_slots);
    for (i, t) in terms.iter().enumerate() {
        index.insert(t.key, 1 << i);
        index.insert(t.alt, 1 << i);
        pre_index.insert(t.pre, 1 << i);
    }
    let claim_weight = terms.iter().filter(|t| !t.question).map(|t| t.weight).sum();
    let new_weight = new_weight(&terms);
    let total_weight = terms.iter().map(|t| t.weight).sum();
    ClaimInfo {
        text,
        skip,
        tokens,
        terms,
        quants,
        neg,
        excl,
        index,
        pre_index,
        claim_weight,
        total_weight,
        new_weight,
    }
}

fn new_weight(terms: &[Term]) -> f32 {
    terms
        .iter()
        .filter(|t| !t.question && !t.given)
        .map(|t| t.weight)
        .sum()
}

/// The claim terms a passage token matches (by its key or its prefix-stripped key).
#[inline]
fn token_mask(info: &ClaimInfo<'_>, tok: &Token) -> u64 {
    info.index.get(tok.key)
        | if tok.alt != 0 {
            info.index.get(tok.alt)
        } else {
            0
        }
}

#[inline]
fn term_matches(term: &Term, tok: &Token) -> bool {
    tok.key == term.key
        || (term.alt != 0 && tok.key == term.alt)
        || (tok.alt != 0 && tok.alt == term.key)
}

#[derive(Clone, Copy, Default)]
struct Window {
    s0: usize,
    s1: usize,
    /// Terms of the window's best-aligned sentence.
    core: u64,
    mask: u64,
    /// Terms matched only weakly (derivational prefix) in the window.
    pmask: u64,
    qmask: u32,
    score: f32,
}

struct Scratch {
    masks: Vec<u64>,
    qmasks: Vec<u32>,
    windows: Vec<Window>,
    /// Per passage: claim quantities stated anywhere in the passage.
    anywhere_q: Vec<u32>,
    /// Per passage: claim terms found anywhere in the passage.
    anywhere_t: Vec<u64>,
    /// Sentence spans of the passage being analysed.
    spans: Vec<(u32, u32)>,
    /// The claim buffers, between claims.
    claim: ClaimBufs,
}

/// The indices of the set bits of `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(i)
    })
}

fn mask_weight(terms: &[Term], mask: u64, claim_only: bool) -> f32 {
    let mut w = 0.0;
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        if !claim_only || !terms[i].question {
            w += terms[i].weight;
        }
    }
    w
}

/// What one set of passages says about a claim.
struct Assessment {
    verdict: Verdict,
    reasons: Vec<Reason>,
    /// Passage index (0-based) and window for the evidence.
    evidence: Option<(usize, Window)>,
    /// Passages whose window contributed claim terms or quantities.
    contributing: Vec<usize>,
}

impl Verifier for LexicalVerifier {
    fn verify(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
    ) -> Vec<Judgement> {
        let mut analysed: Vec<Passage<'_>> = passages.iter().map(|p| Passage::pending(p)).collect();
        // Room for the sentences of every passage (about one per 40 bytes), so that analysing
        // passages does not reallocate.
        let sentences_hint = passages.iter().map(|p| p.len() / 40 + 2).sum::<usize>();
        let mut scratch = Scratch {
            masks: Vec::with_capacity(sentences_hint),
            qmasks: Vec::with_capacity(sentences_hint),
            windows: vec![Window::default(); analysed.len()],
            anywhere_q: vec![0; analysed.len()],
            anywhere_t: vec![0; analysed.len()],
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
            .map(|c| self.judge(&question_tokens, &mut analysed, c, &mut scratch))
            .collect()
    }
}

impl LexicalVerifier {
    fn judge(
        &self,
        question_tokens: &[Token],
        all_passages: &mut [Passage<'_>],
        claim: &Claim<'_>,
        scratch: &mut Scratch,
    ) -> Judgement {
        let bufs = std::mem::take(&mut scratch.claim);
        let mut info = analyse_claim(claim.text, question_tokens, &self.config, bufs);
        let judgement = self.judge_claim(all_passages, &mut info, claim, scratch);
        scratch.claim = info.into_bufs();
        judgement
    }

    fn judge_claim(
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
                    let weight = mask_weight(&info.terms, w.mask, true);
                    if w.qmask == 0 && weight < cfg.idle_min_weight {
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
    fn match_all(
        &self,
        passages: &[Passage<'_>],
        info: &mut ClaimInfo<'_>,
        scratch: &mut Scratch,
        judged: &[usize],
        damp: bool,
        which: impl Fn(usize) -> bool,
    ) {
        let cfg = &self.config;
        let mut df = [0u8; MAX_TERMS];
        for (pi, p) in passages.iter().enumerate() {
            if !which(pi) {
                continue;
            }
            let mut seen = 0u64;
            let mut anywhere = 0u32;
            for (si, s) in p.sentences.iter().enumerate() {
                let mut mask = 0u64;
                for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
                    mask |= token_mask(info, tok);
                }
                let mut qmask = 0u32;
                for (ci, cq) in info.quants.iter().enumerate() {
                    if p.quants[s.q_lo as usize..s.q_hi as usize]
                        .iter()
                        .any(|eq| quantity::states(cq, eq))
                    {
                        qmask |= 1 << ci;
                    }
                }
                seen |= mask;
                anywhere |= qmask;
                scratch.masks[p.sent_base + si] = mask;
                scratch.qmasks[p.sent_base + si] = qmask;
            }
            scratch.anywhere_q[pi] = anywhere;
            scratch.anywhere_t[pi] = seen;
            if !judged.contains(&pi) {
                continue;
            }
            let mut m = seen;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                df[i] = df[i].saturating_add(1);
            }
        }
        let n = judged.len();
        if damp && n >= cfg.damping_min_passages {
            let mut changed = false;
            for (i, t) in info.terms.iter_mut().enumerate() {
                if (df[i] as usize) * 2 > n && t.flags & CAP == 0 {
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
                let mut mask = 0u64;
                let mut qmask = 0u32;
                // The weight of `mask`, recomputed only when a sentence adds terms.
                let mut weight = 0.0;
                for s1 in s0 + 1..=(s0 + cfg.max_window_sentences.max(1)).min(ns) {
                    let added = scratch.masks[p.sent_base + s1 - 1] & !mask;
                    if added != 0 {
                        mask |= added;
                        weight = mask_weight(&info.terms, mask, false);
                    }
                    qmask |= scratch.qmasks[p.sent_base + s1 - 1];
                    let score = weight + qmask.count_ones() as f32 * cfg.quantity_weight
                        - cfg.window_sentence_penalty * (s1 - s0 - 1) as f32;
                    if score > best_score + 1e-6 {
                        best_score = score;
                        best = Window {
                            s0,
                            s1,
                            core: 0,
                            mask,
                            pmask: 0,
                            qmask,
                            score,
                        };
                    }
                }
            }
            let base = p.sent_base;
            // Weak (derivational) matches: needed for the best window only.
            best.pmask = 0;
            for s in &p.sentences[best.s0..best.s1] {
                for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
                    if tok.pre != 0 {
                        best.pmask |= info.pre_index.get(tok.pre) & !token_mask(info, tok);
                    }
                }
            }
            best.core = (best.s0..best.s1)
                .map(|k| scratch.masks[base + k])
                .max_by(|a, b| {
                    (
                        mask_weight(&info.terms, *a, true),
                        mask_weight(&info.terms, *a, false),
                    )
                        .partial_cmp(&(
                            mask_weight(&info.terms, *b, true),
                            mask_weight(&info.terms, *b, false),
                        ))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .unwrap_or(0);
            scratch.windows[pi] = best;
        }
    }

    /// Whether the passages `set` state every claim quantity somewhere. Without that, `assess`
    /// of `set` cannot come out supported (a quantity is then missing or contradicted), so a
    /// search for supporting passages skips the assessment.
    fn quantities_stated(&self, info: &ClaimInfo<'_>, scratch: &Scratch, set: &[usize]) -> bool {
        if !self.config.check_quantities || info.quants.is_empty() {
            return true;
        }
        let all = u32::MAX >> (32 - info.quants.len());
        let stated = set.iter().fold(0u32, |m, &p| {
            m | scratch.windows[p].qmask | scratch.anywhere_q[p]
        });
        stated & all == all
    }

    /// Judge the claim against the passages `set` (0-based indices) taken together.
    ///
    /// `detail`: also write the reasons. Without it the verdict, evidence and contributing
    /// passages are the same; only the reasons are left out (a search over candidate passages
    /// needs no words; a supported assessment has no reasons either way).
    fn assess(
        &self,
        passages: &[Passage<'_>],
        info: &ClaimInfo<'_>,
        scratch: &Scratch,
        set: &[usize],
        detail: bool,
    ) -> Assessment {
        let cfg = &self.config;
        let mut union = 0u64;
        let mut qunion = 0u32;
        let mut q_anywhere = 0u32;
        let mut primary: Option<usize> = None;
        let mut contributing = Vec::new();
        for &p in set {
            let w = &scratch.windows[p];
            union |= w.mask;
            qunion |= w.qmask;
            q_anywhere |= scratch.anywhere_q[p];
            if w.mask != 0 || w.qmask != 0 {
                let own = mask_weight(&info.terms, w.mask, true);
                if own > 0.0 || w.qmask != 0 {
                    contributing.push(p);
                }
            }
            if primary.is_none_or(|b| w.score > scratch.windows[b].score) {
                primary = Some(p);
            }
        }
        let primary = primary.unwrap_or(0);
        let pw = scratch.windows[primary];
        let align = |w: &Window| {
            if info.total_weight > 0.0 {
                mask_weight(&info.terms, w.mask, false) / info.total_weight
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
                let bit = 1u32 << ci;
                if qunion & bit != 0 {
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
                if q_anywhere & bit != 0 {
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
        // Bits of the claim terms no window states (terms are at most 64).
        let mut missing_terms = 0u64;
        let mut anywhere = 0u64;
        let mut core = 0u64;
        let mut weak = 0u64;
        for &p in set {
            anywhere |= scratch.anywhere_t[p];
            core |= scratch.windows[p].core;
            weak |= scratch.windows[p].pmask;
        }
        for (i, t) in info.terms.iter().enumerate() {
            let bit = 1u64 << i;
            if t.question || core & bit != 0 {
                continue;
            }
            if union & bit != 0 {
                missing_weight += t.weight * cfg.adjacent_factor;
            } else {
                let factor = if anywhere & bit != 0 {
                    cfg.elsewhere_factor
                } else if weak & bit != 0 {
                    cfg.derivational_factor
                } else {
                    1.0
                };
                missing_weight += t.weight * factor;
                missing_terms |= bit;
            }
        }

        let pw_align = align(&pw);
        let best_sentence = best_sentence(passages, scratch, info, primary, &pw);
        if let Some(si) = best_sentence {
            let p = &passages[primary];
            let s = &p.sentences[si];
            let s_align = if info.total_weight > 0.0 {
                mask_weight(&info.terms, scratch.masks[p.sent_base + si], false) / info.total_weight
            } else {
                1.0
            };
            // Polarity.
            if cfg.check_polarity && s_align >= cfg.polarity_min_alignment {
                let flips = prefix_flips(info, p, s);
                let s_neg = s.neg && negation_in_scope(info, p, s, cfg.negation_scope);
                if (info.neg != s_neg) ^ (flips % 2 == 1) {
                    reasons.push(Reason::Negation);
                    contradicted = true;
                    evidence_at = primary;
                }
            }
            // Exclusive restriction.
            if cfg.check_restriction
                && info.excl
                && !s.excl
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
                for mi in bits(missing_terms) {
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
            // Another agent for the same action ("Neil Gaiman directed" vs "directed by Robert
            // Zemeckis").
            if cfg.check_entity_slots
                && !contradicted
                && pw_align >= cfg.contradiction_min_alignment
            {
                let lo = p.sentences[pw.s0].tok_lo as usize;
                let hi = p.sentences[pw.s1 - 1].tok_hi as usize;
                if let Some((c, e)) = agent_conflict(info, p, &p.tokens[lo..hi]) {
                    if detail {
                        reasons.push(Reason::EntityMismatch {
                            claim: c.to_owned(),
                            evidence: e.to_owned(),
                        });
                    }
                    contradicted = true;
                }
            }
        }

        let strong_missing = bits(missing_terms).any(|i| {
            let t = &info.terms[i];
            t.flags & (CAP | text::DIGIT) != 0
                && t.start > first_content_start(info)
                && anywhere & (1 << i) == 0
        });
        let mut unsupported = false;
        if (missing_weight >= cfg.missing_weight_threshold
            && (missing_weight >= cfg.missing_fraction * info.new_weight || strong_missing))
            || !missing.is_empty()
        {
            if detail {
                let mut list: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
                for i in bits(missing_terms) {
                    let t = &info.terms[i];
                    list.push(info.text[t.start as usize..t.end as usize].to_owned());
                }
                reasons.push(Reason::Missing(list));
            }
            unsupported = true;
        }
        if union == 0 && qunion == 0 && info.total_weight > 0.0 {
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
            Some((evidence_at, scratch.windows[evidence_at]))
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
    fn find_in_aligned<'p, F: Fn(&Quantity) -> bool>(
        &self,
        passages: &'p [Passage<'_>],
        scratch: &Scratch,
        info: &ClaimInfo<'_>,
        set: &[usize],
        pred: F,
    ) -> Option<(usize, &'p Quantity)> {
        let mut best: Option<(u32, f32, usize, &'p Quantity)> = None;
        for &p in set {
            let pass = &passages[p];
            for (si, s) in pass.sentences.iter().enumerate() {
                let mask = scratch.masks[pass.sent_base + si];
                let qmask = scratch.qmasks[pass.sent_base + si];
                if mask == 0 && qmask == 0 {
                    continue;
                }
                let Some(q) = pass.quants[s.q_lo as usize..s.q_hi as usize]
                    .iter()
                    .find(|q| pred(q))
                else {
                    continue;
                };
                let key = (qmask.count_ones(), mask_weight(&info.terms, mask, false));
                if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                    best = Some((key.0, key.1, p, q));
                }
            }
        }
        best.map(|(_, _, p, q)| (p, q))
    }

    fn find_in_windows<'p, F: Fn(&Quantity) -> bool>(
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

/// Byte offset of the claim's first token (its capital is not a name's).
fn first_content_start(info: &ClaimInfo<'_>) -> u32 {
    info.tokens.first().map_or(0, |t| t.start)
}

fn bound_text(text: &str, q: &Quantity) -> String {
    let prefix = match q.bound {
        quantity::Bound::AtLeast => "at least ",
        quantity::Bound::AtMost => "at most ",
        quantity::Bound::Exact => "",
    };
    format!("{prefix}{}", q.text(text))
}

fn best_sentence(
    passages: &[Passage<'_>],
    scratch: &Scratch,
    info: &ClaimInfo<'_>,
    p: usize,
    w: &Window,
) -> Option<usize> {
    if w.s1 == 0 {
        return None;
    }
    let base = passages[p].sent_base;
    (w.s0..w.s1).max_by(|&a, &b| {
        let wa = mask_weight(&info.terms, scratch.masks[base + a], false)
            + scratch.qmasks[base + a].count_ones() as f32;
        let wb = mask_weight(&info.terms, scratch.masks[base + b], false)
            + scratch.qmasks[base + b].count_ones() as f32;
        // Ties go to the earlier sentence.
        wa.total_cmp(&wb).then(b.cmp(&a))
    })
}

/// Whether a negation cue of the sentence lies within `scope` tokens of a matched claim term.
fn negation_in_scope(info: &ClaimInfo<'_>, p: &Passage<'_>, s: &Sentence, scope: usize) -> bool {
    let toks = &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    toks.iter()
        .enumerate()
        .filter(|(_, t)| t.flags & NEG_CUE != 0)
        .any(|(i, _)| {
            let lo = i.saturating_sub(scope);
            let hi = (i + scope + 1).min(toks.len());
            toks[lo..hi].iter().any(|t| {
                info.terms
                    .iter()
                    .any(|term| !term.question && term_matches(term, t))
            })
        })
}

/// Claim terms matched in the sentence only through a negating prefix ("unpaid" vs "paid").
fn prefix_flips(info: &ClaimInfo<'_>, p: &Passage<'_>, s: &Sentence) -> usize {
    // A flip needs a negating prefix on one side.
    if !s.neg_prefix && !info.terms.iter().any(|t| t.flags & NEG_PREFIX != 0) {
        return 0;
    }
    let toks = &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    let mut flips = 0;
    for term in info.terms.iter().filter(|t| !t.question) {
        let mut exact = false;
        let mut flip = false;
        for tok in toks {
            if tok.key == term.key {
                exact = true;
            } else if (tok.alt == term.key && tok.flags & NEG_PREFIX != 0)
                || (term.alt != 0 && tok.key == term.alt && term.flags & NEG_PREFIX != 0)
            {
                flip = true;
            }
        }
        if flip && !exact {
            flips += 1;
        }
    }
    flips
}

/// The name (a run of capitalised tokens) that performs the action at `v`: "X directed" or
/// "directed by X". Returns the token range of the name.
fn agent_of(toks: &[Token], text: &str, v: usize) -> Option<(usize, usize)> {
    let is_name = |t: &Token| t.flags & CAP != 0 && t.flags & (STOP | QUANT) == 0;
    // Passive: "directed by Robert Zemeckis".
    if toks
        .get(v + 1)
        .is_some_and(|t| t.text(text).eq_ignore_ascii_case("by"))
    {
        let a = v + 2;
        let mut b = a;
        while b < toks.len() && is_name(&toks[b]) {
            b += 1;
        }
        if b > a {
            return Some((a, b));
        }
        return None;
    }
    // Active: "Robert Zemeckis directed" (the name right before the verb).
    if v > 0 && is_name(&toks[v - 1]) && toks[v].flags & CAP == 0 {
        let b = v;
        let mut a = v - 1;
        while a > 0 && is_name(&toks[a - 1]) {
            a -= 1;
        }
        return Some((a, b));
    }
    None
}

/// A claim action whose agent differs from the agent of the same action in the evidence.
fn agent_conflict<'c, 'p>(
    info: &ClaimInfo<'c>,
    p: &Passage<'p>,
    window: &'p [Token],
) -> Option<(&'c str, &'p str)> {
    let ct = &info.tokens;
    for (v, verb) in ct.iter().enumerate() {
        if verb.flags & (STOP | QUANT | CAP | COMMON) != 0 {
            continue;
        }
        let Some((ca, cb)) = agent_of(ct, info.text, v) else {
            continue;
        };
        let mut other = None;
        for (w, tok) in window.iter().enumerate() {
            if tok.key != verb.key {
                continue;
            }
            let Some((pa, pb)) = agent_of(window, p.text, w) else {
                continue;
            };
            let same = ct[ca..cb]
                .iter()
                .any(|c| window[pa..pb].iter().any(|t| t.key == c.key));
            if same {
                return None;
            }
            other = Some((pa, pb));
        }
        if let Some((pa, pb)) = other {
            let claim = &info.text[ct[ca].start as usize..ct[cb - 1].end as usize];
            let evidence = &p.text[window[pa].start as usize..window[pb - 1].end as usize];
            return Some((claim, evidence));
        }
    }
    None
}

/// A name (capitalised, not first word) or a list item ("badge, laptop, and tablet").
fn entity_like(info: &ClaimInfo<'_>, term: &Term) -> bool {
    let Some(idx) = info.tokens.iter().position(|t| t.start == term.start) else {
        return false;
    };
    if term.flags & CAP != 0 && idx > 0 {
        return true;
    }
    if idx == 0 {
        return false;
    }
    let prev = &info.tokens[idx - 1];
    let gap = &info.text[prev.end as usize..term.start as usize];
    let prev_word = prev.text(info.text);
    gap.contains(',')
        || prev_word.eq_ignore_ascii_case("and")
        || prev_word.eq_ignore_ascii_case("or")
}

/// If the passage sentence has another content word where the claim has `term` (same left or
/// right neighbour), return it.
fn slot_substitute<'p>(
    info: &ClaimInfo<'_>,
    term: &Term,
    p: &Passage<'p>,
    s: &Sentence,
    lookahead: usize,
) -> Option<&'p str> {
    let content: Vec<&Token> = info.tokens.iter().filter(|t| t.flags & STOP == 0).collect();
    let idx = content.iter().position(|t| t.start == term.start)?;
    let toks = &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    let in_claim = |tok: &Token| {
        info.tokens.iter().any(|c| {
            c.key == tok.key
                || (c.alt != 0 && c.alt == tok.key)
                || (tok.alt != 0 && tok.alt == c.key)
        })
    };
    let candidate = |tok: &Token| {
        tok.flags & (STOP | QUANT) == 0 && !in_claim(tok) && !text::is_common_word(tok.text(p.text))
    };
    // Left neighbour: the claim word before; the passage word after it.
    if idx > 0 {
        let left = content[idx - 1];
        if left.flags & QUANT == 0
            && let Some(pos) = toks.iter().position(|t| t.key == left.key)
            && let Some(tok) = toks[pos + 1..]
                .iter()
                .take(lookahead)
                .find(|t| t.flags & STOP == 0)
            && candidate(tok)
        {
            return Some(tok.text(p.text));
        }
    }
    if idx + 1 < content.len() {
        let right = content[idx + 1];
        if right.flags & QUANT == 0
            && let Some(pos) = toks.iter().position(|t| t.key == right.key)
            && let Some(tok) = toks[..pos]
                .iter()
                .rev()
                .take(lookahead)
                .find(|t| t.flags & STOP == 0)
            && candidate(tok)
        {
            return Some(tok.text(p.text));
        }
    }
    None
}

fn evidence(passages: &[Passage<'_>], p: usize, w: &Window) -> Evidence {
    let pass = &passages[p];
    Evidence {
        passage: p + 1,
        start: pass.sentences[w.s0].start as usize,
        end: pass.sentences[w.s1 - 1].end as usize,
    }
}
