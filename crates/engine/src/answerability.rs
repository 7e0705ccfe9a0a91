//! Does a passage sentence answer the question? The model path of the
//! gate, of the extractive generator and of `answers_question`.
//!
//! With an embedding model (`model_dir`), the passages sent are cut into
//! answer units ([`units`]: sentences; list items with their lead-in; table
//! rows with their header, embedded after the section label), the
//! question and every unit are embedded in one
//! batch, and each unit scores its cosine similarity to the question,
//! adjusted by the question's answer type ([`AnswerType`]): "how long"
//! wants a duration, "how many" a count, "when" a date or a time span,
//! "how much" an amount. A unit that holds a quantity of that kind gains
//! [`AnswerabilityConfig::type_bonus`]; one that holds none loses
//! [`AnswerabilityConfig::type_penalty`]. Quantities come from the text
//! layer (`groundcite_text::quantity`).
//!
//! The gate ([`Answerability::decide`]) answers when the best unit's score
//! plus [`AnswerabilityConfig::retrieval_weight`] times the best retrieval
//! score reaches [`AnswerabilityConfig::min_answer`]. Otherwise it refuses:
//! with `no_direct_answer` (and the closest passages) when a passage was
//! strong, with `gate` when nothing was. Retrieval scores alone do not
//! separate answerable questions from near-misses (measured: an
//! AUC of about 0.46), hence a judgement over sentences.
//!
//! `answers_question` ([`Answerability::answers_question`]) scores the
//! answer served, whatever generated it, with the same unit score against
//! the question: its best sentence must reach
//! [`AnswerabilityConfig::min_relevance`].
//!
//! The defaults are fitted by `cargo run -p groundcite-bench --release
//! --bin fit_answerability [INDEX_DIR]` (BENCHMARKS.md) under
//! hybrid retrieval, on half of the handbook's pages, and reported on the
//! other half.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

pub use groundcite_core::unit::{AnswerUnit, UnitKind, units};
use groundcite_embed::{Embedder, Judges, Part, cosine};
use groundcite_index::vectors::{ChunkTexts, UnitVectorScheme, UnitVectors};
use groundcite_text::quantity::{self, Quantity, Unit as QuantityUnit};
use serde::{Deserialize, Serialize};

/// The thresholds of the model path, with their fitted defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerabilityConfig {
    /// Answer when the best unit's score plus `retrieval_weight` × the
    /// best retrieval score reaches this. Default 0.63 (fitted).
    pub min_answer: f32,
    /// The weight of the best retrieval score in the gate. Default 0
    /// (fitted: under hybrid retrieval it adds nothing the units lack).
    pub retrieval_weight: f32,
    /// A passage is strong (the refusal is `no_direct_answer`, with the
    /// closest passages, rather than `gate`) when its retrieval score
    /// reaches the lexical gate threshold or its best unit scores at least
    /// this. Default 0.45.
    pub strong_unit: f32,
    /// A unit that holds a quantity of the kind the question asks for
    /// gains this. Default 0.1 (fitted).
    pub type_bonus: f32,
    /// A unit that holds none loses this. Default 0.2 (fitted).
    pub type_penalty: f32,
    /// `answers_question` is `yes` when the answer's best sentence scores
    /// at least this against the question. Default 0.72: the lowest
    /// threshold that certifies at most 5% of the tune half's questions
    /// without the fact, on both handbook question files
    /// (`bench/fit-relevance.py` over `eval questions --json`).
    pub min_relevance: f32,
    /// A further unit joins the extractive answer when it is in the same
    /// passage and scores within this of the best. Default 0.05.
    pub second_margin: f32,
    /// What scores a unit against the question: `embedding` (the cosine
    /// of their vectors, the default) or `trained` (the trained judges'
    /// answer head, the probability that the unit answers; needs
    /// `judges_dir`). The thresholds above are the embedding's; the
    /// trained judge's are under `[answerability.trained]`.
    pub scorer: UnitScorer,
    /// The gate's and `answers_question`'s thresholds with
    /// `scorer = "trained"`.
    pub trained: TrainedThresholds,
}

/// What scores an answer unit against a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitScorer {
    /// The cosine of the unit's and the question's vectors.
    #[default]
    Embedding,
    /// The trained judges' answer head.
    Trained,
}

/// The thresholds of the trained answer judge (its scores are
/// probabilities, adjusted by the answer type as the cosine is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainedThresholds {
    /// Answer when the best unit scores at least this. Default 0.5.
    pub min_answer: f32,
    /// A passage is strong when its best unit scores at least this.
    /// Default 0.2.
    pub strong_unit: f32,
    /// `answers_question` is `yes` at or above this. Default 0.5.
    pub min_relevance: f32,
}

impl Default for TrainedThresholds {
    fn default() -> Self {
        TrainedThresholds {
            min_answer: 0.5,
            strong_unit: 0.2,
            min_relevance: 0.5,
        }
    }
}

impl Default for AnswerabilityConfig {
    fn default() -> Self {
        AnswerabilityConfig {
            min_answer: 0.63,
            retrieval_weight: 0.0,
            strong_unit: 0.45,
            type_bonus: 0.1,
            type_penalty: 0.2,
            min_relevance: 0.72,
            second_margin: 0.05,
            scorer: UnitScorer::Embedding,
            trained: TrainedThresholds::default(),
        }
    }
}

/// What kind of answer a question asks for, from its wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerType {
    /// "how long", "how many days": a span of time.
    Duration,
    /// "how often": a frequency.
    Frequency,
    /// "how many": a count.
    Count,
    /// "how much", "what percentage", "what ... rate / fee / cost / limit":
    /// an amount.
    Amount,
    /// "when", "what date", "by when", "what time", "deadline": a date, a
    /// day or a span of time.
    Date,
    /// Anything else (including "who": roles are not told apart by
    /// quantities).
    Other,
}

impl AnswerType {
    /// The answer type of `question`.
    pub fn of(question: &str) -> AnswerType {
        let q = question.to_lowercase();
        let has = |cues: &[&str]| cues.iter().any(|c| contains_phrase(&q, c));
        if has(&["how often"]) {
            AnswerType::Frequency
        } else if has(&["how long", "how soon", "how much time", "how much notice"])
            || counts_time(&q)
        {
            AnswerType::Duration
        } else if has(&["how many"]) {
            AnswerType::Count
        } else if has(&[
            "how much",
            "how big",
            "how large",
            "what percentage",
            "what percent",
        ]) || (q.starts_with("what") && has(AMOUNT_WORDS))
        {
            AnswerType::Amount
        } else if asks_when(&q)
            || has(&[
                "what date",
                "what day",
                "what time",
                "deadline",
                "by what date",
            ])
        {
            AnswerType::Date
        } else {
            AnswerType::Other
        }
    }

    /// Whether a text holding `quantities` (and `text`'s words) can state
    /// an answer of this type. `None` for [`AnswerType::Other`]: no cue.
    pub fn held_by(self, text: &str, quantities: &[Quantity]) -> Option<bool> {
        // "One of our meetings" picks from a group: not a count.
        let counted = |q: &&Quantity| {
            !(q.unit == QuantityUnit::Bare
                && text
                    .get(q.end as usize..)
                    .and_then(|rest| rest.trim_start().get(..3))
                    .is_some_and(|w| w.eq_ignore_ascii_case("of ")))
        };
        let any =
            |f: fn(QuantityUnit) -> bool| quantities.iter().filter(counted).any(|q| f(q.unit));
        let span = |u: QuantityUnit| matches!(u, QuantityUnit::Days(_) | QuantityUnit::BusinessDay);
        // "There is no limit": the answer to how many, how much or how long.
        let unbounded = || {
            let t = text.to_lowercase();
            UNBOUNDED.iter().any(|w| contains_phrase(&t, w))
        };
        Some(match self {
            AnswerType::Other => return None,
            AnswerType::Duration => any(span) || unbounded(),
            AnswerType::Count => any(|_| true) || unbounded(),
            // "How much leave", "how much is the fee": an amount of
            // anything, time included.
            AnswerType::Amount => {
                any(|u| {
                    matches!(
                        u,
                        QuantityUnit::Money
                            | QuantityUnit::Percent
                            | QuantityUnit::Bare
                            | QuantityUnit::Other(_)
                            | QuantityUnit::Days(_)
                            | QuantityUnit::BusinessDay
                    )
                }) || unbounded()
            }
            AnswerType::Date => any(|u| {
                matches!(
                    u,
                    QuantityUnit::Days(_)
                        | QuantityUnit::BusinessDay
                        | QuantityUnit::Weekday
                        | QuantityUnit::MonthName
                        | QuantityUnit::CalendarYear
                        | QuantityUnit::Ordinal(_)
                )
            }),
            AnswerType::Frequency => {
                any(|u| {
                    matches!(
                        u,
                        QuantityUnit::Days(_) | QuantityUnit::Weekday | QuantityUnit::MonthName
                    )
                }) || {
                    let t = text.to_lowercase();
                    FREQUENCY_WORDS.iter().any(|w| contains_phrase(&t, w))
                }
            }
        })
    }
}

/// "how many" followed, within three words, by a unit of time ("how many
/// vacation days").
fn counts_time(question: &str) -> bool {
    question.match_indices("how many").any(|(i, m)| {
        question[i + m.len()..]
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .take(3)
            .any(|w| TIME_UNITS.contains(&w))
    })
}

/// "when" asking for a time: the first word of a sentence or a clause
/// ("When are badges processed?", "If I'm sick, when do I tell my
/// manager?") or after a preposition or a conjunction ("by when"). Not
/// "when" joining a clause to a verb or a noun ("let them see when I'm
/// free", "care when I'm older"): that question asks for something else.
fn asks_when(question: &str) -> bool {
    question.match_indices("when").any(|(i, m)| {
        if question[i + m.len()..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric)
        {
            return false;
        }
        let before = &question[..i];
        if before
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
        {
            return false; // inside a word
        }
        let before = before.trim_end();
        match before.chars().next_back() {
            None => true,
            // After punctuation: a new sentence or clause.
            Some(c) if !c.is_alphanumeric() => true,
            Some(_) => {
                let word = before
                    .rsplit(|c: char| !c.is_alphanumeric())
                    .next()
                    .unwrap_or("");
                WHEN_OPENERS.contains(&word)
            }
        }
    })
}

/// Words after which "when" opens a question about time.
const WHEN_OPENERS: &[&str] = &["by", "until", "since", "and", "or", "but", "so", "then"];

/// Words that make a "what" question ask for an amount ("What is the per
/// diem rate?", "What's the biggest file I can send?").
const AMOUNT_WORDS: &[&str] = &[
    "maximum",
    "minimum",
    "biggest",
    "largest",
    "smallest",
    "rate",
    "fee",
    "fees",
    "cost",
    "price",
    "amount",
    "limit",
    "salary",
    "percentage",
];

const TIME_UNITS: &[&str] = &[
    "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months",
    "year", "years",
];

/// Words that state there is no bound on a count, an amount or a span.
const UNBOUNDED: &[&str] = &["no limit", "no time limit", "unlimited", "no maximum"];

/// Words that state a frequency without a number.
const FREQUENCY_WORDS: &[&str] = &[
    "every",
    "each",
    "daily",
    "weekly",
    "monthly",
    "quarterly",
    "annually",
    "yearly",
    "biweekly",
];

/// `phrase` in `text` at word boundaries (both lower-cased).
pub(crate) fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(i, m)| {
        let before = text[..i].chars().next_back();
        let after = text[i + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The quantities of a text, read by the text layer.
pub(crate) fn quantities(text: &str) -> Vec<Quantity> {
    let mut tokens = Vec::new();
    groundcite_text::tokenize(text, &[], false, &mut tokens);
    let mut out = Vec::new();
    quantity::extract(text, &tokens, &mut out);
    out
}

/// The units of the passages sent, scored against a question.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// What kind of answer the question asks for.
    pub answer_type: AnswerType,
    /// The answer units of the passages sent, in passage order.
    pub units: Vec<AnswerUnit>,
    /// Each unit's score against the question: the cosine of their
    /// vectors, or the trained judge's probability that it answers.
    pub similarity: Vec<f32>,
    /// The similarity adjusted by the answer type: what units are ranked by.
    pub score: Vec<f32>,
}

impl Judgement {
    /// The best unit's index and score.
    pub fn best(&self) -> Option<(usize, f32)> {
        self.score
            .iter()
            .copied()
            .enumerate()
            .reduce(|a, b| if b.1 > a.1 { b } else { a })
    }

    /// The best unit's score of each passage `1..=n`, `None` for a passage
    /// with no unit.
    pub fn passage_best(&self, n: usize) -> Vec<Option<f32>> {
        let mut best = vec![None; n];
        for (u, &s) in self.units.iter().zip(&self.score) {
            if let Some(slot) = best.get_mut(u.passage - 1) {
                *slot = Some(slot.map_or(s, |b: f32| b.max(s)));
            }
        }
        best
    }
}

/// What the model-path gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateDecision {
    /// Some unit answers: generate.
    Answer,
    /// A strong passage was found but nothing in it answers.
    NoDirectAnswer,
    /// Nothing relevant was found.
    Refuse,
}

/// The served answer's relevance to the question (`answers_question` in
/// every report of an answer).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswersQuestion {
    /// The best answer sentence's score against the question (cosine
    /// similarity adjusted by the answer type), among the sentences that
    /// hold the kind of quantity the question asks for; `null` when not
    /// computed or when no sentence holds one.
    pub score: Option<f32>,
    /// `yes`, `no`, or `unchecked` (no embedding model is configured: the
    /// lexical path ran and relevance was not judged).
    pub verdict: Relevance,
    /// `semantic` (the embedding model judged), `trained` (the trained
    /// answer judge did) or `lexical` (no model: unchecked).
    pub method: &'static str,
}

/// Whether the answer served addresses the question
/// (`answers_question.verdict`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    /// The answer addresses the question.
    Yes,
    /// The answer does not address the question.
    No,
    /// Not judged: no embedding model is configured.
    Unchecked,
}

impl AnswersQuestion {
    /// Without a model: not judged, and said so.
    pub fn unchecked() -> AnswersQuestion {
        AnswersQuestion {
            score: None,
            verdict: Relevance::Unchecked,
            method: "lexical",
        }
    }

    /// The answer does not address the question.
    pub fn is_no(&self) -> bool {
        self.verdict == Relevance::No
    }

    /// The answer was judged to address the question.
    pub fn is_yes(&self) -> bool {
        self.verdict == Relevance::Yes
    }

    /// The `grounded` claim of an answer to a question: its sentences are
    /// stated in the sources (`supported`) and it was judged to answer
    /// the question. Unjudged (no model) or `no` is never grounded.
    pub fn grounds(&self, supported: bool) -> bool {
        supported && self.is_yes()
    }
}

/// How many judgements are remembered: the gate's judgement of a request
/// is reused by the extractive generator of the same request.
const MEMO: usize = 16;

type MemoEntry = (String, Arc<Judgement>);

/// The model path: an embedder (and, with `scorer = "trained"`, the
/// trained judges) and the thresholds.
pub struct Answerability {
    embedder: Arc<Embedder>,
    judges: Option<Arc<Judges>>,
    /// How units without stored vectors are embedded: as the index's were.
    unit_vectors: UnitVectorScheme,
    /// The thresholds (`[answerability]` in groundcite.toml).
    pub config: AnswerabilityConfig,
    memo: Mutex<VecDeque<MemoEntry>>,
}

impl std::fmt::Debug for Answerability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answerability")
            .field("model", &self.embedder.model_id())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// An embedding failure, as text (the model failed at inference).
pub type JudgeError = String;

impl Answerability {
    /// The path scoring units by cosine similarity to the question, under
    /// `config`'s thresholds.
    pub fn new(embedder: Arc<Embedder>, config: AnswerabilityConfig) -> Answerability {
        Answerability {
            embedder,
            judges: None,
            unit_vectors: UnitVectorScheme::default(),
            config,
            memo: Mutex::new(VecDeque::new()),
        }
    }

    /// The same path scoring units with the trained judges' answer head
    /// (`scorer = "trained"`), under `config.trained`'s thresholds.
    pub fn with_judges(mut self, judges: Arc<Judges>) -> Answerability {
        self.judges = Some(judges);
        self
    }

    /// The same path embedding the units of passages without stored
    /// vectors under `scheme`, the index's (`unit_vectors` in the
    /// configuration), so every unit is scored on one scale.
    pub fn with_unit_vectors(mut self, scheme: UnitVectorScheme) -> Answerability {
        self.unit_vectors = scheme;
        self
    }

    /// `(min_answer, strong_unit, min_relevance)` of the scorer in use.
    fn thresholds(&self) -> (f32, f32, f32) {
        let c = &self.config;
        match self.judges {
            Some(_) => (
                c.trained.min_answer,
                c.trained.strong_unit,
                c.trained.min_relevance,
            ),
            None => (c.min_answer, c.strong_unit, c.min_relevance),
        }
    }

    /// The scorer in use, as reported (`answers_question.method`).
    pub fn method(&self) -> &'static str {
        match self.judges {
            Some(_) => "trained",
            None => "semantic",
        }
    }

    /// The embedding model in use.
    pub fn embedder(&self) -> &Arc<Embedder> {
        &self.embedder
    }

    /// Scores the units of `passages` (`(section, text)`, passage `k` is
    /// `passages[k-1]`) against `question`, embedding them in one batch.
    /// The same inputs give the same judgement; the last few are
    /// remembered, so the extractive generator reuses the gate's.
    pub fn judge(
        &self,
        question: &str,
        passages: &[(&str, &str)],
    ) -> Result<Arc<Judgement>, JudgeError> {
        self.judge_with(question, passages, &[])
    }

    /// [`Answerability::judge`], reusing unit vectors computed at ingest:
    /// `known[k-1]`, when given, holds the vectors of passage `k`'s units
    /// (the index stores them per chunk, in the order of [`units`]). A
    /// passage whose stored vectors do not line up with its units (another
    /// count or size) is embedded as if none were given. Only the question
    /// and the units without vectors are embedded.
    pub fn judge_with(
        &self,
        question: &str,
        passages: &[(&str, &str)],
        known: &[Option<&UnitVectors>],
    ) -> Result<Arc<Judgement>, JudgeError> {
        let mut key = String::from(question);
        for (section, text) in passages {
            key.push('\u{1}');
            key.push_str(section);
            key.push('\u{2}');
            key.push_str(text);
        }
        if let Some((_, j)) = self.lock().iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(j));
        }
        let units = units(passages);
        if let Some(judges) = &self.judges {
            let pairs: Vec<(&str, &str)> = units
                .iter()
                .map(|u| (question, u.embedded.as_str()))
                .collect();
            let similarity = judges
                .answers(&pairs)
                .map_err(|e| format!("trained judges: {e}"))?;
            return Ok(self.remember(key, question, units, similarity));
        }
        let dim = self.embedder.dim();
        // Each unit's stored vector, where the passage's line up.
        let mut stored: Vec<Option<&[f32]>> = vec![None; units.len()];
        let mut start = 0;
        for k in 1..=passages.len() {
            let end = start + units[start..].iter().take_while(|u| u.passage == k).count();
            if let Some(Some(vectors)) = known.get(k - 1)
                && vectors.dim == dim
                && vectors.len() == end - start
            {
                for (i, slot) in stored[start..end].iter_mut().enumerate() {
                    *slot = Some(vectors.row(i));
                }
            }
            start = end;
        }
        let (q, fresh) = match self.unit_vectors {
            UnitVectorScheme::Separate | UnitVectorScheme::PooledChunks => {
                let mut texts: Vec<&str> = vec![question];
                texts.extend(
                    units
                        .iter()
                        .zip(&stored)
                        .filter(|(_, v)| v.is_none())
                        .map(|(u, _)| u.embedded.as_str()),
                );
                let vectors = self
                    .embedder
                    .embed(&texts)
                    .map_err(|e| format!("embedding model: {e}"))?;
                (
                    vectors.row(0).to_vec(),
                    vectors.rows().skip(1).map(<[f32]>::to_vec).collect(),
                )
            }
            UnitVectorScheme::PooledUnits => self.pooled(question, passages, &units, &stored)?,
        };
        let mut fresh = fresh.iter();
        let similarity: Vec<f32> = stored
            .iter()
            .map(|v| match v {
                Some(v) => cosine(&q, v),
                None => cosine(&q, fresh.next().expect("one row per unit embedded")),
            })
            .collect();
        Ok(self.remember(key, question, units, similarity))
    }

    /// The question's vector, and those of the units without a stored one
    /// (`stored[i]` `None`), in unit order: each passage holding such
    /// units through the model once, its units pooled from that pass as a
    /// [`UnitVectorScheme::PooledUnits`] ingest does.
    fn pooled(
        &self,
        question: &str,
        passages: &[(&str, &str)],
        units: &[AnswerUnit],
        stored: &[Option<&[f32]>],
    ) -> Result<(Vec<f32>, Vec<Vec<f32>>), JudgeError> {
        let fresh: Vec<ChunkTexts> = (1..=passages.len())
            .filter(|&k| {
                units
                    .iter()
                    .zip(stored)
                    .any(|(u, v)| u.passage == k && v.is_none())
            })
            .map(|k| ChunkTexts::of(passages[k - 1].0, passages[k - 1].1))
            .collect();
        let mut texts: Vec<&str> = vec![question];
        texts.extend(fresh.iter().map(|c| c.text.as_str()));
        let parts: Vec<Part<'_>> = fresh
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.parts(i + 1))
            .collect();
        let vectors = self
            .embedder
            .embed_parts(&texts, &parts)
            .map_err(|e| format!("embedding model: {e}"))?;
        Ok((
            vectors.texts.row(0).to_vec(),
            vectors.parts.rows().map(<[f32]>::to_vec).collect(),
        ))
    }

    /// The judgement of `units` scored `similarity`, remembered under `key`.
    fn remember(
        &self,
        key: String,
        question: &str,
        units: Vec<AnswerUnit>,
        similarity: Vec<f32>,
    ) -> Arc<Judgement> {
        let answer_type = AnswerType::of(question);
        let score = units
            .iter()
            .zip(&similarity)
            .map(|(u, &s)| s + self.type_adjustment(answer_type, &u.embedded))
            .collect();
        let judgement = Arc::new(Judgement {
            answer_type,
            units,
            similarity,
            score,
        });
        let mut memo = self.lock();
        if memo.len() == MEMO {
            memo.pop_front();
        }
        memo.push_back((key, Arc::clone(&judgement)));
        judgement
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<MemoEntry>> {
        // A poisoned memo only lost a cache entry.
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `text` holds an answer of `answer_type` (`None` for
    /// [`AnswerType::Other`]).
    pub fn held(&self, answer_type: AnswerType, text: &str) -> Option<bool> {
        answer_type.held_by(text, &quantities(text))
    }

    /// The bonus or penalty of a text for a question of `answer_type`.
    pub fn type_adjustment(&self, answer_type: AnswerType, text: &str) -> f32 {
        match self.held(answer_type, text) {
            None => 0.0,
            Some(true) => self.config.type_bonus,
            Some(false) => -self.config.type_penalty,
        }
    }

    /// The gate: answer, refuse as `no_direct_answer`, or refuse.
    /// `best_retrieval` is the best normalised retrieval score of the
    /// passages judged, `gate_threshold` the lexical gate's threshold.
    pub fn decide(
        &self,
        judgement: &Judgement,
        best_retrieval: f32,
        gate_threshold: f32,
    ) -> GateDecision {
        let c = &self.config;
        let (min_answer, strong_unit, _) = self.thresholds();
        let best = judgement.best().map_or(f32::NEG_INFINITY, |(_, s)| s);
        if best + c.retrieval_weight * best_retrieval >= min_answer {
            GateDecision::Answer
        } else if best_retrieval >= gate_threshold || best >= strong_unit {
            GateDecision::NoDirectAnswer
        } else {
            GateDecision::Refuse
        }
    }

    /// Scores a served answer against the question: its best sentence
    /// (markers removed) by the unit score. An answer with no sentence
    /// scores `no`.
    pub fn answers_question(
        &self,
        question: &str,
        sentences: &[&str],
    ) -> Result<AnswersQuestion, JudgeError> {
        // Only statements are judged: a label ("Paid Parental Leave") or a
        // question sounds like the topic without answering it.
        let cleaned: Vec<String> = sentences
            .iter()
            .map(|s| strip_markers(s))
            .filter(|s| {
                matches!(
                    crate::standalone::standalone(s, None, "", AnswerType::Other),
                    Ok(()) | Err(crate::standalone::NotAlone::LeadIn)
                )
            })
            .collect();
        let answer_type = AnswerType::of(question);
        // A question that asks for a quantity (how long, how many, when) is
        // answered only by a sentence that holds one of that kind, however
        // close its words: the others are not scored.
        let held: Vec<&str> = cleaned
            .iter()
            .map(String::as_str)
            .filter(|s| self.held(answer_type, s) != Some(false))
            .collect();
        let raw: Vec<f32> = if held.is_empty() {
            Vec::new()
        } else if let Some(judges) = &self.judges {
            let pairs: Vec<(&str, &str)> = held.iter().map(|&s| (question, s)).collect();
            judges
                .answers(&pairs)
                .map_err(|e| format!("trained judges: {e}"))?
        } else {
            let mut texts = vec![question];
            texts.extend(&held);
            let vectors = self
                .embedder
                .embed(&texts)
                .map_err(|e| format!("embedding model: {e}"))?;
            (1..texts.len())
                .map(|i| cosine(vectors.row(0), vectors.row(i)))
                .collect()
        };
        let score = held
            .iter()
            .zip(raw)
            .map(|(s, r)| r + self.type_adjustment(answer_type, s))
            .reduce(f32::max);
        let verdict = match score {
            Some(s) if s >= self.thresholds().2 => Relevance::Yes,
            _ => Relevance::No,
        };
        Ok(AnswersQuestion {
            score,
            verdict,
            method: self.method(),
        })
    }
}

/// A sentence without its citation markers (`[1]`, `[1, 2]`).
fn strip_markers(sentence: &str) -> String {
    let markers = groundcite_text::Markers::parse(sentence);
    let mut out = String::with_capacity(sentence.len());
    let mut pos = 0;
    for m in &markers.markers {
        out.push_str(&sentence[pos..m.start]);
        pos = m.end;
    }
    out.push_str(&sentence[pos..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_types_from_question_cues() {
        let cases = [
            ("How long does reimbursement take?", AnswerType::Duration),
            ("How many vacation days do I get?", AnswerType::Duration),
            ("How many channels are there?", AnswerType::Count),
            ("How often is the report due?", AnswerType::Frequency),
            ("How much can I spend on a laptop?", AnswerType::Amount),
            (
                "What is the per diem rate when I travel?",
                AnswerType::Amount,
            ),
            ("When are badges processed?", AnswerType::Date),
            ("If I'm sick, when do I tell my manager?", AnswerType::Date),
            ("By when is the form due?", AnswerType::Date),
            // "when" joining a clause asks for something else.
            (
                "What's the other way to let them see when I'm free?",
                AnswerType::Other,
            ),
            ("Do I get paid when I'm on jury duty?", AnswerType::Other),
            ("What's the biggest file I can upload?", AnswerType::Amount),
            ("Who approves a bot?", AnswerType::Other),
            ("Is there a coffee bot?", AnswerType::Other),
        ];
        for (q, want) in cases {
            assert_eq!(AnswerType::of(q), want, "{q}");
        }
    }

    #[test]
    fn units_hold_the_kind_of_quantity_asked_for() {
        let held = |t: AnswerType, text: &str| t.held_by(text, &quantities(text));
        assert_eq!(
            held(AnswerType::Duration, "Claims settle within 30 days."),
            Some(true)
        );
        assert_eq!(
            held(AnswerType::Duration, "Claims go to the finance desk."),
            Some(false)
        );
        assert_eq!(
            held(AnswerType::Date, "Badges are processed every Friday."),
            Some(true)
        );
        assert_eq!(held(AnswerType::Amount, "The limit is $2,500."), Some(true));
        // A number picking from a group is not a count.
        assert_eq!(
            held(AnswerType::Count, "Come to one of our meetings."),
            Some(false)
        );
        assert_eq!(
            held(AnswerType::Count, "Up to 40 people can attend."),
            Some(true)
        );
        // No bound is an answer to "how many" and "how much".
        assert_eq!(
            held(
                AnswerType::Count,
                "There is no limit on how often you resubmit."
            ),
            Some(true)
        );
        assert_eq!(
            held(AnswerType::Amount, "Storage is unlimited."),
            Some(true)
        );
        assert_eq!(
            held(AnswerType::Frequency, "It is reviewed annually."),
            Some(true)
        );
        assert_eq!(held(AnswerType::Other, "Anything."), None);
    }

    #[test]
    fn list_items_and_table_rows_carry_their_lead_in_and_header() {
        let text = "To request access you need:\n\n- a signed form\n- your manager's approval\n\n| Plan | Fee |\n|---|---|\n| Basic | $5 |\n";
        let u = units(&[("Access", text)]);
        assert_eq!(u[3].embedded, "Access: Plan: Basic; Fee: $5.");
        let lead = &u[0];
        assert_eq!(lead.text, "To request access you need:");
        assert_eq!(u[1].kind, UnitKind::ListItem { lead_in: Some(0) });
        assert_eq!(u[1].embedded, "To request access you need: a signed form");
        let row = u.iter().find(|x| x.kind == UnitKind::TableRow).unwrap();
        assert_eq!(row.text, "Plan: Basic; Fee: $5.");
    }

    #[test]
    fn markers_are_stripped_before_scoring() {
        assert_eq!(strip_markers("It is 30 days [1]."), "It is 30 days .");
        assert_eq!(strip_markers("No marker."), "No marker.");
    }
}
