//! The contradiction rules and the evidence span.

use crate::Evidence;
use crate::bits::Bits;
use crate::lexicon;
use groundcite_text::quantity::{self, Quantity};
use groundcite_text::{self as text, CAP, COMMON, NEG_CUE, NEG_PREFIX, QUANT, STOP, TIME, Token};

use super::analysis::*;

/// Byte offset of the claim's first token (its capital is not a name's).
pub(super) fn first_content_start(info: &ClaimInfo<'_>) -> u32 {
    info.tokens.first().map_or(0, |t| t.start)
}

pub(super) fn bound_text(text: &str, q: &Quantity) -> String {
    let prefix = match q.bound {
        quantity::Bound::AtLeast => "at least ",
        quantity::Bound::AtMost => "at most ",
        quantity::Bound::Exact => "",
    };
    format!("{prefix}{}", q.text(text))
}

pub(super) fn best_sentence(
    passages: &[Passage<'_>],
    scratch: &Scratch,
    info: &ClaimInfo<'_>,
    p: usize,
    w: &Window,
) -> Option<usize> {
    if w.end == 0 {
        return None;
    }
    let base = passages[p].sent_base;
    (w.first..w.end).max_by(|&a, &b| {
        let wa = mask_weight(&info.terms, &scratch.sentence_terms[base + a], false)
            + scratch.sentence_quantities[base + a].len() as f32;
        let wb = mask_weight(&info.terms, &scratch.sentence_terms[base + b], false)
            + scratch.sentence_quantities[base + b].len() as f32;
        // Ties go to the earlier sentence.
        wa.total_cmp(&wb).then(b.cmp(&a))
    })
}

/// Whether a negation cue of the sentence lies within `scope` tokens of a matched claim term.
pub(super) fn negation_in_scope(
    info: &ClaimInfo<'_>,
    p: &Passage<'_>,
    s: &Sentence,
    scope: usize,
) -> bool {
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
pub(super) fn unit_tokens<'a>(p: &'a Passage<'_>, si: usize) -> impl Iterator<Item = &'a [Token]> {
    let s = &p.sentences[si];
    let tokens = |s: &Sentence| &p.tokens[s.tok_lo as usize..s.tok_hi as usize];
    std::iter::once(tokens(s)).chain(s.lead.map(|l| tokens(&p.sentences[l as usize])))
}

/// The period of a repeated event that `toks` state, in days, with its text: "weekly",
/// "once a month", "every two weeks", "per year".
pub(super) fn period<'t>(toks: &[Token], text: &'t str) -> Option<(f64, &'t str)> {
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
pub(super) fn antonym_conflict<'c, 'p>(
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
pub(super) fn prefix_flips(info: &ClaimInfo<'_>, p: &Passage<'_>, s: &Sentence) -> usize {
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
pub(super) fn agent_of(toks: &[Token], text: &str, v: usize) -> Option<(usize, usize)> {
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
pub(super) fn agent_conflict<'c, 'p>(
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
pub(super) fn entity_like(info: &ClaimInfo<'_>, term: &Term) -> bool {
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
pub(super) fn slot_substitute<'p>(
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
    // The same slot: the word and its neighbour are coordinated ("laptop, and phone") in both
    // or in neither ("view content" is not "Conversations and content").
    let same_link = |c: (u32, u32), e: (u32, u32)| {
        coordinated(&info.text[c.0 as usize..c.1 as usize])
            == coordinated(&p.text[e.0 as usize..e.1 as usize])
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
            && same_link((left.end, term.start), (toks[pos].end, tok.start))
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
            && same_link((term.end, right.start), (tok.end, toks[pos].start))
        {
            return Some(tok.text(p.text));
        }
    }
    None
}

/// Whether the text between two words coordinates them: a comma, "and" or "or".
fn coordinated(between: &str) -> bool {
    between.contains(',')
        || between
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("or"))
}

pub(super) fn evidence(passages: &[Passage<'_>], p: usize, w: &Window) -> Evidence {
    let pass = &passages[p];
    Evidence {
        passage: p + 1,
        start: pass.sentences[w.first].start as usize,
        end: pass.sentences[w.end - 1].end as usize,
    }
}

/// Where the label of a list item or table row ends (a byte offset into the passage): a list
/// item's label is its words before the first ':' ("**Logs:** log management"), a table row's
/// its first cell. None for prose, a header row, or an item without a label.
fn label_end(line: &str, shape: Shape, s: &Sentence) -> Option<u32> {
    let end = match shape {
        Shape::ListItem => {
            let colon = line.find(':')?;
            // A label is short, and the ':' is not a URL's.
            if line[..colon].split_whitespace().count() > 6 || line[colon + 1..].starts_with("//") {
                return None;
            }
            colon
        }
        Shape::TableRow if s.lead.is_some() => {
            let first = line.find('|')?;
            first + 1 + line[first + 1..].find('|')?
        }
        _ => return None,
    };
    Some(s.start + end as u32)
}

/// A list item or table row, for [`list_mixup`].
struct Item {
    si: usize,
    /// Claim terms its label states.
    label: Bits,
    /// Claim terms the rest of it states (word forms, synonyms, derivational prefixes).
    body: Bits,
    /// The claim names it: a claim word or quantity its label states and its body does not.
    named: bool,
    /// Byte span of the label's words.
    label_span: (u32, u32),
}

/// Item `si` of `p`, whose label ends at byte `end`: the claim terms of its label and of the
/// rest, and whether the claim names it. None when the label has no words.
fn labelled_item(info: &ClaimInfo<'_>, p: &Passage<'_>, si: usize, end: u32) -> Option<Item> {
    let s = &p.sentences[si];
    let mut label = Bits::default();
    let mut body = Bits::default();
    let mut label_span: Option<(u32, u32)> = None;
    for tok in &p.tokens[s.tok_lo as usize..s.tok_hi as usize] {
        if tok.end <= end {
            add_token_terms(info, tok, &mut label);
            let lo = label_span.map_or(tok.start, |(lo, _)| lo);
            label_span = Some((lo, tok.end));
        } else {
            add_token_terms(info, tok, &mut body);
            if tok.pre != 0
                && let Some(t) = info.pre_index.get(&tok.pre)
            {
                t.add_to(&mut body);
            }
        }
    }
    let label_span = label_span?;
    let by_word = label
        .difference(&body)
        .iter()
        .any(|i| !info.terms[i].question);
    let by_quantity = p.quants[s.q_lo as usize..s.q_hi as usize]
        .iter()
        .filter(|eq| eq.end <= end)
        .any(|eq| info.quants.iter().any(|cq| quantity::states(cq, eq)));
    Some(Item {
        si,
        label,
        body,
        named: by_word || by_quantity,
        label_span,
    })
}

/// A claim that names one item of a list or table by its label but states what a sibling item
/// says ("Synthetics handles log management" where the list says "**Logs:** log management" and
/// "**Synthetics:** endpoint uptime monitoring"): returns the named item's label and the
/// sibling's, as written in the passage. Terms of the lead-in or header (shared by every item)
/// and of the named label do not count; the sibling must state more of the rest of the claim
/// than the named item, including a full-weight word the named item lacks.
pub(super) fn list_mixup<'p>(info: &ClaimInfo<'_>, p: &Passage<'p>) -> Option<(&'p str, &'p str)> {
    // Runs of labelled items (a table's separator line does not break a run).
    let mut runs: Vec<Vec<Item>> = Vec::new();
    let mut run = Vec::new();
    for si in 0..p.sentences.len() {
        let s = &p.sentences[si];
        let line = &p.text[s.start as usize..s.end as usize];
        let shape = shape(line);
        if shape == Shape::TableRule {
            continue;
        }
        match label_end(line, shape, s).and_then(|end| labelled_item(info, p, si, end)) {
            Some(item) => run.push(item),
            None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    runs.push(run);
    for run in runs.iter().filter(|r| r.len() >= 2) {
        let mut named = run.iter().filter(|it| it.named);
        let (Some(a), None) = (named.next(), named.next()) else {
            continue;
        };
        // What does not tell the items apart: the question's words, the named label's, and
        // the lead-in's or header's.
        let mut shared = a.label.clone();
        for (i, t) in info.terms.iter().enumerate() {
            if t.question {
                shared.insert(i);
            }
        }
        if let Some(lead) = p.sentences[a.si].lead {
            let l = &p.sentences[lead as usize];
            for tok in &p.tokens[l.tok_lo as usize..l.tok_hi as usize] {
                add_token_terms(info, tok, &mut shared);
            }
        }
        let a_rest = a.body.difference(&shared);
        let a_weight = mask_weight(&info.terms, &a_rest, true);
        let sibling = run
            .iter()
            .filter(|b| b.si != a.si && !b.named)
            .map(|b| {
                let rest = b.body.difference(&shared);
                (b, mask_weight(&info.terms, &rest, true), rest)
            })
            .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.si.cmp(&x.0.si)));
        let Some((b, b_weight, b_rest)) = sibling else {
            continue;
        };
        let only_b = b_rest.difference(&a.body).difference(&a.label);
        if b_weight > a_weight && only_b.iter().any(|i| info.terms[i].weight >= 1.0) {
            let label = |it: &Item| &p.text[it.label_span.0 as usize..it.label_span.1 as usize];
            return Some((label(a), label(b)));
        }
    }
    None
}
