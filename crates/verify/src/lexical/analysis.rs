//! Reading passages and claims: sentences, tokens, weighted terms, windows.

use crate::bits::Bits;
use crate::lexicon;
use crate::{Reason, SupportConfig, Verdict};
use groundcite_text::quantity::{self, Quantity};
use groundcite_text::{self as text, CAP, COMMON, EXCL, NEG_CUE, NEG_PREFIX, QUANT, STOP, Token};
use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

pub(super) struct Sentence {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) tok_lo: u32,
    pub(super) tok_hi: u32,
    pub(super) q_lo: u32,
    pub(super) q_hi: u32,
    pub(super) neg: bool,
    pub(super) excl: bool,
    /// A token with a negating prefix ("unpaid"): Rule "polarity" may flip.
    pub(super) neg_prefix: bool,
    /// For a list item or a table row: the sentence that introduces it (the lead-in ending
    /// with ':' above the list, the table's header row), read with it as one evidence unit.
    pub(super) lead: Option<u32>,
}

pub(super) struct Passage<'a> {
    pub(super) text: &'a str,
    pub(super) tokens: Vec<Token>,
    pub(super) sentences: Vec<Sentence>,
    pub(super) quants: Vec<Quantity>,
    /// Index of this passage's first sentence in the flat per-claim scratch arrays.
    pub(super) sent_base: usize,
    /// Passages no claim cites are analysed only when needed (Rule 4, uncited claims).
    pub(super) analysed: bool,
}

impl<'a> Passage<'a> {
    pub(super) fn pending(text: &'a str) -> Passage<'a> {
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
pub(super) fn clear_bound_negations(tokens: &mut [Token], text: &str) {
    for i in 0..tokens.len() {
        if tokens[i].flags & NEG_CUE != 0 && is_bound_negation(tokens, text, i) {
            tokens[i].flags &= !NEG_CUE;
        }
    }
}

/// Whether the negation cue at `i` starts a bound ("no more", "not to exceed").
pub(super) fn is_bound_negation(tokens: &[Token], text: &str, i: usize) -> bool {
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
pub(super) fn ensure_analysed(
    passages: &mut [Passage<'_>],
    scratch: &mut Scratch,
    which: impl Iterator<Item = usize>,
) {
    for k in which {
        if passages[k].analysed {
            continue;
        }
        let base = scratch.sentence_terms.len();
        let a = analyse_passage(passages[k].text, base, &mut scratch.spans);
        let n = a.sentences.len();
        scratch.sentence_terms.resize(base + n, Bits::default());
        scratch
            .sentence_quantities
            .resize(base + n, Bits::default());
        passages[k] = a;
    }
}

/// `spans`: a buffer for the sentence spans (reused across passages).
pub(super) fn analyse_passage<'a>(
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
pub(super) enum Shape {
    ListItem,
    TableRow,
    /// A table's `|---|---|` line.
    TableRule,
    /// Prose ending with ':' (a list's lead-in).
    LeadIn,
    Prose,
}

pub(super) fn shape(sentence: &str) -> Shape {
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
pub(super) fn link_lead_ins(text: &str, sentences: &mut [Sentence]) {
    let mut lead_in: Option<u32> = None;
    let mut header: Option<u32> = None;
    for (k, s) in sentences.iter_mut().enumerate() {
        match shape(&text[s.start as usize..s.end as usize]) {
            Shape::LeadIn => {
                lead_in = Some(k as u32);
                header = None;
            }
            Shape::ListItem => {
                s.lead = lead_in;
                header = None;
            }
            Shape::TableRow => match header {
                Some(h) => s.lead = Some(h),
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
pub(super) fn clear_bound_negation_at(tokens: &mut [Token], text: &str, i: usize) {
    if tokens[i].flags & NEG_CUE != 0 && is_bound_negation(tokens, text, i) {
        tokens[i].flags &= !NEG_CUE;
    }
}

#[derive(Clone, Copy)]
pub(super) struct Term {
    pub(super) key: u64,
    pub(super) alt: u64,
    pub(super) pre: u64,
    pub(super) flags: u16,
    pub(super) weight: f32,
    pub(super) start: u32,
    pub(super) end: u32,
    /// A question term (alignment only).
    pub(super) question: bool,
    /// A claim term the question also contains (restated, not new).
    pub(super) given: bool,
}

pub(super) struct ClaimInfo<'c> {
    pub(super) text: &'c str,
    /// Byte ranges of the claim's markers (not words).
    pub(super) skip: Vec<(usize, usize)>,
    pub(super) tokens: Vec<Token>,
    pub(super) terms: Vec<Term>,
    pub(super) quants: Vec<Quantity>,
    pub(super) neg: bool,
    pub(super) excl: bool,
    /// Every negation of the claim states a necessary condition ("won't accept it until it is
    /// listed", "can't travel unless approved"): a passage that states the requirement ("must
    /// be listed before") says the same.
    pub(super) neg_conditional: bool,
    /// Every "only" of the claim states a necessary condition ("only if it's public", "only
    /// after approval").
    pub(super) excl_conditional: bool,
    /// The terms of each term key and prefix-stripped key.
    pub(super) index: TermIndex,
    /// The terms of each derivational (first letters) key.
    pub(super) pre_index: TermIndex,
    /// Sum of the weights of the claim's own terms.
    pub(super) claim_weight: f32,
    /// Sum of the weights of all terms (claim + question).
    pub(super) total_weight: f32,
    /// Sum of the weights of the claim's terms that the question does not contain.
    pub(super) new_weight: f32,
}

/// The buffers of a claim's analysis, reused from one claim to the next.
#[derive(Default)]
pub(super) struct ClaimBufs {
    pub(super) skip: Vec<(usize, usize)>,
    pub(super) tokens: Vec<Token>,
    pub(super) quants: Vec<Quantity>,
    pub(super) terms: Vec<Term>,
    pub(super) index: TermIndex,
    pub(super) pre_index: TermIndex,
}

impl ClaimInfo<'_> {
    /// Gives the buffers back for the next claim.
    pub(super) fn into_bufs(self) -> ClaimBufs {
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
pub(super) type TermIndex = FxHashMap<u64, TermList>;

/// The claim terms under one key, by index: a short list (most keys name one term). One bitset
/// per key cost the square of a claim's terms (a bitset holding term 40,000 is 625 words).
#[derive(Clone, Default)]
pub(super) struct TermList(smallvec::SmallVec<[u32; 2]>);

impl TermList {
    /// Adds term `i`; terms are indexed in order, so a repeat can only be the last one.
    fn push(&mut self, i: usize) {
        let i = i as u32;
        if self.0.last() != Some(&i) {
            self.0.push(i);
        }
    }

    /// Adds these terms to `set`.
    pub(super) fn add_to(&self, set: &mut Bits) {
        for &i in &self.0 {
            set.insert(i as usize);
        }
    }

    /// Adds to `set` those of these terms that `except` lacks.
    pub(super) fn add_missing_to(&self, except: &Bits, set: &mut Bits) {
        for &i in &self.0 {
            if !except.contains(i as usize) {
                set.insert(i as usize);
            }
        }
    }
}

/// Adds term `i` under `key` (0: no key).
pub(super) fn index_term(index: &mut TermIndex, key: u64, i: usize) {
    if key != 0 {
        index.entry(key).or_default().push(i);
    }
}

/// `markers`: the byte spans of the claim's citation markers, if the caller parsed them.
pub(super) fn analyse_claim<'c>(
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
    let mut neg_conditional = true;
    let mut excl_conditional = true;
    // Sets and a sweep instead of scans of lists, so a claim costs its length, not its square
    // (one sentence of 65,000 "[1](" took seconds): the keys of the terms so far, the question's
    // keys, and the quantity spans by start with the furthest end reached (a token lies in a
    // quantity iff the furthest end of those starting at or before it reaches its end).
    let mut term_keys: FxHashSet<u64> = FxHashSet::default();
    let question_keys: FxHashSet<u64> = question_tokens.iter().map(|q| q.key).collect();
    let mut quant_spans: Vec<(u32, u32)> = quants.iter().map(|q| (q.start, q.end)).collect();
    quant_spans.sort_unstable();
    let mut next_quant = 0;
    let mut reach: Option<u32> = None;
    for (i, t) in tokens.iter().enumerate().skip(first) {
        while let Some(&(start, end)) = quant_spans.get(next_quant)
            && start <= t.start
        {
            reach = Some(reach.map_or(end, |r| r.max(end)));
            next_quant += 1;
        }
        let in_quantity = reach.is_some_and(|r| t.end <= r);
        if t.flags & NEG_CUE != 0 && (i == first || t.flags & CAP == 0) {
            neg = true;
            neg_conditional &= states_condition(&tokens[i + 1..], text, &["until", "unless"], 12);
        }
        if t.flags & EXCL != 0
            && !(i > 0 && tokens[i - 1].flags & NEG_CUE != 0)
            && !stresses_an_amount(&tokens[i + 1..], text)
        {
            excl = true;
            excl_conditional &=
                states_condition(&tokens[i + 1..], text, &["if", "when", "after", "once"], 1);
        }
        // A number word outside any quantity is a word ("first", "twice"), except the pronoun
        // "one" ("one of those", "the initial one").
        let adverbial = t.flags & QUANT != 0
            && !in_quantity
            && t.flags & text::DIGIT == 0
            && !t.text(text).eq_ignore_ascii_case("one");
        // Negation cues ("shouldn't", "never") are polarity, compared by Rule 3, not content.
        if t.flags & (STOP | NEG_CUE) != 0 || (t.flags & QUANT != 0 && !adverbial) {
            continue;
        }
        if in_quantity || !term_keys.insert(t.key) {
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
            given: question_keys.contains(&t.key),
        });
    }
    if !question_tokens.is_empty() {
        for t in question_tokens {
            if t.flags & (STOP | QUANT) != 0 {
                continue;
            }
            if !term_keys.insert(t.key) {
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
        neg_conditional: neg && neg_conditional,
        excl_conditional: excl && excl_conditional,
        index,
        pre_index,
        claim_weight,
        total_weight,
        new_weight,
    }
}

/// Whether one of `words` is among the first `within` tokens of `after` (before a clause ends:
/// the tokens are the claim's, and a cue after a comma belongs to the next clause).
fn states_condition(after: &[Token], text: &str, words: &[&str], within: usize) -> bool {
    let mut prev_end = after.first().map_or(0, |t| t.start);
    for t in after.iter().take(within) {
        if text[prev_end as usize..t.start as usize].contains([',', ';', '.']) {
            return false;
        }
        if words.iter().any(|w| t.text(text).eq_ignore_ascii_case(w)) {
            return true;
        }
        prev_end = t.end;
    }
    false
}

/// Whether "only" before `after` stresses an amount ("only 3 days", "only a few", "only a
/// limited number") rather than restricting who or what: the amount itself is compared as a
/// quantity or a word.
fn stresses_an_amount(after: &[Token], text: &str) -> bool {
    const SMALL: [&str; 6] = ["few", "little", "handful", "limited", "small", "fraction"];
    match after {
        [n, ..] if n.flags & QUANT != 0 => true,
        [a, w, ..]
            if ["a", "an"]
                .iter()
                .any(|d| a.text(text).eq_ignore_ascii_case(d)) =>
        {
            SMALL.iter().any(|s| w.text(text).eq_ignore_ascii_case(s))
        }
        _ => false,
    }
}

/// Whether the sentences state a requirement ("must", "need to", "required", "before",
/// "until", "unless", "only"): what a claim's necessary condition ("not ... until", "only if")
/// says in other words.
pub(super) fn states_requirement(tokens: &[Token], text: &str) -> bool {
    const CUES: [&str; 10] = [
        "must", "need", "needs", "required", "requires", "require", "before", "until", "unless",
        "only",
    ];
    tokens
        .iter()
        .any(|t| CUES.iter().any(|w| t.text(text).eq_ignore_ascii_case(w)))
}

/// The tokens of window `w` of passage `p` (none for an empty window).
pub(super) fn window_tokens<'a>(p: &'a Passage<'_>, w: &Window) -> &'a [Token] {
    if w.end == 0 {
        return &[];
    }
    let lo = p.sentences[w.first].tok_lo as usize;
    let hi = p.sentences[w.end - 1].tok_hi as usize;
    &p.tokens[lo..hi]
}

/// The weight of a term: frequent words weigh less.
pub(super) fn term_weight(t: &Token, cfg: &SupportConfig) -> f32 {
    if t.flags & COMMON != 0 {
        cfg.common_word_weight
    } else {
        1.0
    }
}

pub(super) fn new_weight(terms: &[Term]) -> f32 {
    terms
        .iter()
        .filter(|t| !t.question && !t.given)
        .map(|t| t.weight)
        .sum()
}

/// Adds the claim terms a passage token matches (by its key or its prefix-stripped key).
pub(super) fn add_token_terms(info: &ClaimInfo<'_>, tok: &Token, terms: &mut Bits) {
    if let Some(t) = info.index.get(&tok.key) {
        t.add_to(terms);
    }
    if tok.alt != 0
        && let Some(t) = info.index.get(&tok.alt)
    {
        t.add_to(terms);
    }
}

#[inline]
pub(super) fn term_matches(term: &Term, tok: &Token) -> bool {
    tok.key == term.key
        || (term.alt != 0 && tok.key == term.alt)
        || (tok.alt != 0 && tok.alt == term.key)
}

#[derive(Clone, Default)]
pub(super) struct Window {
    /// The window's sentences, `first..end` of its passage.
    pub(super) first: usize,
    pub(super) end: usize,
    /// Terms of the window's best-aligned sentence.
    pub(super) core: Bits,
    /// Terms of the window.
    pub(super) terms: Bits,
    /// Terms matched only weakly (derivational prefix) in the window.
    pub(super) weak_terms: Bits,
    /// Claim quantities the window states.
    pub(super) quantities: Bits,
    pub(super) score: f32,
}

pub(super) struct Scratch {
    /// Per sentence (of every analysed passage): the claim terms it has.
    pub(super) sentence_terms: Vec<Bits>,
    /// Per sentence: the claim quantities it states.
    pub(super) sentence_quantities: Vec<Bits>,
    pub(super) windows: Vec<Window>,
    /// Per passage: claim quantities stated anywhere in the passage.
    pub(super) passage_quantities: Vec<Bits>,
    /// Per passage: claim terms found anywhere in the passage.
    pub(super) passage_terms: Vec<Bits>,
    /// Sentence spans of the passage being analysed.
    pub(super) spans: Vec<(u32, u32)>,
    /// The claim buffers, between claims.
    pub(super) claim: ClaimBufs,
}

/// The weight of a set of terms (`claim_only`: of its claim terms).
pub(super) fn mask_weight(terms: &[Term], mask: &Bits, claim_only: bool) -> f32 {
    let mut w = 0.0;
    for i in mask.iter() {
        if !claim_only || !terms[i].question {
            w += terms[i].weight;
        }
    }
    w
}

/// What one set of passages says about a claim.
pub(super) struct Assessment {
    pub(super) verdict: Verdict,
    pub(super) reasons: Vec<Reason>,
    /// Passage index (0-based) and window for the evidence.
    pub(super) evidence: Option<(usize, Window)>,
    /// Passages whose window contributed claim terms or quantities.
    pub(super) contributing: Vec<usize>,
}
