//! End-to-end evaluation on labelled questions
//! (`shared/cases/questions-dev.jsonl`): retrieval recall, answers that
//! state the fact with a citation, refusals of what the corpus does not
//! answer.

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
    pub answerable: bool,
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
    pub answerable: usize,
    pub gold_sent: usize,
    pub fact_cited: usize,
    pub unanswerable: usize,
    pub refused_unanswerable: usize,
    pub refused_answerable: usize,
    pub outcomes: Vec<QuestionOutcome>,
}

/// Asks every question and scores it. `gold` paths are matched against
/// the passage ids (`path#Lx-Ly`).
pub async fn questions(
    engine: &Engine,
    questions: &[Question],
) -> Result<QuestionsSummary, EngineError> {
    let mut summary = QuestionsSummary::default();
    for q in questions {
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
            answerable: q.answerable,
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
        if q.answerable {
            summary.answerable += 1;
            summary.gold_sent += usize::from(gold_sent);
            summary.fact_cited += usize::from(fact_cited);
            summary.refused_answerable += usize::from(refused);
        } else {
            summary.unanswerable += 1;
            summary.refused_unanswerable += usize::from(refused);
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
