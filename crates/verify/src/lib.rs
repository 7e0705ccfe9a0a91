//! # groundcite-verify: does the cited passage state the claim?
//!
//! A valid citation id is not a supported claim. "Reimbursements settle in 14 days \[2\]." cites a
//! passage that exists, yet passage 2 says "within 30 days of approval". This crate judges each
//! factual sentence of an answer against the numbered passages that were sent to the model and
//! returns a [`Judgement`]: a [`Verdict`] (`Supported`, `Contradicted`, `Unsupported`), the
//! [`Evidence`] span that best aligns with the claim, machine-readable [`Reason`]s, the passages
//! that would support the sentence if it cites the wrong ones (`suggested`), and the cited
//! passages that support nothing in it (`idle_citations`).
//!
//! The crate is pure: no I/O, no clock, no async, no global mutable state. Of groundcite it depends
//! only on `groundcite-text` (tokens, stems, word classes, quantities, sentence spans, the marker
//! grammar); `groundcite-core` parses markers and sentences, calls it, and hands it the marker
//! spans it found ([`Verifier::verify_until`]).
//!
//! ```
//! use groundcite_verify::{Claim, LexicalVerifier, Verdict, Verifier};
//!
//! let passages = [
//!     "Expense claims must be filed within 60 days of the expense.",
//!     "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
//! ];
//! let claims = [Claim { text: "Reimbursements settle in 14 days [2].", cited: &[2] }];
//! let judgements = LexicalVerifier::default().verify(None, &passages, &claims);
//! assert_eq!(judgements[0].verdict, Verdict::Contradicted);
//! assert_eq!(judgements[0].reasons[0].to_string(), r#"number_mismatch: "14 days" vs "30 days""#);
//! ```
//!
//! ## Verifiers
//!
//! [`Verifier`] is the seam: [`LexicalVerifier`] is the default, deterministic and cheap
//! (microseconds per answer). [`SemanticVerifier`] chains it with an embedding model behind the
//! pure [`SentenceEncoder`] trait (the engine implements it with `groundcite_embed::Embedder`):
//! sentence similarity may overrule an `Unsupported` verdict that rests only on missing words,
//! never a contradiction (see its module docs). [`Verifier::kind`] names the verifier that ran
//! (`lexical`, `semantic`, `llm`); every check report carries it. The [`Reason`]s are the
//! machine form of a verdict; `groundcite-core` words them as the plain sentence a person reads
//! beside a flagged claim ("The source says 30 days, not 14 days.").
//!
//! ## How the lexical verifier decides
//!
//! Passages are analysed once per [`Verifier::verify`] call (a passage no claim cites is analysed
//! only if a claim needs it): tokens (byte spans with a hashed, lightly stemmed key: plurals,
//! -ed, -ing, -ly, final -e; a second key without a prefix such as un-, in-, dis-, non-, re-; a
//! third key of the first five letters for derivational matches), sentence spans (sentence
//! punctuation except after an abbreviation of the text layer's list, glued sentences such as
//! `century.First`, blank lines, headings, list items and table rows), and quantities, all from
//! `groundcite-text`. Then, for each claim (markers and list bullets are ignored as
//! content):
//!
//! 1. **Alignment.** The claim's content terms (stopwords dropped; a word also matches its
//!    WordNet 3.0 synonyms and derived forms, from its two most frequent senses; frequent English words and
//!    paraphrase glue such as "get", "decide", "offered" weigh
//!    [`SupportConfig::common_word_weight`]; other words, names and codes weigh 1; a word present
//!    in more than half of the judged passages, when at least
//!    [`SupportConfig::damping_min_passages`] are judged, is damped by
//!    [`SupportConfig::shared_term_damping`]) are matched in each passage, and the best window of
//!    1 to [`SupportConfig::max_window_sentences`] adjacent sentences is chosen. With a question,
//!    its terms also pull the window (weighted by [`SupportConfig::question_term_weight`]) but are
//!    never required: this is how elliptic answers ("Delhi \[1\].") are placed. A list item is
//!    read with its lead-in (the sentence ending with ':' above the list) and a table row with
//!    the table's header row: their words count as the item's own.
//! 2. **Quantities.** Digits and number words ("six", "two weeks", "a year"), ranges ("3-5",
//!    "3–5", "3 to 5", "between 3 and 15"), money, percentages, durations (minutes to years,
//!    business/working days, which never state calendar days; "2 weeks" equals "14 days",
//!    "twelve months" equals "one year": spans in different units agree within 2%), ranges with a
//!    unit on both ends ("6 months to a year"), weekdays, month names, calendar years,
//!    ordinals ("third season"), and bounds ("at least", "up to", "at most", "within",
//!    "a maximum of", "more than", "or more"). A claim quantity that the window states is fine;
//!    stated elsewhere in the cited passage, it is tolerated; a window that states a comparable
//!    quantity with another value is a contradiction (`number_mismatch`, `date_mismatch`);
//!    opposite bounds on the same value are `bound_mismatch`; otherwise it is `missing`.
//! 3. **Polarity.** Negation cues ("not", "never", "cannot", "doesn't", "unable", "rather than",
//!    ...; never content words themselves) and negating prefixes
//!    ("unpaid" vs "paid", "non-billable", "ineligible") are compared between the claim and the
//!    best-aligned sentence; an odd number of flips is `negation`. A cue of the sentence counts
//!    only within [`SupportConfig::negation_scope`] tokens of a matched claim term (a negated
//!    claim may take its negation from any sentence of the window); "not-for-profit"
//!    and a capitalised "Never" inside a name ("Never Shout Never") are not cues.
//!
//!    **Antonyms.** A claim word whose antonym the best-aligned sentence (with its lead-in)
//!    states, while it states neither the word nor a synonym of it, is `antonym: "paid" vs
//!    "forfeited"`: WordNet 3.0 antonyms (satellites of an adjective share their head's) and a
//!    short list of general-English pairs WordNet does not link (forfeited/paid, required/
//!    optional, local/cloud, all/some, if/unless, before/after, weekly/monthly/...; see
//!    `lexicon.rs`). Units of time and negation cues are left to Rules 2 and 3, and a negation on
//!    one side cancels an antonym ("not mandatory" for "optional").
//! 4. **Restriction.** "only", "solely", "exclusively" in the claim with no such cue in the
//!    aligned sentence is `restriction: "only"`; "only" before an amount ("only 3 days", "only
//!    a few") stresses the amount and restricts nothing. A necessary condition is neither a restriction
//!    nor a negation when the aligned window states a requirement ("must", "need", "required",
//!    "before", "until", "unless", "only"): "only if it's public" for "the board needs to be
//!    public", "won't accept your key until it's listed" for "before git will accept your key,
//!    the key must be listed".
//! 5. **Entity slot.** A missing name (capitalised word past the first) or list item whose
//!    neighbour is aligned, where the passage has another content word in that position
//!    ("badge, laptop, and tablet" vs "badge, laptop, and phone"; "Attorney General of Wyoming"
//!    vs "of Nevada"), is `entity_mismatch`; the word and its neighbour must be coordinated (a
//!    comma, "and", "or") in both or in neither ("view content" does not fill the slot of
//!    "Conversations and content"). So is another agent for the same action: the claim
//!    says "Neil Gaiman directed" where the window says "directed by Robert Zemeckis" (a name
//!    right before the verb, or after "verb by"). And so is a property of another list item or
//!    table row, `list_mixup`: the claim names one item by its label (a list item's words
//!    before ':', a row's first cell; a word or quantity there and not in the item's text) and
//!    one sibling, not named, states more of the rest of the claim than the named item,
//!    including a full-weight word the named item lacks ("Synthetics handles log management"
//!    where "**Logs:** log management" and "**Synthetics:** endpoint uptime monitoring"). The
//!    lead-in's or header's words, shared by every item, do not count.
//!
//!    Note: the limits below are easiest seen through `bench/src/bin/halueval.rs --show-misses N`.
//! 6. **Missing content.** Each claim term not in the best-aligned sentence costs its weight:
//!    times [`SupportConfig::adjacent_word_factor`] if the window's other sentences have it (a
//!    claim that merges two sentences), [`SupportConfig::adjacent_factor`] for a name or code
//!    (another sentence's name may be another subject), times
//!    [`SupportConfig::derivational_factor`] if only its first five letters match there, times
//!    [`SupportConfig::elsewhere_factor`] if the passage has it outside the window, in full
//!    otherwise. The claim is `Unsupported` (`missing: [...]`) when the sum reaches
//!    [`SupportConfig::missing_weight_threshold`] and also [`SupportConfig::missing_fraction`] of
//!    the weight of the claim's new terms (those the question does not already contain), or when
//!    a name or code is absent from the whole passage. Contradiction checks (2 to 5) apply only
//!    when the window aligns with at least [`SupportConfig::contradiction_min_alignment`] of the
//!    claim's weight ([`SupportConfig::polarity_min_alignment`] of it in the best sentence, for
//!    polarity), so that a sentence about something else cannot contradict.
//! 7. **Rule 4 and citation repair.** Claims are judged against the cited passages only (together).
//!    If they are unsupported there but an uncited passage states them alone, or only the union with
//!    uncited passages does, the verdict stays `Unsupported`, `suggested` lists those passages and
//!    the reason is `uncited_support`. An uncited claim (`cited` empty) is judged against all
//!    passages and `suggested` names the passage (or passages) that support it. With two or more
//!    cited passages, a cited passage whose window matches less than
//!    [`SupportConfig::idle_min_weight`] of the claim's terms and none of its quantities is an
//!    idle citation.
//! 8. **Yes/no answers.** "Yes \[1\]." alone cannot be checked lexically: the verdict is `Supported`
//!    with an `unchecked: "yes/no answer"` note. A leading "Yes,"/"No," before a claim is not a
//!    negation of it.
//!
//! ## Defaults
//!
//! See [`SupportConfig`]: every field documents its default. The defaults were tuned on the dev
//! cases, on rows 0..1000 of the HaluEval QA slice and on the tune half of the by-page split of
//! the paraphrase cases (`groundcite eval cases` prints both halves) only.
//!
//! ## Limits: what it cannot see
//!
//! - Paraphrase beyond stemming, prefixes, WordNet synonyms and a list of frequent words: a
//!   phrase for a word ("commute" for "take transit", "right away" for "immediately") is
//!   reported missing; one such word in a long sentence is tolerated by the fraction rule, two
//!   are not.
//! - Relations: a claim that reuses the passage's words in another relation ("Neil Gaiman directed
//!   Beowulf" where he wrote it; "X was founded first") looks supported. The entity-slot rule only
//!   catches a substitution next to an aligned neighbour.
//! - Reasoning: comparisons ("born first", "older"), arithmetic (derived totals), temporal logic
//!   and multi-hop inference are not checked beyond the presence of their words.
//! - Negation scope is a token distance, not syntax; coreference ("it", "she") and world
//!   knowledge are invisible.
//! - Yes/no answers are not verified.
//! - Structure beyond words: a swapped actor or recipient ("email your supervisor" where the
//!   passage says the tool owner, "GSA SecOps triages it first"), a property moved from one list
//!   item to another and most condition and scope changes keep every word of the passage and
//!   pass; the [`SemanticVerifier`]'s similarity cannot see them either.
//! - Quantities are compared by value and unit family; a number before an unknown noun matches the
//!   same number anywhere in the window (lenient), and durations convert at 30 days a month.

mod bits;
mod judge;
mod lexical;
mod lexicon;
mod semantic;
mod stage;
mod trained;

pub use judge::{
    JUDGE_INSTRUCTIONS, JudgeLimits, JudgeReply, JudgeRequest, LlmVerifier, PairJudge, parse_reply,
    reply_schema,
};
pub use lexical::LexicalVerifier;
pub use semantic::{SemanticVerifier, SentenceEncoder};
pub use trained::{Entailment, EntailmentJudge, TrainedVerifier, WINDOWS_PER_CLAIM};

use std::fmt;

/// Thresholds and switches of the [`LexicalVerifier`]. Every field has a default (documented on
/// the field); deserialising a partial config fills in the rest.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SupportConfig {
    /// Weight of a frequent English word ("get", "decide", "time") in a claim. Default `0.3`.
    pub common_word_weight: f32,
    /// A claim is `Unsupported` when the weights of its terms missing from the evidence sum to at
    /// least this. Default `1.0` (one rare word or name, or four frequent words).
    pub missing_weight_threshold: f32,
    /// Multiplier for a missing claim term that the judged passage states outside the evidence
    /// window (the passage is about it, the aligned sentences are not). Default `0.5`.
    pub elsewhere_factor: f32,
    /// Multiplier for a name or code (capitalised word past the first, word with digits) found
    /// in the evidence window but not in its best-aligned sentence. Default `0.5`.
    pub adjacent_factor: f32,
    /// A claim is also `Unsupported` only if the missing weight is at least this fraction of the
    /// claim's total weight, unless a name or code (capitalised word past the first, or a word
    /// with digits) is missing from the whole passage: one paraphrased word in a long sentence is
    /// not a false alarm. Default `0.2`.
    pub missing_fraction: f32,
    /// [`SupportConfig::adjacent_factor`] for a claim word that is not a name or a code: a claim
    /// that merges two sentences about one subject. Default `0.25`.
    pub adjacent_word_factor: f32,
    /// Multiplier for a missing claim term whose first five letters match a word of the
    /// evidence window ("extension" and "extended", "agreement" and "agree"). Default `0.5`.
    pub derivational_factor: f32,
    /// Largest evidence window, in adjacent passage sentences. Default `3`.
    pub max_window_sentences: usize,
    /// Score penalty per extra sentence of a window (ties go to the shorter window).
    /// Default `0.05`.
    pub window_sentence_penalty: f32,
    /// Score of a claim quantity stated in a window (alignment). Default `1.0`.
    pub quantity_weight: f32,
    /// Weight multiplier for question terms (alignment only; never required). Default `0.25`.
    pub question_term_weight: f32,
    /// Fraction of the claim's weight the window must align before a quantity, restriction or
    /// entity-slot conflict counts as a contradiction. Default `0.5`.
    pub contradiction_min_alignment: f32,
    /// Fraction of the claim's weight the best sentence must align before a polarity difference
    /// counts as a contradiction. Default `0.6`.
    pub polarity_min_alignment: f32,
    /// A negation cue of the evidence sentence counts only within this many tokens of a matched
    /// claim term (a "not" in an unrelated clause does not flip the claim). Default `5`.
    pub negation_scope: usize,
    /// With two or more cited passages, a cited passage whose window matches less than this
    /// weight of claim terms and no claim quantity is reported idle. Default `1.0`.
    pub idle_min_weight: f32,
    /// Multiplier for a (non-capitalised) claim word found in more than half of the passages.
    /// Default `0.5`.
    pub shared_term_damping: f32,
    /// Damping applies only with at least this many passages. Default `3`.
    pub damping_min_passages: usize,
    /// Tokens scanned next to an aligned neighbour for a substituted entity. Default `3`.
    pub slot_lookahead: usize,
    /// Check quantities. Default `true`.
    pub check_quantities: bool,
    /// Check negation and negating prefixes. Default `true`.
    pub check_polarity: bool,
    /// Check "only"-style restrictions. Default `true`.
    pub check_restriction: bool,
    /// Check substituted entities, and properties moved from one list item or table row to
    /// another. Default `true`.
    pub check_entity_slots: bool,
    /// Match WordNet synonyms and derived forms of claim words. Default `true`.
    pub check_synonyms: bool,
    /// Check antonyms (WordNet and the policy pairs). Default `true`.
    pub check_antonyms: bool,
    /// [`SemanticVerifier`] only: a claim the rules found only words missing from is supported
    /// when its sentence vector and that of a cited sentence (or two adjacent ones) have at
    /// least this cosine. Fitted on the tune half of the by-page split of
    /// `paraphrase-dev.jsonl` with all-MiniLM-L6-v2 by `groundcite eval cases
    /// ../shared/cases/paraphrase-dev.jsonl --model-dir DIR --fit-similarity`. Default `0.85`.
    pub overrule_similarity: f32,
    /// [`TrainedVerifier`] only: a claim is supported when the trained judge's probability
    /// that its best cited window entails it reaches this. Fitted on the tune half of the
    /// by-page split of `paraphrase-dev.jsonl` by `groundcite eval cases
    /// ../shared/cases/paraphrase-dev.jsonl --set check.verifier=trained --fit-trained` (with
    /// `--model-dir` and `--judges-dir`). Default `0.53`.
    pub trained_entailed: f32,
    /// [`TrainedVerifier`] only: a claim not supported is contradicted (else unsupported) when
    /// the judge's probability that a cited window contradicts it reaches this. Default `0.5`.
    pub trained_contradicted: f32,
    /// [`TrainedVerifier`] only: which claims the judge decides. `unsure` (the default): only
    /// the claims the rules found unsupported, but for a short answer to a question (the judge
    /// supports them, or keeps them flagged); the rules' supported and contradicted verdicts
    /// stand. `all`: every cited claim but the
    /// rules' exact findings (numbers, dates, bounds, negation). Chosen on the tune half of
    /// `paraphrase-dev.jsonl` (BENCHMARKS.md).
    pub trained_scope: TrainedScope,
}

/// Which claims the trained judge decides ([`SupportConfig::trained_scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainedScope {
    /// Only the claims the rules found unsupported.
    #[default]
    Unsure,
    /// Every cited claim but the rules' exact findings.
    All,
}

impl Default for SupportConfig {
    fn default() -> Self {
        SupportConfig {
            common_word_weight: 0.3,
            missing_weight_threshold: 1.0,
            elsewhere_factor: 0.5,
            adjacent_factor: 0.5,
            adjacent_word_factor: 0.25,
            missing_fraction: 0.2,
            derivational_factor: 0.5,
            max_window_sentences: 3,
            window_sentence_penalty: 0.05,
            quantity_weight: 1.0,
            question_term_weight: 0.25,
            contradiction_min_alignment: 0.5,
            polarity_min_alignment: 0.6,
            negation_scope: 5,
            idle_min_weight: 1.0,
            shared_term_damping: 0.5,
            damping_min_passages: 3,
            slot_lookahead: 3,
            check_quantities: true,
            check_polarity: true,
            check_restriction: true,
            check_entity_slots: true,
            check_synonyms: true,
            check_antonyms: true,
            overrule_similarity: 0.85,
            trained_entailed: 0.53,
            trained_contradicted: 0.5,
            trained_scope: TrainedScope::Unsure,
        }
    }
}

/// One answer sentence to judge.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// The answer sentence as written. It may contain citation markers such as `[2]`, `[1][3]`,
    /// `[1, 3]`, `[2-4]` (the grammar of [`groundcite_text::marker`]), and may start with a list
    /// bullet ("- ", "* ", "1. "): ignore those as content.
    pub text: &'a str,
    /// 1-based numbers of the passages this sentence cites; all valid (in 1..=passages.len()), sorted, unique.
    /// May be empty (an uncited factual sentence): then judge against all passages and fill `suggested`.
    pub cited: &'a [usize],
}

/// The judgement on one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The cited passage(s) state it.
    Supported,
    /// A cited passage states something incompatible with it.
    Contradicted,
    /// The cited passages state neither it nor its opposite.
    Unsupported,
}

/// Where the evidence is: the passage sentences that best align with the claim.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Evidence {
    /// 1-based passage number.
    pub passage: usize,
    /// Byte offset into that passage's text (on a char boundary, trimmed).
    pub start: usize,
    /// Byte offset of the end (exclusive).
    pub end: usize,
}

/// A machine-readable reason. `Display` (and `Serialize`) give the stable string form, e.g.
/// `number_mismatch: "14 days" vs "30 days"`, `negation`, `missing: ["Chromebook"]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// A number, amount, duration or percentage for the same thing differs.
    NumberMismatch {
        /// As written in the claim.
        claim: String,
        /// As written in the passage.
        evidence: String,
    },
    /// A weekday or month differs.
    DateMismatch {
        /// As written in the claim.
        claim: String,
        /// As written in the passage.
        evidence: String,
    },
    /// Same value, opposite bounds ("at most 30 days" vs "at least 30 days").
    BoundMismatch {
        /// The claim's bound and quantity.
        claim: String,
        /// The passage's bound and quantity.
        evidence: String,
    },
    /// Opposite polarity (a negation or a negating prefix on one side only).
    Negation,
    /// A word of opposite meaning ("optional" where the passage says "required").
    Antonym {
        /// As written in the claim.
        claim: String,
        /// As written in the passage.
        evidence: String,
    },
    /// The claim restricts ("only") where the passage does not.
    Restriction {
        /// The restricting cue.
        cue: String,
    },
    /// Another entity in the same slot ("tablet" where the passage says "phone").
    EntityMismatch {
        /// As written in the claim.
        claim: String,
        /// As written in the passage.
        evidence: String,
    },
    /// The claim names one item of a list or table but states what another item says
    /// ("Synthetics handles log management" where the list gives log management to Logs).
    ListMixup {
        /// The label of the item the claim names, as written in the passage.
        claim: String,
        /// The label of the item that says it.
        evidence: String,
    },
    /// Claim terms or quantities found in no evidence window.
    Missing(Vec<String>),
    /// Nothing in the judged passages aligns with the claim.
    NoAlignment,
    /// Stated by passages the sentence did not cite (1-based), alone or with the cited ones.
    UncitedSupport(Vec<usize>),
    /// A note: what could not be checked (the verdict does not rest on it).
    Unchecked(String),
    /// A note of the [`SemanticVerifier`]: words were missing, but a cited sentence (or pair)
    /// says the same with this cosine similarity.
    Paraphrase {
        /// The cosine, rounded to two decimals.
        similarity: f32,
    },
    /// The verdict of the LLM judge ([`LlmVerifier`]), which replaced the rules': shown as
    /// `judge_supported`, `judge_contradicted` or `judge_unsupported` with its explanation.
    Judge {
        /// What the judge decided.
        verdict: Verdict,
        /// Its one-sentence explanation (may be empty).
        explanation: String,
    },
    /// The trained judge's probabilities ([`TrainedVerifier`]), rounded to two decimals: that
    /// the best cited window entails the claim, and that some cited window contradicts it.
    Entailment {
        /// At the window most likely to entail the claim.
        entailed: f32,
        /// At the window most likely to contradict it.
        contradicted: f32,
    },
    /// A note: the LLM judge gave no usable verdict (backend error, deadline, unreadable reply);
    /// the verdict is the inner verifier's.
    JudgeUnavailable(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pair = |f: &mut fmt::Formatter<'_>, name: &str, claim: &str, evidence: &str| {
            f.write_str(name)?;
            f.write_str(": ")?;
            quoted(f, claim)?;
            f.write_str(" vs ")?;
            quoted(f, evidence)
        };
        match self {
            Reason::NumberMismatch { claim, evidence } => {
                pair(f, "number_mismatch", claim, evidence)
            }
            Reason::DateMismatch { claim, evidence } => pair(f, "date_mismatch", claim, evidence),
            Reason::BoundMismatch { claim, evidence } => pair(f, "bound_mismatch", claim, evidence),
            Reason::Negation => f.write_str("negation"),
            Reason::Antonym { claim, evidence } => pair(f, "antonym", claim, evidence),
            Reason::Restriction { cue } => {
                f.write_str("restriction: ")?;
                quoted(f, cue)
            }
            Reason::EntityMismatch { claim, evidence } => {
                pair(f, "entity_mismatch", claim, evidence)
            }
            Reason::ListMixup { claim, evidence } => pair(f, "list_mixup", claim, evidence),
            Reason::Missing(items) => {
                f.write_str("missing: [")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quoted(f, item)?;
                }
                f.write_str("]")
            }
            Reason::NoAlignment => f.write_str("no_alignment"),
            Reason::UncitedSupport(p) => write!(f, "uncited_support: {p:?}"),
            Reason::Unchecked(what) => {
                f.write_str("unchecked: ")?;
                quoted(f, what)
            }
            Reason::Paraphrase { similarity } => write!(f, "paraphrase: {similarity:.2}"),
            Reason::Judge {
                verdict,
                explanation,
            } => {
                f.write_str(match verdict {
                    Verdict::Supported => "judge_supported",
                    Verdict::Contradicted => "judge_contradicted",
                    Verdict::Unsupported => "judge_unsupported",
                })?;
                if explanation.is_empty() {
                    Ok(())
                } else {
                    f.write_str(": ")?;
                    quoted(f, explanation)
                }
            }
            Reason::Entailment {
                entailed,
                contradicted,
            } => write!(
                f,
                "entailment: {entailed:.2} (contradiction: {contradicted:.2})"
            ),
            Reason::JudgeUnavailable(why) => {
                f.write_str("judge_unavailable: ")?;
                quoted(f, why)
            }
        }
    }
}

/// `s` in double quotes, escaped as `{:?}` escapes it (the stable string form of reasons).
/// Printable ASCII without `"` or `\` (nearly every claim word) is written as is.
fn quoted(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        f.write_str("\"")?;
        f.write_str(s)?;
        f.write_str("\"")
    } else {
        write!(f, "{s:?}")
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The judgement on one claim.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Judgement {
    /// Supported, contradicted or unsupported.
    pub verdict: Verdict,
    /// Why (empty for a plain `Supported`; notes may appear).
    pub reasons: Vec<Reason>,
    /// The best-aligned passage sentences, if anything aligned.
    pub evidence: Option<Evidence>,
    /// 1-based passages that would support the sentence: uncited ones that state it (Rule 4),
    /// or, for an uncited sentence, the passage(s) that support it.
    pub suggested: Vec<usize>,
    /// Cited passages (1-based) that support nothing in the sentence (only with 2+ citations).
    pub idle_citations: Vec<usize>,
}

/// Which verifier judged an answer, as reported (`verifier` in the check report).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifierKind {
    /// The lexical rules alone ([`LexicalVerifier`]).
    Lexical,
    /// The lexical rules with sentence similarity from an embedding model.
    Semantic,
    /// An LLM judge.
    Llm,
    /// The lexical rules with groundcite's trained support judge ([`TrainedVerifier`]).
    Trained,
}

impl VerifierKind {
    /// The verifier's name in the check report (`lexical`, `semantic`, `llm`, `trained`).
    pub fn as_str(self) -> &'static str {
        match self {
            VerifierKind::Lexical => "lexical",
            VerifierKind::Semantic => "semantic",
            VerifierKind::Llm => "llm",
            VerifierKind::Trained => "trained",
        }
    }
}

/// Judges claims against the passages that were sent. Implemented by [`LexicalVerifier`]; a
/// model-based verifier (NLI, LLM judge) can implement it too.
pub trait Verifier {
    /// Which verifier this is (reported with every check). Default: [`VerifierKind::Lexical`].
    fn kind(&self) -> VerifierKind {
        VerifierKind::Lexical
    }

    /// Judges every claim of one answer against the passages that were sent (passage k is
    /// `passages[k-1]`): one judgement per claim, in order.
    ///
    /// `markers`: when the caller has already parsed the citation markers (`groundcite-core`
    /// has), `markers[i]` holds the byte spans of the markers of `claims[i]`, relative to its
    /// text, so they are not looked for again; `None` parses them with the same grammar.
    ///
    /// `stop` is asked between claims: when it turns true (the caller's deadline passed, its
    /// client left), the work stops within one claim's and the result is `None`.
    fn verify_until(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: Option<&[Vec<std::ops::Range<usize>>]>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Vec<Judgement>>;

    /// [`Verifier::verify_until`] without parsed markers, to the end.
    fn verify(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
    ) -> Vec<Judgement> {
        self.verify_until(question, passages, claims, None, &|| false)
            .unwrap_or_default()
    }
}

impl<T: Verifier + ?Sized> Verifier for Box<T> {
    fn kind(&self) -> VerifierKind {
        (**self).kind()
    }

    fn verify_until(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: Option<&[Vec<std::ops::Range<usize>>]>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Vec<Judgement>> {
        (**self).verify_until(question, passages, claims, markers, stop)
    }
}

/// The judgement of `verifier` on one claim, `claim` citing the passages `cited` (1-based) of
/// `passages`.
#[cfg(test)]
pub(crate) fn judge_one(
    verifier: &impl Verifier,
    question: Option<&str>,
    passages: &[&str],
    claim: &str,
    cited: &[usize],
) -> Judgement {
    let claims = [Claim { text: claim, cited }];
    verifier.verify(question, passages, &claims).remove(0)
}

#[cfg(test)]
mod tests {
    use super::Reason;

    #[test]
    fn reasons_quote_as_debug_does() {
        for s in [
            "14 days",
            "it's",
            "say \"hi\"",
            "a\\b",
            "tab\there",
            "30 días",
            "x\u{a0}y",
        ] {
            let r = Reason::NumberMismatch {
                claim: s.into(),
                evidence: "30 days".into(),
            };
            assert_eq!(
                r.to_string(),
                format!("number_mismatch: {s:?} vs \"30 days\"")
            );
            let items = vec![s.to_string(), "Chromebook".to_string()];
            assert_eq!(
                Reason::Missing(items.clone()).to_string(),
                format!("missing: {items:?}")
            );
            assert_eq!(
                Reason::Unchecked(s.into()).to_string(),
                format!("unchecked: {s:?}")
            );
        }
        assert_eq!(Reason::Missing(Vec::new()).to_string(), "missing: []");
        assert_eq!(
            Reason::UncitedSupport(vec![2, 4]).to_string(),
            "uncited_support: [2, 4]"
        );
    }
}
