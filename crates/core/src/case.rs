//! Labelled cases (`shared/cases/README.md`) and their scoring.
//!
//! A case is the input of `groundcite check --cases` (labels ignored there)
//! and of `groundcite eval cases` (labels scored here).

use serde::{Deserialize, Serialize};

use crate::check::{CheckOutput, SentenceVerdict};
use crate::passage::Passage;
use crate::validate::Status;

/// One case: a question, the passages sent (in order) and the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub id: String,
    #[serde(default)]
    pub question: Option<String>,
    pub passages: Vec<Passage>,
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Labels>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Labels {
    #[serde(default)]
    pub bad_ids: Vec<u64>,
    pub status: Status,
    #[serde(default)]
    pub sentences: Vec<SentenceLabel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceLabel {
    /// A substring of the labelled sentence.
    #[serde(rename = "match")]
    pub matches: String,
    pub label: Label,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    Supported,
    Contradicted,
    Unsupported,
    Unmarked,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Supported => "supported",
            Label::Contradicted => "contradicted",
            Label::Unsupported => "unsupported",
            Label::Unmarked => "unmarked",
        }
    }

    /// Is `verdict` a correct answer for this label? Contradicted must be
    /// flagged contradicted; unsupported, flagged either way; supported, not
    /// flagged; unmarked, reported uncited.
    pub fn accepts(self, verdict: SentenceVerdict) -> bool {
        match self {
            Label::Supported => verdict == SentenceVerdict::Supported,
            Label::Contradicted => verdict == SentenceVerdict::Contradicted,
            Label::Unsupported => verdict.is_flagged(),
            Label::Unmarked => verdict == SentenceVerdict::Uncited,
        }
    }
}

impl Case {
    /// Input errors a check cannot run on.
    pub fn validate(&self) -> Result<(), String> {
        if self.id.trim().is_empty() {
            return Err("field `id` is empty".into());
        }
        if self.answer.trim().is_empty() {
            return Err("field `answer` is empty".into());
        }
        if let Some((i, _)) = self
            .passages
            .iter()
            .enumerate()
            .find(|(_, p)| p.text.trim().is_empty())
        {
            return Err(format!("passage {} has empty `text`", i + 1));
        }
        Ok(())
    }
}

/// The outcome of one labelled sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceScore {
    pub case: String,
    pub matches: String,
    pub label: Label,
    /// `None` when no sentence of the answer contains `match`.
    pub verdict: Option<SentenceVerdict>,
    pub correct: bool,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseScore {
    pub case: String,
    pub bad_ids_correct: bool,
    pub status_correct: bool,
    pub sentences: Vec<SentenceScore>,
}

/// Scores one checked case against its labels.
pub fn score(case: &Case, output: &CheckOutput) -> Option<CaseScore> {
    let labels = case.labels.as_ref()?;
    let sentences = labels
        .sentences
        .iter()
        .map(|l| {
            let verdict = output
                .sentences
                .iter()
                .find(|s| s.text.contains(&l.matches))
                .map(|s| s.verdict);
            SentenceScore {
                case: case.id.clone(),
                matches: l.matches.clone(),
                label: l.label,
                verdict,
                correct: verdict.is_some_and(|v| l.label.accepts(v)),
            }
        })
        .collect();
    Some(CaseScore {
        case: case.id.clone(),
        bad_ids_correct: output.bad_ids == labels.bad_ids,
        status_correct: output.status == labels.status,
        sentences,
    })
}
