//! End-to-end evaluation on labelled questions
//! (`shared/cases/questions-dev.jsonl`, `questions-paraphrase-dev.jsonl`):
//! retrieval recall at 1/3/5, answers that state the fact with a citation,
//! refusals (by reason) of what the corpus does not answer, and of the hard
//! near-misses. `groundcite eval questions` prints it.

use std::collections::BTreeMap;

use groundcite_core::case::Half;
use serde::{Deserialize, Serialize};

use crate::{AskOptions, Engine, EngineError};

/// A labelled question: one line of a questions file.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    /// A stable id (`qd01`).
    pub id: String,
    /// The question, as asked.
    pub question: String,
    /// Whether the corpus answers it.
    pub answerable: bool,
    /// The pages that answer it (index paths, matched against passage
    /// ids before `#`); empty for an unanswerable question.
    #[serde(default)]
    pub gold: Vec<String>,
    /// Text a correct answer states (matched case-insensitively in a cited
    /// sentence); `None` when not labelled.
    #[serde(default)]
    pub fact: Option<String>,
    /// An unanswerable question that is lexically close to the corpus (a
    /// near-miss). Default `false`.
    #[serde(default)]
    pub hard: bool,
}

/// What happened to one question, and how it scored.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionOutcome {
    /// The question's id.
    pub id: String,
    /// The question, as asked.
    pub question: String,
    /// Whether the corpus answers it (as labelled).
    pub answerable: bool,
    /// An unanswerable question that is lexically close to the corpus.
    pub hard: bool,
    /// 1-based position of the first hit of a gold page among the first
    /// [`RECALL_DEPTH`] hits of the engine's retrieval; `None` when absent
    /// (or the question has no gold page).
    pub gold_rank: Option<usize>,
    /// A gold page among the passages sent.
    pub gold_sent: bool,
    /// The answer states the fact (case-insensitive) in a cited sentence.
    pub fact_cited: bool,
    /// The answer served was a refusal.
    pub refused: bool,
    /// Served and certified: `grounded` (stated in the sources and judged
    /// to answer the question).
    pub grounded: bool,
    /// Served, and its cited sentences stated in the sources.
    pub supported: bool,
    /// The served answer's relevance score (`answers_question.score`):
    /// what `answerability.min_relevance` is fitted on.
    pub relevance_score: Option<f32>,
    /// The half of the by-page split the question falls in.
    pub half: Half,
    /// The refusal's reason (`gate`, `sentinel`, `validation`,
    /// `no_direct_answer`); `None` when an answer was served.
    pub refusal_reason: Option<String>,
    /// The best retrieval score among the passages sent; `None` when none
    /// was sent or none has a score.
    pub best_score: Option<f32>,
    /// The text served.
    pub answer: String,
    /// The whole `ask`, in milliseconds.
    pub total_ms: f64,
    /// The model path's answerability score of the question: its best
    /// answer unit's score among the passages sent (the cosine or the
    /// trained judge's probability, adjusted by the answer type). `None`
    /// without a model, or when no unit was sent.
    pub unit_score: Option<f32>,
    /// For an answerable question with a labelled fact whose gold page was
    /// sent, on the model path: the unit the judge ranked first states the
    /// fact. `None` otherwise.
    pub ranked_first_states_fact: Option<bool>,
}

/// The figures of a set of questions.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Figures {
    /// Questions counted.
    pub questions: usize,
    /// Of them, questions the corpus answers.
    pub answerable: usize,
    /// Answerable questions with a gold page among the first 1, 3 and 5
    /// hits.
    pub recall_at_1: usize,
    /// Answerable questions with a gold page among the first 3 hits.
    pub recall_at_3: usize,
    /// Answerable questions with a gold page among the first 5 hits.
    pub recall_at_5: usize,
    /// Answerable questions with a gold page among the passages sent.
    pub gold_sent: usize,
    /// Answerable questions answered with the fact in a cited sentence.
    pub fact_cited: usize,
    /// Answers served as `grounded` (both claims certified) that a reader
    /// should not trust: an answerable question answered without the
    /// fact, or a question the corpus does not answer answered at all.
    /// Counted over every question.
    pub certified_without_fact: usize,
    /// Answers served (not refused) to questions the corpus does not
    /// answer, certified or not.
    pub served_unanswerable: usize,
    /// Questions the corpus does not answer.
    pub unanswerable: usize,
    /// Of them, those refused.
    pub refused_unanswerable: usize,
    /// Unanswerable questions marked `hard` (near-misses), and how many
    /// were refused.
    pub hard: usize,
    /// `hard` questions refused.
    pub refused_hard: usize,
    /// Answerable questions refused.
    pub refused_answerable: usize,
    /// Refusals of answerable questions, by reason.
    pub answerable_refusals: BTreeMap<String, usize>,
    /// Refusals of unanswerable questions, by reason.
    pub unanswerable_refusals: BTreeMap<String, usize>,
    /// Answerable questions with a labelled fact whose gold page was sent,
    /// judged on the model path: what `ranked_first_states_fact` counts of.
    pub ranked: usize,
    /// Of the `ranked` questions, those whose first-ranked unit states the
    /// fact.
    pub ranked_first_states_fact: usize,
    /// How well the judge's score of a question ([`QuestionOutcome::unit_score`])
    /// separates answerable questions from unanswerable ones: the chance
    /// that a random answerable question outscores a random unanswerable
    /// one (ROC AUC; ties count half). `None` without scores on both sides.
    pub auc_unanswerable: Option<f64>,
    /// The same against the hard near-misses only.
    pub auc_hard: Option<f64>,
}

impl Figures {
    /// The AUCs of [`Figures`] over `outcomes` (those of these figures).
    fn separation<'a>(&mut self, outcomes: impl Iterator<Item = &'a QuestionOutcome>) {
        let (mut answerable, mut unanswerable, mut hard) = (Vec::new(), Vec::new(), Vec::new());
        for o in outcomes {
            let Some(score) = o.unit_score else { continue };
            if o.answerable {
                answerable.push(score);
            } else {
                unanswerable.push(score);
                if o.hard {
                    hard.push(score);
                }
            }
        }
        self.auc_unanswerable = auc(&answerable, &unanswerable);
        self.auc_hard = auc(&answerable, &hard);
    }

    fn add(&mut self, o: &QuestionOutcome) {
        self.questions += 1;
        let reason = o.refusal_reason.clone();
        let certified_wrong = o.grounded && (!o.answerable || !o.fact_cited);
        self.certified_without_fact += usize::from(certified_wrong);
        if o.answerable {
            self.answerable += 1;
            let rank = o.gold_rank;
            self.recall_at_1 += usize::from(rank.is_some_and(|r| r <= 1));
            self.recall_at_3 += usize::from(rank.is_some_and(|r| r <= 3));
            self.recall_at_5 += usize::from(rank.is_some_and(|r| r <= 5));
            if let Some(reason) = reason {
                *self.answerable_refusals.entry(reason).or_default() += 1;
            }
            self.gold_sent += usize::from(o.gold_sent);
            self.fact_cited += usize::from(o.fact_cited);
            self.refused_answerable += usize::from(o.refused);
            if let Some(first) = o.ranked_first_states_fact {
                self.ranked += 1;
                self.ranked_first_states_fact += usize::from(first);
            }
        } else {
            self.unanswerable += 1;
            self.refused_unanswerable += usize::from(o.refused);
            self.served_unanswerable += usize::from(!o.refused);
            self.hard += usize::from(o.hard);
            self.refused_hard += usize::from(o.hard && o.refused);
            if let Some(reason) = reason {
                *self.unanswerable_refusals.entry(reason).or_default() += 1;
            }
        }
    }
}

/// The figures of a questions file: over every question, and over each
/// half of the by-page split (thresholds are fitted on `tune`; `held_out`
/// is the half to report).
#[derive(Debug, Clone, Serialize, Default)]
pub struct QuestionsSummary {
    /// `lexical` or `hybrid`: which retrieval ran.
    pub retrieval: String,
    /// How relevance was judged: `semantic` (the embedding model),
    /// `trained` (the trained answer judge), or not at all (`lexical`):
    /// then no answer is certified.
    pub relevance: String,
    /// The figures over every question (flattened into this object's JSON).
    #[serde(flatten)]
    pub all: Figures,
    /// The figures over the `tune` half (where thresholds are fitted).
    pub tune: Figures,
    /// The figures over the held-out half (the half to report).
    pub held_out: Figures,
    /// Every question's outcome, in file order.
    pub outcomes: Vec<QuestionOutcome>,
}

impl std::ops::Deref for QuestionsSummary {
    type Target = Figures;
    fn deref(&self) -> &Figures {
        &self.all
    }
}

/// The half of the by-page split a question falls in: its first gold
/// page's, as for the labelled cases (every question of a page in the
/// same half); a question with no gold page (one the corpus does not
/// answer) by its id, the same way.
pub fn half(q: &Question) -> Half {
    groundcite_core::case::half_of(q.gold.first().unwrap_or(&q.id))
}

/// The chance that a score of `pos` exceeds one of `neg`, ties counting
/// half (the ROC AUC); `None` when either side is empty.
pub fn auc(pos: &[f32], neg: &[f32]) -> Option<f64> {
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let wins: f64 = pos
        .iter()
        .flat_map(|p| {
            neg.iter().map(move |n| match p.partial_cmp(n) {
                Some(std::cmp::Ordering::Greater) => 1.0,
                Some(std::cmp::Ordering::Equal) => 0.5,
                _ => 0.0,
            })
        })
        .sum();
    Some(wins / (pos.len() * neg.len()) as f64)
}

/// How many hits recall is measured on (recall@1/3/5).
pub const RECALL_DEPTH: usize = 5;

/// `part` of `whole` as a percentage (0 for an empty whole).
pub fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

/// Asks every question and scores it. `gold` paths are matched against
/// the passage ids (`path#Lx-Ly`).
pub async fn questions(
    engine: &Engine,
    questions: &[Question],
) -> Result<QuestionsSummary, EngineError> {
    let mut summary = QuestionsSummary {
        retrieval: engine.retrieval().as_str().to_string(),
        relevance: engine
            .answerability()
            .map_or("lexical", |a| a.method())
            .to_string(),
        ..QuestionsSummary::default()
    };
    for q in questions {
        let hits = engine.search(&q.question, RECALL_DEPTH)?;
        let gold_rank = hits
            .iter()
            .position(|h| q.gold.contains(&h.chunk.path))
            .map(|i| i + 1);
        // The judge's view of the passages the ask will send (the ask
        // reuses this judgement).
        let judged = engine.judge(&q.question, &AskOptions::default())?;
        let r = engine.ask(&q.question, &AskOptions::default()).await?;
        let gold_sent = r.passages.iter().any(|p| {
            q.gold
                .iter()
                .any(|g| p.id.split('#').next() == Some(g.as_str()))
        });
        // A text states the fact when it contains it, case aside.
        let fact = q.fact.as_deref().map(str::to_lowercase);
        let states_fact = |text: &str| {
            fact.as_deref()
                .is_some_and(|fact| text.to_lowercase().contains(fact))
        };
        let fact_cited = r.refusal.is_none()
            && r.sentences
                .iter()
                .any(|s| !s.citations.is_empty() && states_fact(&s.text));
        let refused = r.refusal.is_some();
        let best = judged.as_ref().and_then(|j| {
            let (i, score) = j.judgement.best()?;
            Some((&j.judgement.units[i].text, score))
        });
        let ranked_first_states_fact = match best {
            Some((text, _)) if fact.is_some() && q.answerable && gold_sent => {
                Some(states_fact(text))
            }
            _ => None,
        };
        let outcome = QuestionOutcome {
            unit_score: best.map(|(_, score)| score),
            ranked_first_states_fact,
            half: half(q),
            grounded: !refused && r.grounded,
            supported: !refused && r.supported,
            relevance_score: r.answers_question.as_ref().and_then(|a| a.score),
            id: q.id.clone(),
            question: q.question.clone(),
            answerable: q.answerable,
            hard: q.hard,
            gold_rank,
            gold_sent,
            fact_cited,
            refused,
            refusal_reason: r.refusal.as_ref().map(|x| {
                serde_json::to_value(x.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            }),
            best_score: r.passages.iter().filter_map(|p| p.score).reduce(f32::max),
            answer: r.answer.clone(),
            total_ms: r.timings.total_ms,
        };
        summary.all.add(&outcome);
        match outcome.half {
            Half::Tune => summary.tune.add(&outcome),
            Half::Held => summary.held_out.add(&outcome),
        }
        summary.outcomes.push(outcome);
    }
    let outcomes = &summary.outcomes;
    summary.all.separation(outcomes.iter());
    summary
        .tune
        .separation(outcomes.iter().filter(|o| o.half == Half::Tune));
    summary
        .held_out
        .separation(outcomes.iter().filter(|o| o.half == Half::Held));
    Ok(summary)
}

/// Reads a JSONL questions file's text.
pub fn parse_questions(text: &str) -> Result<Vec<Question>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::auc;

    #[test]
    fn auc_is_the_chance_a_positive_outscores_a_negative() {
        assert_eq!(auc(&[0.9, 0.8], &[0.1, 0.2]), Some(1.0));
        assert_eq!(auc(&[0.1], &[0.9]), Some(0.0));
        // Ties count half; one win of two pairs plus a tie.
        assert_eq!(auc(&[0.5, 0.7], &[0.5]), Some(0.75));
        assert_eq!(auc(&[], &[0.5]), None);
        assert_eq!(auc(&[0.5], &[]), None);
    }
}
