//! End-to-end evaluation on labelled questions
//! (`shared/cases/questions-dev.jsonl`, `questions-paraphrase-dev.jsonl`):
//! retrieval recall at 1/3/5, answers that state the fact with a citation,
//! refusals (by reason) of what the corpus does not answer, and of the hard
//! near-misses. `groundcite eval questions` prints it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{AskOptions, Engine, EngineError};

#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    pub id: String,
    pub question: String,
    pub answerable: bool,
    #[serde(default)]
    pub gold: Vec<String>,
    #[serde(default)]
    pub fact: Option<String>,
    #[serde(default)]
    pub hard: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuestionOutcome {
    pub id: String,
    pub question: String,
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
    pub refused: bool,
    pub refusal_reason: Option<String>,
    pub best_score: Option<f32>,
    pub answer: String,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct QuestionsSummary {
    /// `lexical` or `hybrid`: which retrieval ran.
    pub retrieval: String,
    pub answerable: usize,
    /// Answerable questions with a gold page among the first 1, 3 and 5
    /// hits.
    pub recall_at_1: usize,
    pub recall_at_3: usize,
    pub recall_at_5: usize,
    pub gold_sent: usize,
    pub fact_cited: usize,
    pub unanswerable: usize,
    pub refused_unanswerable: usize,
    /// Unanswerable questions marked `hard` (near-misses), and how many
    /// were refused.
    pub hard: usize,
    pub refused_hard: usize,
    pub refused_answerable: usize,
    /// Refusals of answerable questions, by reason.
    pub answerable_refusals: BTreeMap<String, usize>,
    /// Refusals of unanswerable questions, by reason.
    pub unanswerable_refusals: BTreeMap<String, usize>,
    pub outcomes: Vec<QuestionOutcome>,
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
        ..QuestionsSummary::default()
    };
    for q in questions {
        let hits = engine.search(&q.question, RECALL_DEPTH)?;
        let gold_rank = hits
            .iter()
            .position(|h| q.gold.contains(&h.chunk.path))
            .map(|i| i + 1);
        let r = engine.ask(&q.question, &AskOptions::default()).await?;
        let gold_sent = r.passages.iter().any(|p| {
            q.gold
                .iter()
                .any(|g| p.id.split('#').next() == Some(g.as_str()))
        });
        let fact_cited = q.fact.as_ref().is_some_and(|fact| {
            let fact = fact.to_lowercase();
            r.refusal.is_none()
                && r.sentences
                    .iter()
                    .any(|s| !s.citations.is_empty() && s.text.to_lowercase().contains(&fact))
        });
        let refused = r.refusal.is_some();
        let outcome = QuestionOutcome {
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
        let reason = outcome.refusal_reason.clone();
        if q.answerable {
            summary.answerable += 1;
            summary.recall_at_1 += usize::from(gold_rank.is_some_and(|r| r <= 1));
            summary.recall_at_3 += usize::from(gold_rank.is_some_and(|r| r <= 3));
            summary.recall_at_5 += usize::from(gold_rank.is_some_and(|r| r <= 5));
            if let Some(reason) = reason {
                *summary.answerable_refusals.entry(reason).or_default() += 1;
            }
            summary.gold_sent += usize::from(gold_sent);
            summary.fact_cited += usize::from(fact_cited);
            summary.refused_answerable += usize::from(refused);
        } else {
            summary.unanswerable += 1;
            summary.refused_unanswerable += usize::from(refused);
            summary.hard += usize::from(q.hard);
            summary.refused_hard += usize::from(q.hard && refused);
            if let Some(reason) = reason {
                *summary.unanswerable_refusals.entry(reason).or_default() += 1;
            }
        }
        summary.outcomes.push(outcome);
    }
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
