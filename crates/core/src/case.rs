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
    /// The case's identifier, reported as the `id` of its check report; must not be empty.
    pub id: String,
    /// The question the answer responds to; `None` for an answer checked on its own.
    #[serde(default)]
    pub question: Option<String>,
    /// The passages sent, in order: marker `[k]` cites the k-th.
    pub passages: Vec<Passage>,
    /// The answer to check; must not be empty.
    pub answer: String,
    /// The expected outcome, for scoring; `None` for an unlabelled case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Labels>,
}

/// The expected outcome of a case's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Labels {
    /// The cited ids never sent, as the report's `bad_ids` must list them (default empty).
    #[serde(default)]
    pub bad_ids: Vec<u64>,
    /// The structural status the report must give.
    pub status: Status,
    /// The expected verdicts of individual sentences (default none).
    #[serde(default)]
    pub sentences: Vec<SentenceLabel>,
}

/// The expected verdict of one sentence of a case's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceLabel {
    /// A substring of the labelled sentence.
    #[serde(rename = "match")]
    pub matches: String,
    /// What the sentence is: supported, contradicted, unsupported or unmarked.
    pub label: Label,
    /// What the sentence does with its passage (`synonym`, `actor`, ...; see
    /// `shared/cases/README.md`), for per-kind figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `list` or `table` when the sentence rests on a list item or table row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
}

/// The true status of a labelled sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Stated in the passage it cites.
    Supported,
    /// Contradicted by the passage it cites.
    Contradicted,
    /// Not stated in the passage it cites.
    Unsupported,
    /// A factual sentence that carries no citation marker.
    Unmarked,
}

impl Label {
    /// The label's name as written in case files (`supported`, `contradicted`, ...).
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
    /// The id of the case the sentence belongs to.
    pub case: String,
    /// The label's `match`: a substring of the labelled sentence.
    pub matches: String,
    /// The expected label.
    pub label: Label,
    /// The label's `kind` (`synonym`, `actor`, ...), if any.
    pub kind: Option<String>,
    /// The label's `form` (`list` or `table`), if any.
    pub form: Option<String>,
    /// `None` when no sentence of the answer contains `match`.
    pub verdict: Option<SentenceVerdict>,
    /// The verdict was found and the label accepts it ([`Label::accepts`]).
    pub correct: bool,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseScore {
    /// The case's id.
    pub case: String,
    /// The report's `bad_ids` equal the labelled ones.
    pub bad_ids_correct: bool,
    /// The report's status equals the labelled one.
    pub status_correct: bool,
    /// The outcome of each labelled sentence, in label order.
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
                kind: l.kind.clone(),
                form: l.form.clone(),
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

/// The half of a by-page split a case belongs to: `Tune` (thresholds and rules may be fitted on
/// it) or `Held` (figures reported on it were not tuned on). A case's page is the page of its
/// first passage (the path before `#`; every paraphrase case cites passage 1); the half is the
/// parity of the page path's FNV-1a 64-bit hash, so all cases of a page fall in the same half
/// and the split never changes when cases are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    /// Cases that thresholds and rules may be fitted on.
    Tune,
    /// Held-out cases: figures reported on them were not tuned on.
    Held,
}

impl Half {
    /// The half's name in reports: `tune` or `held-out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Tune => "tune",
            Half::Held => "held-out",
        }
    }
}

/// The page a case is about: its first passage's id up to `#` (the whole id without one).
pub fn page(case: &Case) -> &str {
    let id = case.passages.first().map_or("", |p| p.id.as_str());
    id.split('#').next().unwrap_or(id)
}

/// The half of the by-page split `case` falls in (see [`Half`]).
pub fn half(case: &Case) -> Half {
    half_of(page(case))
}

/// The half a page falls in: the parity of its path's FNV-1a 64-bit hash.
/// The labelled questions are split by the same rule, on their gold page.
pub fn half_of(page: &str) -> Half {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in page.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    if h.is_multiple_of(2) {
        Half::Tune
    } else {
        Half::Held
    }
}

/// Detection figures over labelled sentences: supported ones kept (not flagged), wrong ones
/// (contradicted or unsupported) flagged, contradicted ones labelled contradicted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Sentences labelled supported.
    pub supported: usize,
    /// Supported sentences given the verdict supported.
    pub supported_kept: usize,
    /// Sentences labelled contradicted or unsupported.
    pub wrong: usize,
    /// Wrong sentences flagged (verdict contradicted or unsupported).
    pub wrong_flagged: usize,
    /// Sentences labelled contradicted.
    pub contradicted: usize,
    /// Contradicted sentences given the verdict contradicted.
    pub contradicted_labelled: usize,
}

impl Tally {
    /// Counts one scored sentence (unmarked labels are not counted).
    pub fn add(&mut self, s: &SentenceScore) {
        let flagged = s.verdict.is_some_and(SentenceVerdict::is_flagged);
        match s.label {
            Label::Supported => {
                self.supported += 1;
                self.supported_kept += usize::from(s.verdict == Some(SentenceVerdict::Supported));
            }
            Label::Contradicted | Label::Unsupported => {
                self.wrong += 1;
                self.wrong_flagged += usize::from(flagged);
                if s.label == Label::Contradicted {
                    self.contradicted += 1;
                    self.contradicted_labelled +=
                        usize::from(s.verdict == Some(SentenceVerdict::Contradicted));
                }
            }
            Label::Unmarked => {}
        }
    }

    /// The mean of the supported-kept and wrong-flagged rates, over the classes present.
    pub fn balanced_accuracy(&self) -> Option<f64> {
        let rates: Vec<f64> = [
            (self.supported_kept, self.supported),
            (self.wrong_flagged, self.wrong),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|&(k, n)| k as f64 / n as f64)
        .collect();
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(label: Label, verdict: SentenceVerdict) -> SentenceScore {
        SentenceScore {
            case: "c".into(),
            matches: "m".into(),
            label,
            kind: None,
            form: None,
            verdict: Some(verdict),
            correct: label.accepts(verdict),
        }
    }

    #[test]
    fn tally_counts_each_figure_and_balances_the_two_rates() {
        let mut t = Tally::default();
        t.add(&scored(Label::Supported, SentenceVerdict::Supported));
        t.add(&scored(Label::Supported, SentenceVerdict::Unsupported));
        t.add(&scored(Label::Contradicted, SentenceVerdict::Unsupported));
        t.add(&scored(Label::Contradicted, SentenceVerdict::Contradicted));
        t.add(&scored(Label::Unsupported, SentenceVerdict::Supported));
        assert_eq!(
            (t.supported_kept, t.supported, t.wrong_flagged, t.wrong),
            (1, 2, 2, 3)
        );
        assert_eq!((t.contradicted_labelled, t.contradicted), (1, 2));
        let ba = t.balanced_accuracy().unwrap();
        assert!((ba - (0.5 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(Tally::default().balanced_accuracy(), None);
    }

    #[test]
    fn the_split_is_by_page() {
        let case = |id: &str, passage: &str| Case {
            id: id.into(),
            question: None,
            passages: vec![Passage {
                id: passage.into(),
                text: "x".into(),
                source_url: String::new(),
                section: String::new(),
                score: None,
            }],
            answer: "x".into(),
            labels: None,
        };
        let a = case("a", "tools/figma.md#L9-L9");
        let b = case("b", "tools/figma.md#L11-L13");
        assert_eq!(page(&a), "tools/figma.md");
        assert_eq!(half(&a), half(&b));
        let halves: std::collections::BTreeSet<Half> = ["a.md", "b.md", "c.md", "d.md", "e.md"]
            .iter()
            .map(|p| half(&case("x", p)))
            .collect();
        assert_eq!(halves.len(), 2, "five pages all in one half");
    }
}
