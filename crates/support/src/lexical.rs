//! The default verifier: lexical alignment, quantities, polarity, restriction and entity slots.

use crate::bits::Bits;
use crate::lexicon;
use crate::{Claim, Evidence, Judgement, Reason, SupportConfig, Verdict, Verifier};
use groundcite_text::quantity::{self, Quantity, Unit};
use groundcite_text::{
    self as text, CAP, COMMON, EXCL, NEG_CUE, NEG_PREFIX, QUANT, STOP, TIME, Token,
};
use rustc_hash::FxHashMap;
use std::ops::Range;

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
    /// For a list item or a table row: the sentence that introduces it (the lead-in ending
    /// with ':' above the list, the table's header row), read with it as one evidence unit.
    lead: Option<u32>,
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
        || n1.eq_ignore_ascii_case("exceed")
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
        scratch.masks.resize(base + n, Bits::default());
        scratch.qmasks.resize(base + n, Bits::default());
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
            lead: None,
        });
    }
    link_lead_ins(text, &mut sentences);
    Passage {
        text,
        tokens,
        sentences,
        quants,
        sent_base,
        analysed: true,
    }
}

/// What a passage sentence is, for [`link_lead_ins`].
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    ListItem,
    TableRow,
    /// A table's `|---|---|` line.
    TableRule,
    /// Prose ending with ':' (a list's lead-in).
    LeadIn,
    Prose,
}

fn shape(sentence: &str) -> Shape {
    let t = sentence.trim();
    if t.starts_with('|') {
        if t.bytes().all(|b| matches!(b, b'|' | b'-' | b':' | b' ')) {
            Shape::TableRule
        } else {
            Shape::TableRow
        }
    } else if text::list_bullet(t).is_some() {
        Shape::ListItem
    } else if t.ends_with(':') {
        Shape::LeadIn
    } else {
        Shape::Prose
    }
}

/// Sets each list item's lead-in (the nearest sentence above it ending with ':', over other
/// items only) and each table row's header (the first row of its table).
fn link_lead_ins(text: &str, sentences: &mut [Sentence]) {
    let mut lead_in: Option<u32> = None;
    let mut header: Option<u32> = None;
    for k in 0..sentences.len() {
        let s = &sentences[k];
        match shape(&text[s.start as usize..s.end as usize]) {
            Shape::LeadIn => {
                lead_in = Some(k as u32);
                header = None;
            }
            Shape::ListItem => {
                sentences[k].lead = lead_in;
                header = None;
            }
            Shape::TableRow => match header {
                Some(h) => sentences[k].lead = Some(h),
                None => header = Some(k as u32),
            },
            Shape::TableRule => {}
            Shape::Prose => {
                lead_in = None;
                header = None;
            }
        }
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
    /// The terms of each term key and prefix-stripped key.
    index: TermIndex,
    /// The terms of each derivational (first letters) key.
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
    index: TermIndex,
    pre_index: TermIndex,
}

impl ClaimInfo<'_> {
    /// Gives the buffers back for the next claim.
    fn into_bufs(self) -> ClaimBufs {
        ClaimBufs {
            skip: self.skip,
            tokens: self.tokens,
            quants: self.quants,
            terms: self.terms,
            index: self.index,
            pre_index: self.pre_index,
        }
    }
}

/// The claim terms having each key.
type TermIndex = FxHashMap<u64, Bits>;

/// Adds term `i` under `key` (0: no key).
fn index_term(index: &mut TermIndex, key: u64, i: usize) {
    if key != 0 {
        index.entry(key).or_default().insert(i);
    }
}

/// `markers`: the byte spans of the claim's citation markers, if the caller parsed them.
fn analyse_claim<'c>(
    text: &'c str,
    markers: Option<&[Range<usize>]>,
    question_tokens: &[Token],
    cfg: &SupportConfig,
    bufs: ClaimBufs,
) -> ClaimInfo<'c> {
    let ClaimBufs {
        mut skip,
        mut tokens,
        mut quants,
        mut terms,
        mut index,
        mut pre_index,
    } = bufs;
    skip.clear();
    tokens.clear();
    quants.clear();
    terms.clear();
    // Markers and a leading list bullet are not content.
    skip.extend(text::list_bullet(text).map(|r| (r.start, r.end)));
    match markers {
        Some(spans) => skip.extend(spans.iter().map(|r| (r.start, r.end))),
        None => skip.extend(
            text::Markers::parse(text)
                .markers
                .iter()
                .map(|m| (m.start, m.end)),
        ),
    }
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
    let mut neg = false;
    let mut excl = false;
    for (i, t) in tokens.iter().enumerate().skip(first) {
        if t.flags & NEG_CUE != 0 && (i == first || t.flags & CAP == 0) {
            neg = true;
        }
        if t.flags & EXCL != 0 && !(i > 0 && tokens[i - 1].flags & NEG_CUE != 0) {
            excl = true;
        }
        // A number word outside any quantity is a word ("first", "twice"), except the pronoun
        // "one" ("one of those", "the initial one").
        let adverbial = t.flags & QUANT != 0
            && !quants.iter().any(|q| t.start >= q.start && t.end <= q.end)
            && t.flags & text::DIGIT == 0
            && !t.text(text).eq_ignore_ascii_case("one");
        // Negation cues ("shouldn't", "never") are polarity, compared by Rule 3, not content.
        if t.flags & (STOP | NEG_CUE) != 0 || (t.flags & QUANT != 0 && !adverbial) {
            continue;
        }
        if terms.iter().any(|x| x.key == t.key)
            || quants.iter().any(|q| t.start >= q.start && t.end <= q.end)
        {
            continue;
        }
        terms.push(Term {
            key: t.key,
            alt: t.alt,
            pre: t.pre,
            flags: t.flags,
            weight: term_weight(t, cfg),
            start: t.start,
            end: t.end,
            question: false,
            given: question_tokens.iter().any(|q| q.key == t.key),
        });
    }
    if !question_tokens.is_empty() {
        for t in question_tokens {
            if t.flags & (STOP | QUANT) != 0 {
                continue;
            }
            if terms.iter().any(|x| x.key == t.key) {
                continue;
            }
            terms.push(Term {
                key: t.key,
                alt: t.alt,
                pre: 0,
                flags: t.flags,
                weight: term_weight(t, cfg) * cfg.question_term_weight,
                start: 0,
                end: 0,
                question: true,
                given: false,
            });
        }
    }
    index.clear();
    pre_index.clear();
    let lexicon = cfg.check_synonyms.then(lexicon::lexicon);
    for (i, t) in terms.iter().enumerate() {
        index_term(&mut index, t.key, i);
        index_term(&mut index, t.alt, i);
        index_term(&mut pre_index, t.pre, i);
        // WordNet synonyms and derived forms of a claim word match like the word (not for
        // names, codes or the question's words).
        if let Some(lexicon) = lexicon
            && !t.question
            && t.flags & (CAP | text::DIGIT) == 0
        {
            for &k in lexicon.related(t.key) {
                index_term(&mut index, k, i);
            }
        }
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

/// The weight of a term: frequent words weigh less.
fn term_weight(t: &Token, cfg: &SupportConfig) -> f32 {
    if t.flags & COMMON != 0 {
        cfg.common_word_weight
    } else {
        1.0
    }
}

fn new_weight(terms: &[Term]) -> f32 {
    terms
        .iter()
        .filter(|t| !t.question && !t.given)
        .map(|t| t.weight)
        .sum()
}

/// Adds the claim terms a passage token matches (by its key or its prefix-stripped key).
fn add_token_terms(info: &ClaimInfo<'_>, tok: &Token, terms: &mut Bits) {
    if let Some(t) = info.index.get(&tok.key) {
        terms.union_with(t);
    }
    if tok.alt != 0
        && let Some(t) = info.index.get(&tok.alt)
    {
        terms.union_with(t);
    }
}

#[inline]
fn term_matches(term: &Term, tok: &Token) -> bool {
    tok.key == term.key
        || (term.alt != 0 && tok.key == term.alt)
        || (tok.alt != 0 && tok.alt == term.key)
}

#[derive(Clone, Default)]
struct Window {
    s0: usize,
    s1: usize,
    /// Terms of the window's best-aligned sentence.
    core: Bits,
    /// Terms of the window.
    mask: Bits,
    /// Terms matched only weakly (derivational prefix) in the window.
    pmask: Bits,
    /// Claim quantities the window states.
    qmask: Bits,
    score: f32,
}

struct Scratch {
    /// Per sentence (of every analysed passage): the claim terms it has.
    masks: Vec<Bits>,
    /// Per sentence: the claim quantities it states.
    qmasks: Vec<Bits>,
    windows: Vec<Window>,
    /// Per passage: claim quantities stated anywhere in the passage.
    anywhere_q: Vec<Bits>,
    /// Per passage: claim terms found anywhere in the passage.
    anywhere_t: Vec<Bits>,
    /// Sentence spans of the passage being analysed.
    spans: Vec<(u32, u32)>,
    /// The claim buffers, between claims.
    claim: ClaimBufs,
}

/// The weight of a set of terms (`claim_only`: of its claim terms).
fn mask_weight(terms: &[Term], mask: &Bits, claim_only: bool) -> f32 {
    let mut w = 0.0;
    for i in mask.iter() {
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
        self.verify_claims(question, passages, claims, None)
    }

    fn verify_marked(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: &[Vec<Range<usize>>],
    ) -> Vec<Judgement> {
        self.verify_claims(question, passages, claims, Some(markers))
    }
}

impl LexicalVerifier {
    /// `verify`, with the claims' marker spans when the caller has them.
    fn verify_claims(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: Option<&[Vec<Range<usize>>]>,
    ) -> Vec<Judgement> {
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
                let spans = markers.map(|m| m.get(i).map_or(&[][..], Vec::as_slice));
                self.judge(&question_tokens, &mut analysed, c, spans, &mut scratch)
            })
            .collect()
    }

    fn judge(
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
                        best.pmask.union_with(&weak.difference(&strong));
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
    fn quantities_stated(&self, info: &ClaimInfo<'_>, scratch: &Scratch, set: &[usize]) -> bool {
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
    fn assess(
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
                if (info.neg != s_neg) ^ (flips % 2 == 1) {
                    reasons.push(Reason::Negation);
                    contradicted = true;
                    evidence_at = primary;
                }
            }
            // Exclusive restriction.
            if cfg.check_restriction
                && info.excl
                && !p.sentences[pw.s0..pw.s1].iter().any(|w| w.excl)
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
    fn find_in_aligned<'p, F: Fn(&Quantity) -> bool>(
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
        let wa = mask_weight(&info.terms, &scratch.masks[base + a], false)
            + scratch.qmasks[base + a].len() as f32;
        let wb = mask_weight(&info.terms, &scratch.masks[base + b], false)
            + scratch.qmasks[base + b].len() as f32;
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

/// The tokens of sentence `si` of `p`, then those of its lead-in if it has one.
fn unit_tokens<'a>(p: &'a Passage<'_>, si: usize) -> impl Iterator<Item = &'a [Token]> {
    let s = &p.sentences[si];
    let tokens = |s: &Sentence| &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    std::iter::once(tokens(s)).chain(s.lead.map(|l| tokens(&p.sentences[l as usize])))
}

/// The period of a repeated event that `toks` state, in days, with its text: "weekly",
/// "once a month", "every two weeks", "per year".
fn period<'t>(toks: &[Token], text: &'t str) -> Option<(f64, &'t str)> {
    const YEAR: f64 = 365.0;
    const PERIODS: &[(&str, f64)] = &[
        ("hourly", 1.0 / 24.0),
        ("daily", 1.0),
        ("weekly", 7.0),
        ("biweekly", 14.0),
        ("fortnightly", 14.0),
        ("monthly", YEAR / 12.0),
        ("quarterly", YEAR / 4.0),
        ("annually", YEAR),
        ("annual", YEAR),
        ("yearly", YEAR),
    ];
    let is = |t: &Token, w: &str| t.text(text).eq_ignore_ascii_case(w);
    // The meaning of a quantity word (number or time unit); only those are looked up.
    let meaning = |t: &Token| {
        (t.flags & (QUANT | TIME) != 0)
            .then(|| quantity::meaning(&t.text(text).to_ascii_lowercase()))
            .flatten()
    };
    for (i, t) in toks.iter().enumerate() {
        if let Some(&(_, days)) = PERIODS.iter().find(|(w, _)| is(t, w)) {
            return Some((days, t.text(text)));
        }
        if !["once", "every", "per", "each"].iter().any(|w| is(t, w)) {
            continue;
        }
        let mut j = i + 1;
        let mut count = 1.0;
        if let Some(n) = toks.get(j) {
            if let Some(quantity::Word::Number(v)) = meaning(n) {
                count = v;
                j += 1;
            } else if is(n, "a") || is(n, "an") {
                j += 1;
            }
        }
        if let Some(u) = toks.get(j)
            && let Some(quantity::Word::Time(days)) = meaning(u)
            && days >= 1.0 / 24.0
        {
            return Some((count * days, &text[t.start as usize..u.end as usize]));
        }
    }
    None
}

/// A claim word whose antonym (WordNet or [`lexicon`]'s policy pairs) the evidence unit of
/// sentence `si` (with its lead-in) states while it does not state the word itself; returns the
/// claim word and the evidence word.
fn antonym_conflict<'c, 'p>(
    info: &ClaimInfo<'c>,
    p: &Passage<'p>,
    si: usize,
) -> Option<(&'c str, &'p str)> {
    let lexicon = lexicon::lexicon();
    let tokens = |s: &Sentence| &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    let s = &p.sentences[si];
    let lead = s.lead.map_or(&[][..], |l| tokens(&p.sentences[l as usize]));
    let unit = || tokens(s).iter().chain(lead);
    let in_unit = |key: u64| unit().any(|t| t.key == key);
    let in_claim = |key: u64| info.tokens.iter().any(|t| t.key == key);
    // Units of time are quantities, compared by Rule 2 ("twelve months" is "one year").
    let plain = |t: &Token| t.flags & (QUANT | TIME | CAP | NEG_CUE | text::DIGIT) == 0;
    for c in info.tokens.iter().filter(|t| plain(t)) {
        let opposed = lexicon.antonyms(c.key);
        // The claim word, or a synonym of it, stated: no conflict.
        if opposed.is_empty()
            || in_unit(c.key)
            || lexicon.related(c.key).iter().any(|&k| in_unit(k))
        {
            continue;
        }
        if let Some(e) = unit().find(|t| plain(t) && opposed.contains(&t.key) && !in_claim(t.key)) {
            return Some((c.text(info.text), e.text(p.text)));
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A claim's terms are never capped: a missing code after 69 other words is still seen.
    #[test]
    fn long_claims_keep_every_term() {
        let words: Vec<String> = (0..69)
            .map(|k| format!("kr{}{}x", (b'a' + k / 26) as char, (b'a' + k % 26) as char))
            .collect();
        let passage = format!("{}.", words.join(" "));
        let claim = format!("{} zx42 [1].", words.join(" "));
        let j = LexicalVerifier::default()
            .verify(
                None,
                &[&passage],
                &[Claim {
                    text: &claim,
                    cited: &[1],
                }],
            )
            .remove(0);
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert_eq!(j.reasons, [Reason::Missing(vec!["zx42".into()])]);
    }
}
