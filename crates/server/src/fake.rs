//! A static [`Answerer`] for tests and demos: the same passages and the
//! same model output for every question, checked for real by the engine's
//! [`Checker`], answered as the engine's [`AskResult`].

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use groundcite_core::check::{Counts, Findings};
use groundcite_core::{CheckConfig, Passage};
use groundcite_engine::{
    AnswersQuestion, AskRefusal, AskResult, Attempt, Checker, RefusalReason, SentPassageInfo,
    Timings,
};

use crate::answerer::{
    AnswerError, AnswerEvent, Answerer, AskParams, Readiness, SearchHit, SentenceEvent,
};

/// Answers every question with `answer` over `passages`.
#[derive(Debug, Clone)]
pub struct StaticAnswerer {
    /// The passages every question retrieves (and search matches words in).
    pub passages: Vec<Passage>,
    /// The model output served (last attempt).
    pub answer: String,
    /// A first attempt that cited ids never sent: when set, the answer
    /// reports one regeneration.
    pub first_attempt: Option<String>,
    /// Questions containing one of these words (case-insensitive) are
    /// refused at the gate.
    pub refuse_when: Vec<String>,
    /// Questions containing one of these words are refused as the model
    /// path refuses an off-topic question that retrieval matched:
    /// `no_direct_answer`, with the closest passages.
    pub no_direct_answer_when: Vec<String>,
    /// Reported as `generator`.
    pub generator: String,
    /// Wait before answering (to test timeouts).
    pub answer_delay: Duration,
    /// Wait between streamed sentences.
    pub sentence_delay: Duration,
    /// Fail every question with this error.
    pub failure: Option<AnswerError>,
    /// Reported by `readiness` (default: index open, generator `static`).
    pub readiness: Readiness,
    /// The check settings the answer is checked with (default
    /// [`CheckConfig::default`]).
    pub config: CheckConfig,
}

impl StaticAnswerer {
    /// Answers with `answer` over `passages`: no delay, no refusal, no
    /// failure, generator `static`.
    pub fn new(passages: Vec<Passage>, answer: impl Into<String>) -> StaticAnswerer {
        StaticAnswerer {
            passages,
            answer: answer.into(),
            first_attempt: None,
            refuse_when: Vec::new(),
            no_direct_answer_when: Vec::new(),
            generator: "static".into(),
            answer_delay: Duration::ZERO,
            sentence_delay: Duration::ZERO,
            failure: None,
            readiness: Readiness {
                index: true,
                generator: Some("static".into()),
                passages: None,
            },
            config: CheckConfig::default(),
        }
    }

    /// The demo: an expenses handbook where one passage carries a
    /// `<script>` (it must render as text), an answer with a supported
    /// sentence, a contradicted one, an unsupported one and an uncited
    /// one; questions about furniture are refused at the gate, questions
    /// about parking as not answered by the closest passages.
    pub fn demo() -> StaticAnswerer {
        let p = |id: &str, text: &str, url: &str, section: &str, score: f32| Passage {
            id: id.into(),
            text: text.into(),
            source_url: url.into(),
            section: section.into(),
            score: Some(score),
        };
        let passages = vec![
            p(
                "expenses.md#L9-L14",
                "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
                "https://handbook.example/expenses#reimbursement",
                "Expenses › Reimbursement",
                0.91,
            ),
            p(
                "expenses.md#L3-L8",
                "Expense claims must be filed within 60 days of the expense. Receipts are required for every claim over $25.",
                "https://handbook.example/expenses#filing",
                "Expenses › Filing a claim",
                0.84,
            ),
            p(
                "help.md#L1-L6",
                "Questions about reimbursement go to the finance help desk. <script>window.__xss=1</script> The desk answers within two business days.",
                "https://handbook.example/help",
                "Help <b>desk</b>",
                0.52,
            ),
        ];
        let answer = "Reimbursements settle within 30 days of approval [1]. \
                      Claims must be filed within 90 days of the expense [2]. \
                      Late claims are paid with a penalty deducted from the next salary [2]. \
                      The finance help desk answers questions within two business days [3]. \
                      Per diem claims are always approved automatically.";
        let mut demo = StaticAnswerer::new(passages, answer);
        demo.first_attempt = Some(
            "Reimbursements settle within 30 days of approval [4]. Claims must be filed within 60 days [2].".into(),
        );
        demo.refuse_when = vec!["furniture".into(), "stipend".into()];
        demo.no_direct_answer_when = vec!["parking".into()];
        demo.generator = "scripted".into();
        demo.readiness.generator = Some("scripted".into());
        demo
    }

    /// The answer to `question`.
    pub fn result(&self, question: &str) -> AskResult {
        let started = Instant::now();
        let lower = question.to_lowercase();
        if self
            .refuse_when
            .iter()
            .any(|w| lower.contains(&w.to_lowercase()))
        {
            return self.refusal(question, RefusalReason::Gate);
        }
        if self
            .no_direct_answer_when
            .iter()
            .any(|w| lower.contains(&w.to_lowercase()))
        {
            return self.refusal(question, RefusalReason::NoDirectAnswer);
        }
        let report =
            Checker::new(self.config.clone()).check(Some(question), &self.passages, &self.answer);
        let check_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut attempts = Vec::new();
        if let Some(first) = &self.first_attempt {
            let bad_ids = groundcite_core::Report::check(first, self.passages.len()).bad_ids;
            attempts.push(attempt(first, bad_ids));
        }
        attempts.push(attempt(&self.answer, report.bad_ids.clone()));
        let refusal = report.refusal.as_ref().map(|r| {
            let topics = self.topics();
            let handoff = "Ask the finance help desk.";
            AskRefusal::new(
                RefusalReason::Sentinel,
                question,
                r.needed.clone(),
                topics,
                handoff,
            )
        });
        // The fake has no embedding model: relevance is not judged.
        let answers_question = refusal.is_none().then(AnswersQuestion::unchecked);
        let mut findings = report.findings;
        if let Some(aq) = &answers_question {
            // As the engine: grounded needs both claims.
            findings.grounded = aq.grounds(findings.supported);
        }
        AskResult {
            question: question.to_string(),
            answer: self.answer.clone(),
            findings,
            counts: report.counts,
            passages: SentPassageInfo::numbered(&self.passages),
            refusal,
            answers_question,
            timings: Timings {
                retrieve_ms: 0.4,
                gate_ms: 0.0,
                generate_ms: 1.0,
                check_ms,
                total_ms: 1.4 + check_ms,
                first_sentence_ms: None,
            },
            attempts,
            generator: self.generator.clone(),
            retrieval: groundcite_engine::Retrieval::Lexical,
            regenerated: self.first_attempt.is_some(),
            finish_reason: Some("stop".into()),
            truncated: false,
            generation_mode: Some(groundcite_engine::GenerationMode::FreeText),
        }
    }

    fn topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = Vec::new();
        for p in &self.passages {
            if !topics.contains(&p.section) {
                topics.push(p.section.clone());
            }
        }
        topics
    }

    /// Refused before generation: at the gate (nothing found), or as not
    /// answered by the closest passages (listed).
    fn refusal(&self, question: &str, reason: RefusalReason) -> AskResult {
        let handoff = "Ask the finance help desk, or open a ticket with HR.";
        let mut refusal = AskRefusal::new(reason, question, None, self.topics(), handoff);
        if reason == RefusalReason::NoDirectAnswer {
            refusal.closest_passages =
                SentPassageInfo::numbered(&self.passages[..2.min(self.passages.len())]);
        }
        AskResult {
            question: question.to_string(),
            answer: groundcite_core::REFUSAL_SENTENCE.to_string(),
            findings: Findings::nothing_claimed(),
            counts: Counts::default(),
            passages: Vec::new(),
            refusal: Some(refusal),
            answers_question: None,
            timings: Timings {
                retrieve_ms: 0.3,
                gate_ms: 0.0,
                total_ms: 0.3,
                ..Timings::default()
            },
            attempts: Vec::new(),
            generator: self.generator.clone(),
            retrieval: groundcite_engine::Retrieval::Lexical,
            regenerated: false,
            finish_reason: None,
            truncated: false,
            generation_mode: None,
        }
    }

    fn search_hits(&self, query: &str, k: usize) -> Vec<SearchHit> {
        let terms: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| t.len() > 2)
            .map(str::to_lowercase)
            .collect();
        let mut hits: Vec<(f32, &Passage)> = self
            .passages
            .iter()
            .map(|p| {
                let text = p.text.to_lowercase();
                let n = terms.iter().filter(|t| text.contains(t.as_str())).count();
                (n as f32 / terms.len().max(1) as f32, p)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        hits.sort_by(|a, b| b.0.total_cmp(&a.0));
        hits.into_iter()
            .take(k)
            .map(|(score, p)| SearchHit {
                id: p.id.clone(),
                title: p.section.clone(),
                section: p.section.clone(),
                source_url: p.source_url.clone(),
                text: p.text.clone(),
                score,
            })
            .collect()
    }
}

fn attempt(raw: &str, bad_ids: Vec<u64>) -> Attempt {
    Attempt {
        raw: raw.to_string(),
        bad_ids,
        error: None,
        finish_reason: None,
    }
}

impl Answerer for StaticAnswerer {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        _: AskParams,
    ) -> BoxFuture<'a, Result<AskResult, AnswerError>> {
        async move {
            if !self.answer_delay.is_zero() {
                tokio::time::sleep(self.answer_delay).await;
            }
            match &self.failure {
                Some(e) => Err(e.clone()),
                None => Ok(self.result(question)),
            }
        }
        .boxed()
    }

    fn ask_stream(&self, question: &str, _: AskParams) -> BoxStream<'static, AnswerEvent> {
        let this = self.clone();
        let question = question.to_string();
        let events = async move {
            if !this.answer_delay.is_zero() {
                tokio::time::sleep(this.answer_delay).await;
            }
            if let Some(e) = &this.failure {
                return vec![AnswerEvent::Error(e.clone())];
            }
            let result = this.result(&question);
            let mut events: Vec<AnswerEvent> = result
                .sentences
                .iter()
                .enumerate()
                .map(|(index, s)| {
                    AnswerEvent::Sentence(SentenceEvent {
                        index,
                        text: s.text.clone(),
                        start: s.start,
                        end: s.end,
                        citations: s.citations.clone(),
                        markers: s.markers.clone(),
                        verdict: s.verdict.as_str().to_string(),
                    })
                })
                .collect();
            events.push(AnswerEvent::Final(Box::new(result)));
            events
        };
        let delay = self.sentence_delay;
        futures::stream::once(events)
            .flat_map(futures::stream::iter)
            .then(move |e| async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                e
            })
            .boxed()
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        k: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, AnswerError>> {
        async move {
            match &self.failure {
                Some(e) => Err(e.clone()),
                None => Ok(self.search_hits(query, k)),
            }
        }
        .boxed()
    }

    fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }
}
