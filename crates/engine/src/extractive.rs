//! The embedded default generator: answers by selecting the passage
//! sentences that answer the question, each cited, and refuses (with the
//! contract's refusal form) when nothing does.
//!
//! It sits behind the same [`Generator`] trait as any model, and its output
//! goes through the same validation and support checks: it is not a special
//! case that skips verification.
//!
//! Selection, in short: the question's content terms (stop words and the
//! generic verbs of questions removed, lightly stemmed) are weighted by
//! their inverse frequency across the sentences sent; each passage sentence
//! scores the weighted share of question terms it contains (terms of its
//! section label count half). The best sentence answers if its share
//! reaches [`ExtractiveConfig::min_coverage`] and the question's terms that
//! no passage contains at all weigh less than
//! [`ExtractiveConfig::max_missing`]; a second sentence joins it when it
//! scores nearly as well.
//!
//! On both paths only sentences that can answer alone compete
//! ([`crate::standalone`]: holding the kind of quantity asked for, and not
//! a question, a lead-in, an announcement or a worked example's numbers);
//! a list item is served after its lead-in. When none qualifies the
//! generator steps back with the refusal, and the engine links the closest
//! passages.
//!
//! With an embedding model ([`ExtractiveGenerator::with_answerability`],
//! which the engine uses when `model_dir` is set), selection is by meaning
//! instead: the answer units of [`crate::answerability`] (sentences, list
//! items after their lead-in, table rows under their header) ranked by
//! their similarity to the question adjusted by the answer type. The best
//! unit answers; a list item is served after its lead-in, and a lead-in
//! with the first items of its list; further units of
//! the same passage join it when they score within
//! [`AnswerabilityConfig::second_margin`](crate::AnswerabilityConfig) of
//! it. Nothing reaching `min_answer - retrieval_weight` (the gate's bar
//! with a perfect retrieval score) is a refusal.

use groundcite_core::refusal::{REFUSAL_SENTENCE, RefusalForm, SENTINEL_PREFIX};
use groundcite_core::sentence::{SentenceKind, segment};
use groundcite_llm::{
    BoxFuture, ChatRequest, EventStream, Generation, Generator, LlmError, Role, StreamEvent,
};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::answerability::{AnswerType, Answerability, UnitKind};
use crate::standalone::{NotAlone, standalone};
use crate::text::terms;
use groundcite_core::unit::{clean_sentence, table_cells, table_row};

/// Thresholds of the extractive generator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractiveConfig {
    /// The best sentence must contain at least this weighted share of the
    /// question's terms. Default 0.5.
    pub min_coverage: f32,
    /// Refuse when question terms found in no passage weigh more than this
    /// share. Default 0.35.
    pub max_missing: f32,
    /// At most this many sentences in an answer; further sentences come
    /// from the best sentence's passage. Default 2.
    pub max_sentences: usize,
    /// A further sentence must score at least this share of the best one.
    /// Default 0.85.
    pub second_ratio: f32,
}

impl Default for ExtractiveConfig {
    fn default() -> Self {
        ExtractiveConfig {
            min_coverage: 0.5,
            max_missing: 0.35,
            max_sentences: 2,
            second_ratio: 0.85,
        }
    }
}

/// At most this many items of a list follow its lead-in when the lead-in
/// is the best unit (model path).
const MAX_LIST_ITEMS: usize = 6;

/// The extractive generator.
#[derive(Debug, Clone, Default)]
pub struct ExtractiveGenerator {
    /// The selection thresholds (`[extractive]` in groundcite.toml).
    pub config: ExtractiveConfig,
    /// How it refuses: the refusal sentence or the sentinel
    /// (`check.refusal_form`).
    pub refusal_form: RefusalForm,
    /// The model path: selection by meaning (`None`: by shared words).
    answerability: Option<Arc<Answerability>>,
}

struct Candidate {
    passage: usize,
    text: String,
    score: f32,
    order: usize,
}

/// A passage sentence of the word-share path.
struct Sentence {
    /// Its passage, numbered from 1.
    passage: usize,
    text: String,
    terms: Vec<String>,
    /// The terms of its section label and of the sentence before it.
    context: Vec<String>,
    /// The terms of its section label alone: the heading a sentence sits
    /// under names its subject ("Standard schedule" for "You work 8 hours
    /// every day.").
    label: Vec<String>,
    /// A list item's lead-in (an index into the same list of sentences).
    lead_in: Option<usize>,
    /// It can answer alone ([`standalone`]).
    eligible: bool,
}

impl ExtractiveGenerator {
    /// A generator choosing sentences by shared words (no model).
    pub fn new(config: ExtractiveConfig, refusal_form: RefusalForm) -> Self {
        ExtractiveGenerator {
            config,
            refusal_form,
            answerability: None,
        }
    }

    /// The same generator choosing sentences by meaning with the model.
    pub fn with_answerability(self, answerability: Arc<Answerability>) -> Self {
        ExtractiveGenerator {
            answerability: Some(answerability),
            ..self
        }
    }

    /// Answers `question` from `passages` by meaning (the model path).
    /// An embedding failure is an error.
    pub fn answer_by_meaning(
        &self,
        judge: &Answerability,
        question: &str,
        passages: &[(&str, &str)],
    ) -> Result<String, String> {
        let judgement = judge.judge(question, passages)?;
        let c = &judge.config;
        let units = &judgement.units;
        let eligible = eligible_units(&judgement, passages);
        // The best unit that can answer alone.
        let Some((best, best_score)) = (0..units.len())
            .filter(|&i| eligible[i])
            .map(|i| (i, judgement.score[i]))
            .reduce(|a, b| if b.1 > a.1 { b } else { a })
            .filter(|(_, score)| *score >= c.min_answer - c.retrieval_weight)
        else {
            return Ok(self.refusal(question));
        };
        let mut chosen: Vec<usize> = vec![best];
        // The best unit introduces a list: the list is the answer.
        let items: Vec<usize> = (0..units.len())
            .filter(|&i| {
                units[i].kind
                    == (UnitKind::ListItem {
                        lead_in: Some(best),
                    })
            })
            .take(MAX_LIST_ITEMS)
            .collect();
        if !items.is_empty() {
            chosen.extend(items);
            return Ok(chosen
                .iter()
                .map(|&i| cite(&units[i].text, units[i].passage))
                .collect::<Vec<_>>()
                .join(" "));
        }
        let mut others: Vec<usize> = (0..units.len())
            .filter(|&i| {
                i != best
                    && eligible[i]
                    && units[i].passage == units[best].passage
                    && judgement.score[i] >= best_score - c.second_margin
            })
            .collect();
        others.sort_by(|&a, &b| judgement.score[b].total_cmp(&judgement.score[a]));
        chosen.extend(
            others
                .into_iter()
                .take(self.config.max_sentences.saturating_sub(1)),
        );
        // A list item is served after the sentence that introduced its list.
        let lead_ins: Vec<usize> = chosen
            .iter()
            .filter_map(|&i| match units[i].kind {
                UnitKind::ListItem { lead_in } => lead_in,
                _ => None,
            })
            .collect();
        for i in lead_ins {
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
        Ok(chosen
            .iter()
            .map(|&i| cite(&units[i].text, units[i].passage))
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// Answers `question` from `passages` (passage k is `passages[k-1]`,
    /// `(section, text)`).
    pub fn answer(&self, question: &str, passages: &[(&str, &str)]) -> String {
        let q_terms = terms(question);
        if q_terms.is_empty() || passages.is_empty() {
            return self.refusal(question);
        }
        let answer_type = AnswerType::of(question);
        // Sentences of every passage, with their terms, the terms of their
        // context (the section label and the sentence before, which often
        // names the subject) and whether they can answer alone.
        let mut sentences: Vec<Sentence> = Vec::new();
        let squashed: Vec<String> = passages
            .iter()
            .map(|(section, text)| {
                format!("{section} {text}")
                    .to_lowercase()
                    .split_whitespace()
                    .collect()
            })
            .collect();
        for (k, (section, text)) in passages.iter().enumerate() {
            let section_terms = terms(section);
            let mut previous: Vec<String> = Vec::new();
            let mut before: Option<String> = None;
            let mut lead_in: Option<usize> = None;
            let mut header: Option<Vec<String>> = None;
            for s in segment(text) {
                if s.kind == SentenceKind::Heading {
                    lead_in = None;
                    before = None;
                    continue;
                }
                let raw = s.text(text);
                // Table rows, as Markdown (`| a | b |`) or as cleaned text
                // (`a | b`).
                let is_row = s.kind == SentenceKind::TableRow
                    || (raw.contains(" | ") && !raw.contains('\n'));
                if is_row {
                    let cells = table_cells(raw);
                    match &header {
                        None => {
                            // The header row: context for the rows below.
                            previous = terms(&cells.join(" "));
                            header = Some(cells);
                        }
                        Some(h) => {
                            let row = table_row(h, &cells);
                            let mut context = section_terms.clone();
                            context.extend(previous.iter().cloned());
                            let eligible = standalone(&row, None, section, answer_type).is_ok();
                            sentences.push(Sentence {
                                passage: k + 1,
                                terms: terms(&row),
                                text: format!("{row}."),
                                context,
                                label: section_terms.clone(),
                                lead_in: None,
                                eligible,
                            });
                        }
                    }
                    continue;
                }
                header = None;
                let clean = clean_sentence(raw);
                let item = s.kind == SentenceKind::ListItem;
                if !item {
                    lead_in = None;
                }
                if clean.split_whitespace().count() < 4 {
                    continue;
                }
                let t = terms(&clean);
                let mut context = section_terms.clone();
                context.extend(previous.iter().cloned());
                previous.clone_from(&t);
                // A list item reads after its lead-in, prose after the
                // sentence before it.
                let item_lead_in = if item { lead_in } else { None };
                let context_text = match item_lead_in {
                    Some(i) => Some(sentences[i].text.as_str()),
                    None => before.as_deref(),
                };
                let eligible = standalone(&clean, context_text, section, answer_type).is_ok();
                if !item && clean.ends_with(':') {
                    lead_in = Some(sentences.len());
                }
                before = Some(clean.clone());
                sentences.push(Sentence {
                    passage: k + 1,
                    text: clean,
                    terms: t,
                    context,
                    label: section_terms.clone(),
                    lead_in: item_lead_in,
                    eligible,
                });
            }
        }
        if sentences.is_empty() {
            return self.refusal(question);
        }
        // Inverse frequency of each question term across sentences.
        let n = sentences.len() as f32;
        let weights: Vec<f32> = q_terms
            .iter()
            .map(|t| {
                let df = sentences
                    .iter()
                    .filter(|s| contains_term(&s.terms, t))
                    .count() as f32;
                (1.0 + n / (1.0 + df)).ln().max(0.1)
            })
            .collect();
        let total: f32 = weights.iter().sum();
        // Terms no passage has, not even written as two words ("PeopleOps"
        // for "People Ops").
        let present: Vec<bool> = q_terms
            .iter()
            .map(|t| {
                sentences
                    .iter()
                    .any(|s| contains_term(&s.terms, t) || contains_term(&s.context, t))
                    || (t.len() >= 6 && squashed.iter().any(|p| p.contains(t.as_str())))
            })
            .collect();
        let missing: f32 = weights
            .iter()
            .zip(&present)
            .filter(|(_, p)| !**p)
            .map(|(w, _)| *w)
            .sum();
        // The question's heavy terms (weight at or above the mean among
        // those some passage has) name its subject: an answer sentence
        // itself may miss at most half of them. Otherwise the passages
        // use the question's words but answer something else.
        let present_weights: Vec<f32> = weights
            .iter()
            .zip(&present)
            .filter(|(_, p)| **p)
            .map(|(w, _)| *w)
            .collect();
        let mean = present_weights.iter().sum::<f32>() / present_weights.len().max(1) as f32;
        let required: Vec<&String> = q_terms
            .iter()
            .zip(&weights)
            .zip(&present)
            .filter(|((_, w), p)| **p && **w >= mean)
            .map(|((t, _), _)| t)
            .collect();
        let allowed_misses = required.len() / 2;
        if missing / total > self.config.max_missing {
            return self.refusal(question);
        }
        let wants_quantity = answer_type != AnswerType::Other;
        // Only sentences that can answer alone compete: one that merely
        // shares the question's words is no answer.
        let mut candidates: Vec<Candidate> = sentences
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.eligible
                    && required
                        .iter()
                        .filter(|t| !contains_term(&s.terms, t) && !contains_term(&s.label, t))
                        .count()
                        <= allowed_misses
            })
            .map(|(order, s)| {
                let mut score = 0.0;
                for (t, w) in q_terms.iter().zip(&weights) {
                    if contains_term(&s.terms, t) {
                        score += w;
                    } else if contains_term(&s.context, t) {
                        score += w * 0.5;
                    }
                }
                let mut score = score / total;
                if wants_quantity && s.text.bytes().any(|b| b.is_ascii_digit()) {
                    score += 0.05;
                }
                Candidate {
                    passage: s.passage,
                    text: s.text.clone(),
                    score,
                    order,
                }
            })
            .collect();
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
        if candidates.is_empty() {
            return self.refusal(question);
        }
        let best = candidates[0].score;
        if best < self.config.min_coverage {
            return self.refusal(question);
        }
        let mut chosen: Vec<&Candidate> = vec![&candidates[0]];
        // The sentence right after the best one, in its passage, continues
        // it when it shares a question term ("… on a standard schedule. You
        // work 8 hours every day.").
        let next = candidates[0].order + 1;
        let follower = sentences.get(next).filter(|s| {
            s.passage == candidates[0].passage
                && s.lead_in.is_none()
                && matches!(
                    standalone(&s.text, None, "", AnswerType::Other),
                    Ok(()) | Err(NotAlone::LeadIn)
                )
                && q_terms.iter().any(|t| contains_term(&s.terms, t))
        });
        // A follower that introduces a list comes with its first items:
        // its conditions are part of what it says.
        let follower_candidates: Vec<Candidate> = follower
            .map(|f| {
                let items = sentences
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.lead_in == Some(next))
                    .take(MAX_LIST_ITEMS);
                std::iter::once((next, f))
                    .chain(items)
                    .map(|(order, s)| Candidate {
                        passage: s.passage,
                        text: s.text.clone(),
                        score: 0.0,
                        order,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if self.config.max_sentences > 1 {
            chosen.extend(follower_candidates.iter());
        }
        for c in &candidates[1..] {
            if chosen.len() >= self.config.max_sentences {
                break;
            }
            // A second sentence comes from the best sentence's passage: a
            // tie on a one-word question elsewhere is rarely the answer.
            if c.passage == candidates[0].passage
                && c.score >= best * self.config.second_ratio
                && !chosen.iter().any(|x| x.order == c.order)
            {
                chosen.push(c);
            }
        }
        // A list item is served after its list's lead-in.
        let lead_ins: Vec<Candidate> = chosen
            .iter()
            .filter_map(|c| sentences[c.order].lead_in)
            .filter(|&i| !chosen.iter().any(|c| c.order == i))
            .map(|i| Candidate {
                passage: sentences[i].passage,
                text: sentences[i].text.clone(),
                score: 0.0,
                order: i,
            })
            .collect();
        let mut chosen: Vec<&Candidate> = chosen;
        chosen.extend(lead_ins.iter());
        // In passage order, so the answer reads naturally.
        chosen.sort_by_key(|c| c.order);
        chosen.dedup_by_key(|c| c.order);
        chosen
            .iter()
            .map(|c| cite(&c.text, c.passage))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn refusal(&self, question: &str) -> String {
        match self.refusal_form {
            RefusalForm::Sentence => REFUSAL_SENTENCE.to_string(),
            RefusalForm::Sentinel => format!(
                "{SENTINEL_PREFIX} a passage that answers \"{}\"",
                question.trim()
            ),
        }
    }
}

/// Which units of a judgement can answer alone ([`standalone`]): a list
/// item read after its lead-in, prose after the unit before it in its
/// passage, and a lead-in together with the first items of its list
/// (served with them).
fn eligible_units(
    judgement: &crate::answerability::Judgement,
    passages: &[(&str, &str)],
) -> Vec<bool> {
    let units = &judgement.units;
    (0..units.len())
        .map(|i| {
            let u = &units[i];
            let section = passages.get(u.passage - 1).map_or("", |p| p.0);
            let before = match u.kind {
                // Served after its lead-in.
                UnitKind::ListItem { lead_in: Some(l) } => Some(units[l].text.as_str()),
                // A list item without one is read alone.
                UnitKind::ListItem { lead_in: None } => None,
                _ => i
                    .checked_sub(1)
                    .filter(|&p| units[p].passage == u.passage)
                    .map(|p| units[p].text.as_str()),
            };
            let items: Vec<&str> = units
                .iter()
                .filter(|x| x.kind == (UnitKind::ListItem { lead_in: Some(i) }))
                .take(MAX_LIST_ITEMS)
                .map(|x| x.text.as_str())
                .collect();
            let text = if items.is_empty() {
                u.text.clone()
            } else {
                format!("{} {}", u.text, items.join(" "))
            };
            standalone(&text, before, section, judgement.answer_type).is_ok()
        })
        .collect()
}

/// Term match: the same stem, one a prefix of the other (five letters at
/// least), or a shared prefix of five letters between words of six or more
/// ("extension" and "extended").
fn contains_term(list: &[String], t: &str) -> bool {
    list.iter().any(|x| {
        x == t
            || (t.len() >= 5 && x.starts_with(t))
            || (x.len() >= 5 && t.starts_with(x.as_str()))
            || (x.len() >= 6 && t.len() >= 6 && x.as_bytes()[..5] == t.as_bytes()[..5])
    })
}

/// Appends the marker before the sentence's final punctuation.
fn cite(sentence: &str, passage: usize) -> String {
    let trimmed = sentence.trim_end();
    let (body, end) = match trimmed.char_indices().last() {
        Some((i, '.' | '!' | '?')) => (&trimmed[..i], &trimmed[i..]),
        Some((_, ':')) | Some((_, ';')) | Some((_, ',')) => (&trimmed[..trimmed.len() - 1], "."),
        _ => (trimmed, "."),
    };
    format!("{} [{passage}]{end}", body.trim_end())
}

impl Generator for ExtractiveGenerator {
    fn name(&self) -> &str {
        "extractive"
    }

    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        let result = self.generate_now(request);
        Box::pin(async move { result })
    }

    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        let result = self.generate_now(request);
        Box::pin(futures::stream::iter(match result {
            Ok(generation) => vec![
                Ok(StreamEvent::Text(generation.text.clone())),
                Ok(StreamEvent::Done(generation)),
            ],
            Err(e) => vec![Err(e)],
        }))
    }
}

impl ExtractiveGenerator {
    fn generate_now(&self, request: &ChatRequest) -> Result<Generation, LlmError> {
        let question = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
            .unwrap_or("");
        let passages: Vec<(&str, &str)> = request
            .documents
            .iter()
            .map(|d| (d.title.as_str(), d.text.as_str()))
            .collect();
        let text = match &self.answerability {
            Some(judge) => self
                .answer_by_meaning(judge, question, &passages)
                .map_err(LlmError::Config)?,
            None => self.answer(question, &passages),
        };
        Ok(Generation {
            raw: text.clone(),
            text,
            native_citations: Vec::new(),
            model: "extractive".into(),
            finish_reason: Some("stop".into()),
            retries: 0,
            structured: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[(&str, &str)] = &[
        (
            "Filing",
            "Expense claims must be filed within 60 days of the expense.",
        ),
        (
            "Reimbursement",
            "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
        ),
        (
            "Help",
            "Questions about reimbursement go to the finance help desk.",
        ),
    ];

    #[test]
    fn answers_with_a_cited_sentence() {
        let g = ExtractiveGenerator::default();
        let a = g.answer("How long does reimbursement take?", P);
        assert!(
            a.contains("Reimbursements settle within 30 days of approval [2]."),
            "{a}"
        );
    }

    #[test]
    fn refuses_when_nothing_answers() {
        let g = ExtractiveGenerator::default();
        assert_eq!(
            g.answer("Does the plan cover home office furniture?", P),
            REFUSAL_SENTENCE
        );
        let s = ExtractiveGenerator::new(ExtractiveConfig::default(), RefusalForm::Sentinel);
        assert!(
            s.answer("Does the plan cover home office furniture?", P)
                .starts_with("NOT_IN_SOURCES: ")
        );
    }

    #[test]
    fn a_sentence_without_the_quantity_asked_for_is_no_answer() {
        let g = ExtractiveGenerator::default();
        let p: &[(&str, &str)] = &[(
            "Annual leave",
            "Annual leave requests go to your supervisor in the leave system.",
        )];
        // It shares the question's words but holds no duration: step back.
        assert_eq!(
            g.answer("How many days of annual leave do I get?", p),
            REFUSAL_SENTENCE
        );
        let p: &[(&str, &str)] = &[(
            "Annual leave",
            "Annual leave requests go to your supervisor. Full-time staff earn 13 days of annual leave a year.",
        )];
        let a = g.answer("How many days of annual leave do I get?", p);
        assert!(a.contains("13 days of annual leave a year [1]."), "{a}");
        assert!(!a.contains("supervisor"), "{a}");
    }

    #[test]
    fn a_list_item_is_served_after_its_lead_in_and_announcements_never() {
        let g = ExtractiveGenerator::default();
        let p: &[(&str, &str)] = &[(
            "Leave requests",
            "First, let's take a look at how leave requests work.\n\nYou need to submit separate leave requests if:\n\n- your leave days are not back-to-back\n- your leave spans two leave years",
        )];
        let a = g.answer(
            "Do I need separate leave requests if my leave days are not back-to-back?",
            p,
        );
        assert!(
            a.starts_with("You need to submit separate leave requests if [1]."),
            "{a}"
        );
        assert!(!a.contains("let's"), "{a}");
    }

    #[test]
    fn cite_places_the_marker_before_the_period() {
        assert_eq!(cite("It is so.", 2), "It is so [2].");
        assert_eq!(cite("Steps:", 1), "Steps [1].");
        assert_eq!(cite("No period", 3), "No period [3].");
    }
}
