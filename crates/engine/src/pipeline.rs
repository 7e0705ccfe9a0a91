//! The answer pipeline and its result.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use futures::stream::BoxStream;
use groundcite_core::check::{CheckOutput, Counts, Findings};
use groundcite_core::finalize::{self, Decision, UnsupportedPolicy};
use groundcite_core::passage::{ApproxTokens, assemble};
use groundcite_core::stream::HoldBack;
use groundcite_core::structured::{self, StreamRenderer};
use groundcite_core::{Passage, Report, gate, prompt, refusal};
use groundcite_embed::{Embedder, Judges};
use groundcite_index::vectors::{ChunkEmbedder, UnitVectors};
use groundcite_index::{Hit, Retriever};
use groundcite_llm::{
    ChatMessage, ChatRequest, Document, Generation, Generator, LlmError, StreamEvent,
    StructuredFormat, StructuredRequest,
};
use groundcite_verify::{Claim, Verdict};

use crate::EngineError;
pub use crate::answer::{
    AskEvent, AskOptions, AskRefusal, AskResult, Attempt, GenerationMode, RefusalReason,
    Retraction, Retrieval, SentPassageInfo, StreamedSentence, Timings, render_refusal,
};
use crate::answerability::{Answerability, AnswersQuestion, GateDecision, Judgement, UnitScorer};
use crate::checker::{Checker, PromptOutput};
use crate::extractive::ExtractiveGenerator;
use crate::settings::{ContractRole, GeneratorKind, Settings};

mod refusals;
mod stream;

use refusals::{CLOSEST, closest_passages, nearest_topics};

#[derive(Clone)]
struct Inner {
    retriever: Arc<dyn Retriever>,
    generator: Arc<dyn Generator>,
    checker: Checker,
    settings: Settings,
    /// The sentence-embedding model, when one is configured (`model_dir`).
    embedder: Option<Arc<Embedder>>,
    /// The model path of the gate and of `answers_question` (with the
    /// embedder).
    answerability: Option<Arc<Answerability>>,
    /// Which retrieval runs: hybrid with a model and a retriever with its
    /// vectors, else lexical.
    retrieval: Retrieval,
}

/// The pipeline. Cheap to clone; share it across requests.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

/// What `generate` needs once the gate let a question through.
struct Ready {
    sent: Vec<Passage>,
    infos: Vec<SentPassageInfo>,
    request: ChatRequest,
    topics: Vec<String>,
    retrieve_ms: f64,
    gate_ms: f64,
}

/// What retrieval and the gate decided.
enum Prepared {
    Refused(Box<AskResult>),
    Ready(Box<Ready>),
}

impl Engine {
    /// Builds the engine from its parts.
    pub fn new(
        settings: Settings,
        retriever: Arc<dyn Retriever>,
        generator: Arc<dyn Generator>,
    ) -> Engine {
        let checker = Checker::new(settings.check.clone());
        Engine {
            inner: Arc::new(Inner {
                retriever,
                generator,
                checker,
                settings,
                embedder: None,
                answerability: None,
                retrieval: Retrieval::Lexical,
            }),
        }
    }

    /// The same engine with a sentence-embedding model: the gate judges
    /// answerability over the sentences sent, every answer gets an
    /// `answers_question` verdict, and the configured extractive generator
    /// (`generator = extractive`) chooses sentences by meaning. Call it
    /// before the engine is shared (it is cheap either way: the parts are
    /// reference counted). Retrieval becomes hybrid when the retriever
    /// holds vectors (which must be of this model: [`Engine::from_settings`]
    /// checks it); otherwise it stays lexical, and every result says which
    /// ran.
    pub fn with_embedder(self, embedder: Arc<Embedder>) -> Engine {
        self.with_models(embedder, None)
    }

    /// [`Engine::with_embedder`], with units scored against the question by
    /// the trained judges' answer head when `judges` is given
    /// (`answerability.scorer = "trained"`).
    pub fn with_models(self, embedder: Arc<Embedder>, judges: Option<Arc<Judges>>) -> Engine {
        let inner = Arc::unwrap_or_clone(self.inner);
        let retrieval = if inner.retriever.has_vectors() {
            Retrieval::Hybrid
        } else {
            Retrieval::Lexical
        };
        // With `check.verifier = "semantic"`, answers are then checked by
        // the semantic verifier.
        let checker = match inner.settings.check.verifier {
            groundcite_verify::VerifierKind::Semantic => {
                Checker::with_embedder(inner.settings.check.clone(), embedder.clone())
            }
            _ => inner.checker.clone(),
        };
        let answerability =
            Answerability::new(Arc::clone(&embedder), inner.settings.answerability.clone())
                .with_unit_vectors(inner.settings.unit_vectors);
        let answerability = Arc::new(match judges {
            Some(judges) => answerability.with_judges(judges),
            None => answerability,
        });
        let generator: Arc<dyn Generator> = if inner.settings.generator == GeneratorKind::Extractive
            && inner.generator.name() == "extractive"
        {
            Arc::new(
                ExtractiveGenerator::new(
                    inner.settings.extractive.clone(),
                    inner.settings.check.refusal_form,
                )
                .with_answerability(Arc::clone(&answerability)),
            )
        } else {
            inner.generator
        };
        Engine {
            inner: Arc::new(Inner {
                embedder: Some(embedder),
                checker,
                answerability: Some(answerability),
                generator,
                retrieval,
                ..inner
            }),
        }
    }

    /// The model path's judge, when a model is configured.
    pub fn answerability(&self) -> Option<&Arc<Answerability>> {
        self.inner.answerability.as_ref()
    }

    /// Which retrieval runs: `hybrid` (dense + BM25) or `lexical`.
    pub fn retrieval(&self) -> Retrieval {
        self.inner.retrieval
    }

    /// The sentence-embedding model, when one is configured.
    pub fn embedder(&self) -> Option<&Arc<Embedder>> {
        self.inner.embedder.as_ref()
    }

    /// Opens the index (ingesting the embedded demo corpus into an empty
    /// default index) and builds the configured generator.
    pub fn from_settings(settings: Settings) -> Result<Engine, EngineError> {
        settings.validate()?;
        let embedder = load_embedder(&settings)?;
        // `index = "postgres://..."` selects the PostgreSQL backend
        // (groundcite-pg). With a model, both backends must hold its
        // vectors (hybrid retrieval); without one, retrieval is lexical.
        let retriever: Arc<dyn Retriever> = match settings.index.to_str() {
            Some(url) if groundcite_pg::is_postgres_url(url) => {
                let index = groundcite_pg::PgIndex::connect(url, Default::default())
                    .map_err(|e| EngineError::Index(e.to_string()))?;
                if let Some(embedder) = &embedder {
                    index
                        .check_vectors(index_embedder(&settings, embedder).model_id())
                        .map_err(|e| EngineError::Index(e.to_string()))?;
                }
                Arc::new(index)
            }
            _ => Arc::new(open_index(&settings, embedder.as_ref())?),
        };
        let generator = build_generator(&settings)?;
        // The trained judges, loaded once for the checker and the answer scorer.
        let scorer = settings.answerability.scorer;
        let judges = if scorer == UnitScorer::Trained
            || settings.check.verifier == groundcite_verify::VerifierKind::Trained
        {
            load_judges(&settings)?
        } else {
            None
        };
        let checker = Checker::from_models(&settings, embedder.clone(), judges.clone())?;
        let engine = Engine::new(settings, retriever, generator);
        let scorer_judges = match scorer {
            UnitScorer::Trained => Some(judges.ok_or_else(|| {
                EngineError::Config(format!(
                    "answerability.scorer = \"trained\" needs judges_dir: {JUDGES_HINT}"
                ))
            })?),
            UnitScorer::Embedding => None,
        };
        let engine = match embedder {
            Some(embedder) => engine.with_models(embedder, scorer_judges),
            None => engine,
        };
        Ok(engine.with_checker(checker))
    }

    /// The same engine checking its answers with `checker` (e.g. one with
    /// the LLM judge, [`Checker::from_settings`]).
    pub fn with_checker(self, checker: Checker) -> Engine {
        let inner = Arc::unwrap_or_clone(self.inner);
        Engine {
            inner: Arc::new(Inner { checker, ..inner }),
        }
    }

    /// The settings the engine was built from.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The generator's name: `extractive`, `openai`, `anthropic` or
    /// `scripted`.
    pub fn generator_name(&self) -> &str {
        self.inner.generator.name()
    }

    /// How many chunks the index holds, when the retriever knows.
    pub fn num_chunks(&self) -> Option<u64> {
        self.inner.retriever.chunk_count()
    }

    /// The top `k` hits for `query`, best first, by the engine's retrieval
    /// (hybrid with a model and vectors, else lexical). An empty query is a
    /// [`EngineError::BadRequest`].
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>, EngineError> {
        if query.trim().is_empty() {
            return Err(EngineError::BadRequest("the query is empty".into()));
        }
        self.retrieve(query, k)
    }

    /// The top `k` hits by this engine's [`Retrieval`]: with a model and
    /// vectors, the question is embedded and fused with BM25.
    fn retrieve(&self, query: &str, k: usize) -> Result<Vec<Hit>, EngineError> {
        match (&self.inner.embedder, self.inner.retrieval) {
            (Some(embedder), Retrieval::Hybrid) => {
                // The embedding's own error comes out as it is, not as the
                // index's.
                let failed = std::sync::Mutex::new(None);
                let embed = || {
                    embedder.embed_one(query).map_err(|e| {
                        let error = EngineError::Internal(format!("embedding the question: {e}"));
                        let message = error.to_string();
                        *failed.lock().expect("not poisoned") = Some(error);
                        groundcite_index::Error::Embedding(message)
                    })
                };
                let hits = self
                    .inner
                    .retriever
                    .search_hybrid_embedding(query, &embed, k);
                match (hits, failed.into_inner().expect("not poisoned")) {
                    (Err(_), Some(e)) => Err(e),
                    (hits, _) => hits.map_err(EngineError::from),
                }
            }
            _ => self
                .inner
                .retriever
                .search(query, k)
                .map_err(EngineError::from),
        }
    }

    /// The checks under this engine's configuration (no retrieval, no
    /// generation).
    pub fn checker(&self) -> &Checker {
        &self.inner.checker
    }

    /// The check of an answer over passages the caller retrieved.
    pub fn check(&self, question: Option<&str>, passages: &[Passage], answer: &str) -> CheckOutput {
        self.inner.checker.check(question, passages, answer)
    }

    /// The rendered contract and context for passages the caller retrieved.
    pub fn prompt(&self, question: &str, passages: &[Passage]) -> PromptOutput {
        self.inner.checker.prompt(question, passages)
    }

    fn prepare(
        &self,
        question: &str,
        opts: &AskOptions,
        started: Instant,
    ) -> Result<Prepared, EngineError> {
        let s = &self.inner.settings;
        if question.trim().is_empty() {
            return Err(EngineError::BadRequest("the question is empty".into()));
        }
        let k = opts.top_k.unwrap_or(s.top_k).clamp(1, crate::MAX_TOP_K);
        let hits = self.retrieve(question, k)?;
        let retrieve_ms = ms(started);
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        let topics = nearest_topics(&hits);
        // Without a model, the lexical gate on the best retrieval score;
        // with one, the judgement over sentences below decides.
        let judged = self.inner.answerability.as_ref();
        if (judged.is_none() && !gate::should_answer(&scores, s.gate_threshold)) || hits.is_empty()
        {
            let refusal = self.gate_refusal(question, &hits, topics);
            let mut result = self.refused(question, refusal, Vec::new(), Vec::new());
            result.timings.retrieve_ms = retrieve_ms;
            result.timings.total_ms = ms(started);
            return Ok(Prepared::Refused(Box::new(result)));
        }
        let passages = passages_of(&hits);
        let context = assemble(&passages, &s.check.assembly, &ApproxTokens);
        let mut rendered = prompt::render(question, &context, s.check.refusal_form);
        if s.generator == GeneratorKind::Anthropic
            && s.anthropic.mode == groundcite_llm::AnthropicMode::NativeCitations
        {
            // The passages travel as document blocks (document k is passage
            // [k]); the system prompt keeps only the rules.
            rendered.system = prompt::rules(s.check.refusal_form, context.len());
        }
        let sent = context.sent();
        let infos = SentPassageInfo::numbered(&sent);
        let mut gate_ms = 0.0;
        if let Some(judge) = judged {
            let gate_started = Instant::now();
            let judgement = judge_sent(judge, question, &sent, &hits)?;
            gate_ms = ms(gate_started);
            let best_retrieval = gate::best(&scores).unwrap_or(0.0);
            let reason = match judge.decide(&judgement, best_retrieval, s.gate_threshold) {
                GateDecision::Answer => None,
                GateDecision::NoDirectAnswer => Some(RefusalReason::NoDirectAnswer),
                GateDecision::Refuse => Some(RefusalReason::Gate),
            };
            if let Some(reason) = reason {
                let mut refusal = if reason == RefusalReason::Gate {
                    self.gate_refusal(question, &hits, topics)
                } else {
                    self.refusal(question, reason, None, topics)
                };
                if refusal.reason == RefusalReason::NoDirectAnswer {
                    refusal.closest_passages = closest_passages(&infos, &judgement);
                }
                let mut result = self.refused(question, refusal, infos, Vec::new());
                result.timings.retrieve_ms = retrieve_ms;
                result.timings.gate_ms = gate_ms;
                result.timings.total_ms = ms(started);
                return Ok(Prepared::Refused(Box::new(result)));
            }
        }
        let (system, messages) = match s.contract_role {
            ContractRole::System => (
                std::mem::take(&mut rendered.system),
                vec![ChatMessage::user(std::mem::take(&mut rendered.user))],
            ),
            ContractRole::User => (
                String::new(),
                vec![ChatMessage::user(rendered.as_user_message())],
            ),
        };
        let request = ChatRequest {
            system,
            messages,
            documents: sent
                .iter()
                .map(|p| Document {
                    title: p.section.clone(),
                    text: p.text.clone(),
                })
                .collect(),
            max_tokens: None,
            temperature: None,
            // A structured answer from OpenAI-compatible servers (unless
            // `openai.structured = "off"`); other backends ignore it.
            structured: (s.generator == GeneratorKind::Openai
                && s.openai.structured != StructuredFormat::Off)
                .then(|| StructuredRequest {
                    schema: structured::answer_schema(sent.len()),
                    instruction: prompt::structured_instruction(sent.len()),
                }),
        };
        Ok(Prepared::Ready(Box::new(Ready {
            sent,
            infos,
            request,
            topics,
            retrieve_ms,
            gate_ms,
        })))
    }

    /// The model path's judgement of a question without generating: the
    /// passages that would be sent, their units scored against the
    /// question, and the best retrieval score. `None` without a model.
    /// (The fitting tool reads the gate's inputs through it.)
    pub fn judge(&self, question: &str, opts: &AskOptions) -> Result<Option<Judged>, EngineError> {
        let Some(judge) = &self.inner.answerability else {
            return Ok(None);
        };
        let s = &self.inner.settings;
        let k = opts.top_k.unwrap_or(s.top_k).clamp(1, crate::MAX_TOP_K);
        let hits = self.search(question, k)?;
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        let sent = assemble(&passages_of(&hits), &s.check.assembly, &ApproxTokens).sent();
        Ok(Some(Judged {
            judgement: judge_sent(judge, question, &sent, &hits)?,
            best_retrieval: gate::best(&scores).unwrap_or(0.0),
            passages: SentPassageInfo::numbered(&sent),
        }))
    }

    /// Answers a question: the whole pipeline.
    pub async fn ask(&self, question: &str, opts: &AskOptions) -> Result<AskResult, EngineError> {
        let started = Instant::now();
        let Ready {
            sent,
            infos,
            mut request,
            topics,
            retrieve_ms,
            gate_ms,
        } = match self.prepare(question, opts, started)? {
            Prepared::Refused(result) => return Ok(*result),
            Prepared::Ready(ready) => *ready,
        };
        let generate_started = Instant::now();
        let mut attempts = Vec::new();
        let mut mode = None;
        let outcome = self
            .generate_validated(&mut request, &sent, &mut attempts, &mut mode, None)
            .await?;
        let generate_ms = ms(generate_started);
        let check_started = Instant::now();
        let mut result = self.finish(question, outcome, sent, infos, topics, attempts)?;
        result.generation_mode = mode;
        result.timings.retrieve_ms = retrieve_ms;
        result.timings.gate_ms = gate_ms;
        result.timings.generate_ms = generate_ms;
        result.timings.check_ms = ms(check_started);
        result.timings.total_ms = ms(started);
        Ok(result)
    }

    /// Generates (or takes `first` as the first attempt), drops the
    /// unfinished last sentence of a reply cut at the token limit,
    /// validates the markers (and, by option, the coverage), regenerates
    /// once with a corrective message, then applies the policies. An empty
    /// regeneration is a refusal: the first attempt was already rejected.
    /// A structured reply is rendered to marker text first (a cut one
    /// keeps its complete sentences); `mode` is set to how the last
    /// attempt that answered was generated.
    async fn generate_validated(
        &self,
        request: &mut ChatRequest,
        sent: &[Passage],
        attempts: &mut Vec<Attempt>,
        mode: &mut Option<GenerationMode>,
        first: Option<Generation>,
    ) -> Result<Outcome, EngineError> {
        let s = &self.inner.settings.check;
        let mut first = first;
        for attempt in 0..2u32 {
            let generation = match first.take() {
                Some(generation) => generation,
                None => match self.inner.generator.generate(request).await {
                    Ok(generation) => generation,
                    Err(e) => {
                        attempts.push(Attempt::failed(&e));
                        if attempt > 0 && e == LlmError::EmptyContent {
                            return Ok(Outcome::validation());
                        }
                        return Err(e.into());
                    }
                },
            };
            let raw = generation.text;
            let finish_reason = generation.finish_reason;
            let truncated = finalize::is_cut_off(finish_reason.as_deref());
            let rendered = generation
                .structured
                .then(|| structured::render(&raw, self.inner.settings.check.refusal_form))
                .flatten();
            *mode = Some(if rendered.is_some() {
                GenerationMode::Structured
            } else {
                GenerationMode::FreeText
            });
            let text = match rendered {
                Some(rendered) => rendered.text,
                None if truncated => finalize::drop_unfinished_tail(&raw).to_string(),
                None => raw.clone(),
            };
            let report = Report::check(&text, sent.len());
            attempts.push(Attempt {
                raw: raw.clone(),
                bad_ids: report.bad_ids.clone(),
                error: None,
                finish_reason: finish_reason.clone(),
            });
            if let Some(r) = &report.refusal {
                return Ok(Outcome::Refused {
                    reason: RefusalReason::Sentinel,
                    needed: r.needed(&text).map(str::to_string),
                });
            }
            if text.trim().is_empty() {
                // Cut before its first sentence ended: nothing to serve.
                return Ok(Outcome::validation());
            }
            let decision = match finalize::finalize(
                &text,
                &report,
                attempt,
                s.regenerate_once,
                s.bad_id_policy,
            ) {
                Decision::Serve { text, repaired } if s.regenerate_on_low_coverage => {
                    let report = if repaired {
                        Report::check(&text, sent.len())
                    } else {
                        report
                    };
                    let attempt = if s.regenerate_once { attempt } else { 1 };
                    finalize::finalize_coverage(
                        &text,
                        &report,
                        attempt,
                        s.grounded_threshold,
                        s.low_coverage_policy,
                    )
                }
                decision => decision,
            };
            match decision {
                Decision::Serve { text, .. } => {
                    return Ok(Outcome::Answer {
                        text,
                        finish_reason,
                        truncated,
                    });
                }
                Decision::Regenerate { corrective } => {
                    request.messages.push(ChatMessage::assistant(raw));
                    request.messages.push(ChatMessage::user(corrective));
                }
                Decision::Refuse => return Ok(Outcome::validation()),
            }
        }
        Ok(Outcome::validation())
    }

    /// Support, resolution and the unsupported policy, into the result.
    fn finish(
        &self,
        question: &str,
        outcome: Outcome,
        sent: Vec<Passage>,
        infos: Vec<SentPassageInfo>,
        topics: Vec<String>,
        attempts: Vec<Attempt>,
    ) -> Result<AskResult, EngineError> {
        let policy = self.inner.settings.check.unsupported_policy;
        let (text, output, finish_reason, truncated) = match outcome {
            Outcome::Refused { reason, needed } => {
                let mut refusal = self.refusal(question, reason, needed, topics);
                if reason == RefusalReason::Sentinel {
                    // The passages sent passed the gate: the documents
                    // discuss the question, they just hold no answer to
                    // it. Say so, and link the closest ones. The
                    // extractive generator's step back is our own
                    // judgement that no sentence answers.
                    if self.inner.generator.name() == "extractive" {
                        refusal.reason = RefusalReason::NoDirectAnswer;
                    }
                    refusal.closest_passages = infos.iter().take(CLOSEST).cloned().collect();
                }
                return Ok(self.refused(question, refusal, infos, attempts));
            }
            Outcome::Answer {
                text,
                finish_reason,
                truncated,
            } => {
                let output = self.check(Some(question), &sent, &text);
                match finalize::finalize_support(&text, &output, policy) {
                    Decision::Serve {
                        repaired: false, ..
                    } => (text, output, finish_reason, truncated),
                    // The flagged sentences were dropped: check what is served.
                    Decision::Serve { text, .. } => {
                        let output = self.check(Some(question), &sent, &text);
                        (text, output, finish_reason, truncated)
                    }
                    Decision::Refuse | Decision::Regenerate { .. } => {
                        let refusal =
                            self.refusal(question, RefusalReason::Validation, None, topics);
                        return Ok(self.refused(question, refusal, infos, attempts));
                    }
                }
            }
        };
        let answers_question = self
            .answers_question(question, &output.sentences)
            .map_err(EngineError::Internal)?;
        let mut findings = output.findings;
        // Two claims: the sentences are stated in the sources (`supported`)
        // and the answer answers the question (`answers_question`).
        // `grounded` certifies both, so an answer whose relevance was not
        // judged (no model) or was judged `no` is never grounded.
        findings.grounded = answers_question.grounds(findings.supported);
        Ok(AskResult {
            question: question.to_string(),
            answer: text,
            findings,
            counts: output.counts,
            passages: infos,
            refusal: None,
            answers_question: Some(answers_question),
            timings: Timings::default(),
            regenerated: attempts.len() > 1,
            attempts,
            generator: self.inner.generator.name().to_string(),
            retrieval: self.inner.retrieval,
            finish_reason,
            truncated,
            generation_mode: None,
        })
    }

    /// Does the served answer (its sentences) address the question? With
    /// the model, its best sentence's score against the question; without,
    /// `unchecked`.
    fn answers_question(
        &self,
        question: &str,
        sentences: &[groundcite_core::check::SentenceOut],
    ) -> Result<AnswersQuestion, String> {
        let Some(judge) = &self.inner.answerability else {
            return Ok(AnswersQuestion::unchecked());
        };
        let texts: Vec<&str> = sentences
            .iter()
            .filter(|s| s.kind != groundcite_core::sentence::SentenceKind::Heading)
            .map(|s| s.text.as_str())
            .collect();
        judge.answers_question(question, &texts)
    }
}

enum Outcome {
    Answer {
        text: String,
        finish_reason: Option<String>,
        truncated: bool,
    },
    Refused {
        reason: RefusalReason,
        needed: Option<String>,
    },
}

impl Outcome {
    /// The answer failed validation.
    fn validation() -> Outcome {
        Outcome::Refused {
            reason: RefusalReason::Validation,
            needed: None,
        }
    }
}

/// What [`Engine::judge`] returns.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The units of the passages that would be sent, scored against the
    /// question.
    pub judgement: Arc<Judgement>,
    /// The best normalised retrieval score (`0..=1`; 0 without hits).
    pub best_retrieval: f32,
    /// The passages that would be sent, numbered.
    pub passages: Vec<SentPassageInfo>,
}

/// Passages as retrieved, with their scores.
fn passages_of(hits: &[Hit]) -> Vec<Passage> {
    hits.iter()
        .map(|h| Passage {
            id: h.chunk.id.clone(),
            text: h.chunk.text.clone(),
            source_url: h.chunk.source_url.clone(),
            section: h.chunk.section.clone(),
            score: Some(h.score),
        })
        .collect()
}

/// The judgement of the passages sent, reusing the unit vectors the index
/// stored for a passage sent as retrieved (same id, section and text).
fn judge_sent(
    judge: &Answerability,
    question: &str,
    sent: &[Passage],
    hits: &[Hit],
) -> Result<Arc<Judgement>, EngineError> {
    let pairs: Vec<(&str, &str)> = sent
        .iter()
        .map(|p| (p.section.as_str(), p.text.as_str()))
        .collect();
    let known: Vec<Option<&UnitVectors>> = sent
        .iter()
        .map(|p| {
            hits.iter()
                .find(|h| {
                    h.chunk.id == p.id && h.chunk.section == p.section && h.chunk.text == p.text
                })
                .and_then(|h| h.units.as_ref())
        })
        .collect();
    judge
        .judge_with(question, &pairs, &known)
        .map_err(EngineError::Internal)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The logical root the embedded demo corpus is ingested under.
const DEMO_ROOT: &str = "demo";

/// Opens the configured index. A missing index at the default location is
/// created with the embedded demo corpus (so the README's first command
/// answers on a fresh clone). Any other missing index, and any empty one
/// (a first ingest killed midway), is an error that says to ingest: an
/// empty index would answer "Not covered" to everything.
/// With a model, the index is ingested with it (the demo corpus too) and
/// must hold that model's vectors for every file: an index ingested without
/// it is an error telling to re-ingest, never a silent lexical fallback;
/// only the demo index, holding nothing but the embedded corpus, is embedded
/// then and there.
fn open_index(
    settings: &Settings,
    embedder: Option<&Arc<Embedder>>,
) -> Result<groundcite_index::Index, EngineError> {
    let path = &settings.index;
    let is_default = *path == groundcite_index::Index::default_dir();
    let fresh = !path.exists();
    if fresh && !(is_default && settings.demo_on_first_use) {
        return Err(EngineError::Index(format!(
            "no index at {}: run `groundcite ingest PATH...` (with --index {0})",
            path.display()
        )));
    }
    let mut index = groundcite_index::Index::open_or_create(path)?;
    let embedder = embedder.map(|e| index_embedder(settings, e));
    if let Some(embedder) = &embedder {
        index.set_embedder(Arc::clone(embedder));
    }
    let ingest_demo = |index: &mut groundcite_index::Index| {
        groundcite_index::ChunkIndex::ingest_documents(
            index,
            DEMO_ROOT,
            groundcite_index::demo_documents(),
            &groundcite_index::IngestOptions::default(),
            &mut |_| {},
        )
    };
    if fresh && index.num_chunks() == 0 {
        ingest_demo(&mut index)?;
    }
    // The demo index, made before the model was fetched: it holds only the
    // embedded corpus, so it is embedded now rather than refused.
    if let Some(embedder) = &embedder
        && is_default
        && settings.demo_on_first_use
        && index.check_vectors(embedder.model_id()).is_err()
        && index
            .roots()
            .into_iter()
            .eq([groundcite_index::source::memory_root(DEMO_ROOT).as_str()])
    {
        tracing::info!(
            "embedding the demo handbook at {} with {}",
            path.display(),
            embedder.model_id()
        );
        ingest_demo(&mut index)?;
    }
    if index.num_chunks() == 0 {
        return Err(EngineError::Index(format!(
            "the index at {} is empty (an ingest that did not finish?): run `groundcite ingest PATH...`",
            path.display()
        )));
    }
    match embedder {
        Some(embedder) => index.check_vectors(embedder.model_id())?,
        // Never silent: the vectors are there, the model is not.
        None if !index.vectors().is_empty() => tracing::warn!(
            "the index at {} holds vectors of {}, but no embedding model is configured: \
             answering lexically. Set --model-dir, GROUNDCITE_MODEL_DIR or model_dir to the \
             model's folder to use them",
            path.display(),
            index.vectors().model_id
        ),
        None => {}
    }
    Ok(index)
}

/// Builds the configured generator.
/// Loads the configured embedding model; `None` when none is configured.
/// A configured folder that is missing or broken is an error naming the
/// file at fault, never a silent fallback to lexical-only.
pub fn load_embedder(settings: &Settings) -> Result<Option<Arc<Embedder>>, EngineError> {
    let Some(dir) = &settings.model_dir else {
        return Ok(None);
    };
    Embedder::load(dir)
        .map(|e| Some(Arc::new(e)))
        .map_err(|e| EngineError::Config(format!("model_dir: {e}")))
}

/// The embedder an index is built and read with: `embedder` under the
/// configured `unit_vectors` scheme (whose model id the index's vectors
/// must carry).
pub fn index_embedder(settings: &Settings, embedder: &Arc<Embedder>) -> Arc<dyn ChunkEmbedder> {
    groundcite_index::vectors::chunk_embedder(Arc::clone(embedder), settings.unit_vectors)
}

/// What to do when the trained judges are wanted but not configured.
pub const JUDGES_HINT: &str = "the released judges are in the repository's \
     models/groundcite-judges: set judges_dir in groundcite.toml, GROUNDCITE_JUDGES_DIR or \
     --judges-dir to that folder, and model_dir to all-MiniLM-L6-v2 (scripts/fetch-model.sh)";

/// The trained judges of `judges_dir`, over the base model of `model_dir`;
/// `None` without `judges_dir`. A configured folder that is missing or
/// broken, or judges without `model_dir`, is an error.
pub fn load_judges(settings: &Settings) -> Result<Option<Arc<Judges>>, EngineError> {
    let Some(dir) = &settings.judges_dir else {
        return Ok(None);
    };
    let Some(base) = &settings.model_dir else {
        return Err(EngineError::Config(format!(
            "judges_dir is set but model_dir is not: the judges read their words from the \
             embedding model they were trained from; {JUDGES_HINT}"
        )));
    };
    Judges::load(dir, base)
        .map(|j| Some(Arc::new(j)))
        .map_err(|e| EngineError::Config(format!("judges_dir: {e}")))
}

/// The generator `settings.generator` names, configured from its section
/// (`[extractive]`, `[openai]`, `[anthropic]`, or `script` for `scripted`).
pub fn build_generator(settings: &Settings) -> Result<Arc<dyn Generator>, EngineError> {
    Ok(match settings.generator {
        GeneratorKind::Extractive => Arc::new(ExtractiveGenerator::new(
            settings.extractive.clone(),
            settings.check.refusal_form,
        )),
        GeneratorKind::Openai => Arc::new(groundcite_llm::OpenAiGenerator::new(
            settings.openai.clone(),
        )?),
        GeneratorKind::Anthropic => Arc::new(groundcite_llm::AnthropicGenerator::new(
            settings.anthropic.clone(),
        )?),
        GeneratorKind::Scripted => {
            let path = settings
                .script
                .as_ref()
                .ok_or_else(|| EngineError::Config("generator = scripted needs `script`".into()))?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
            Arc::new(groundcite_llm::ScriptedGenerator::from_script(&text)?)
        }
    })
}
