//! The checks without retrieval or generation: an answer the caller got
//! elsewhere, over passages the caller retrieved.
//!
//! [`Checker`] is what `POST /v1/check` and `POST /v1/prompt` run (also on
//! a server with no index or generator), and what [`crate::Engine`] checks
//! its own answers with: one configuration, one verifier.

use std::sync::Arc;

use groundcite_core::check::{self, CheckOutput};
use groundcite_core::passage::{ApproxTokens, assemble};
use groundcite_core::{CheckConfig, Passage, prompt};
use groundcite_embed::{Embedder, Judges};
use groundcite_verify::{
    Entailment, EntailmentJudge, LexicalVerifier, LlmVerifier, SemanticVerifier, SentenceEncoder,
    TrainedVerifier, Verifier, VerifierKind,
};
use serde::Serialize;

use crate::judge::GeneratorJudge;

/// The contract's checks and prompt under one [`CheckConfig`]. Cheap to
/// clone.
#[derive(Clone)]
pub struct Checker {
    inner: Arc<Inner>,
}

struct Inner {
    config: CheckConfig,
    verifier: Box<dyn Verifier + Send + Sync>,
}

/// The embedding model as support's [`SentenceEncoder`]: support stays pure, the model runs
/// here.
struct EmbedEncoder(Arc<Embedder>);

impl SentenceEncoder for EmbedEncoder {
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let vectors = self.0.embed(texts).map_err(|e| e.to_string())?;
        Ok(vectors.rows().map(<[f32]>::to_vec).collect())
    }
}

/// The trained judges' support head as the trained verifier's judge.
struct JudgesSupport(Arc<Judges>);

impl EntailmentJudge for JudgesSupport {
    fn judge(&self, pairs: &[(&str, &str)]) -> Result<Vec<Entailment>, String> {
        let scores = self.0.support(pairs).map_err(|e| e.to_string())?;
        Ok(scores
            .into_iter()
            .map(|[entailed, neutral, contradicted]| Entailment {
                entailed,
                neutral,
                contradicted,
            })
            .collect())
    }
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// The rendered contract for passages the caller retrieved, and the
/// passages as numbered after assembly (`[k]` is `passages[k-1]`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptOutput {
    /// The system message: the citation rules, then the numbered passages.
    pub system: String,
    /// The user message: the question, trimmed.
    pub user: String,
    /// The passages sent, in order.
    pub passages: Vec<PromptPassage>,
}

/// A passage of the assembled context: `[n]` in the prompt. Its `text` is
/// what was sent (a prefix of the passage when `trimmed`), so the
/// passages of a prompt, in order, are what to check its answer against.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptPassage {
    /// Its number, from 1: the `k` of `[k]`.
    pub n: usize,
    /// The passage's id, as the caller gave it.
    pub id: String,
    /// Where a reader opens it; empty when the link is not safe.
    pub source_url: String,
    /// Its section label.
    pub section: String,
    /// The text sent.
    pub text: String,
    /// Cut to fit the token budget.
    pub trimmed: bool,
    /// The retrieval score the caller gave, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
}

impl Checker {
    /// A checker with the lexical verifier configured by `config.support`.
    pub fn new(config: CheckConfig) -> Checker {
        let verifier = Box::new(LexicalVerifier::new(config.support.clone()));
        Checker {
            inner: Arc::new(Inner { config, verifier }),
        }
    }

    /// The checker `settings` configure: `check.verifier`, with the model
    /// (`embedder`, loaded by the caller from `model_dir`), for `"llm"`
    /// the judge over `[judge]`'s backend, and for `"trained"` the trained
    /// judges of `judges_dir` (loaded here).
    pub fn from_settings(
        settings: &crate::Settings,
        embedder: Option<Arc<Embedder>>,
    ) -> Result<Checker, crate::EngineError> {
        let judges = match settings.check.verifier {
            VerifierKind::Trained => crate::load_judges(settings)?,
            _ => None,
        };
        Checker::from_models(settings, embedder, judges)
    }

    /// [`Checker::from_settings`] with the trained judges already loaded
    /// (the engine loads them once, for the checker and the answer scorer).
    pub fn from_models(
        settings: &crate::Settings,
        embedder: Option<Arc<Embedder>>,
        judges: Option<Arc<Judges>>,
    ) -> Result<Checker, crate::EngineError> {
        let judge = match settings.check.verifier {
            VerifierKind::Llm => Some(GeneratorJudge::from_settings(settings)?),
            VerifierKind::Trained => {
                let judges = judges.ok_or_else(|| {
                    crate::EngineError::Config(format!(
                        "check.verifier = \"trained\" needs judges_dir: {}",
                        crate::JUDGES_HINT
                    ))
                })?;
                return Ok(Checker::trained(settings.check.clone(), judges));
            }
            VerifierKind::Lexical | VerifierKind::Semantic => None,
        };
        Checker::configured(settings.check.clone(), embedder, judge)
    }

    /// A checker with the trained verifier: the lexical rules, then the
    /// trained support judge wherever the rules are not exact (reports say
    /// `verifier: "trained"`).
    pub fn trained(config: CheckConfig, judges: Arc<Judges>) -> Checker {
        let lexical = LexicalVerifier::new(config.support.clone());
        let verifier = Box::new(TrainedVerifier::new(lexical, JudgesSupport(judges)));
        Checker {
            inner: Arc::new(Inner { config, verifier }),
        }
    }

    /// The checker `config.verifier` names: lexical; semantic with
    /// `embedder`; or the LLM judge over the semantic verifier (with a
    /// model) or the lexical one. A semantic verifier without a model, or
    /// the LLM verifier without a judge, is a configuration error, never a
    /// silent fallback.
    pub fn configured(
        config: CheckConfig,
        embedder: Option<Arc<Embedder>>,
        judge: Option<GeneratorJudge>,
    ) -> Result<Checker, crate::EngineError> {
        let lexical = LexicalVerifier::new(config.support.clone());
        let verifier: Box<dyn Verifier + Send + Sync> = match (config.verifier, embedder) {
            (VerifierKind::Lexical, _) => Box::new(lexical),
            (VerifierKind::Semantic, Some(embedder)) => {
                Box::new(SemanticVerifier::new(lexical, EmbedEncoder(embedder)))
            }
            (VerifierKind::Semantic, None) => {
                return Err(crate::EngineError::Config(format!(
                    "check.verifier = \"semantic\" needs an embedding model: {}",
                    groundcite_embed::FETCH_HINT
                )));
            }
            (VerifierKind::Trained, _) => {
                return Err(crate::EngineError::Config(format!(
                    "check.verifier = \"trained\" needs the judges of judges_dir: {}",
                    crate::JUDGES_HINT
                )));
            }
            (VerifierKind::Llm, embedder) => {
                let Some(judge) = judge else {
                    return Err(crate::EngineError::Config(
                        "check.verifier = \"llm\" needs a judge: set judge.backend (see [judge])"
                            .into(),
                    ));
                };
                let limits = judge.limits();
                let inner: Box<dyn Verifier + Send + Sync> = match embedder {
                    Some(embedder) => {
                        Box::new(SemanticVerifier::new(lexical, EmbedEncoder(embedder)))
                    }
                    None => Box::new(lexical),
                };
                Box::new(LlmVerifier::new(inner, judge, limits))
            }
        };
        Ok(Checker {
            inner: Arc::new(Inner { config, verifier }),
        })
    }

    /// A checker with the semantic verifier: the lexical rules, then sentence similarity from
    /// `embedder` for sentences the rules found only words missing from (reports say
    /// `verifier: "semantic"`).
    pub fn with_embedder(config: CheckConfig, embedder: Arc<Embedder>) -> Checker {
        let lexical = LexicalVerifier::new(config.support.clone());
        let verifier = Box::new(SemanticVerifier::new(lexical, EmbedEncoder(embedder)));
        Checker {
            inner: Arc::new(Inner { config, verifier }),
        }
    }

    /// The check settings it runs with.
    pub fn config(&self) -> &CheckConfig {
        &self.inner.config
    }

    /// The verifier that judges each sentence's support.
    pub fn verifier(&self) -> &(dyn Verifier + Send + Sync) {
        self.inner.verifier.as_ref()
    }

    /// Refuses a request over the configured limits (`check.limits`)
    /// before any work is done.
    pub fn admit(
        &self,
        passages: &[Passage],
        answer: &str,
    ) -> Result<(), groundcite_core::limits::LimitExceeded> {
        self.inner.config.limits.admit(passages, answer)
    }

    /// The full check of `answer` over `passages` (the passages sent, in
    /// order).
    pub fn check(&self, question: Option<&str>, passages: &[Passage], answer: &str) -> CheckOutput {
        check::check(
            question,
            passages,
            answer,
            &self.inner.config,
            self.inner.verifier.as_ref(),
        )
    }

    /// [`Checker::check`] that gives up when `stop()` turns true (`None`): asked between
    /// sentences, so a check whose deadline passed or whose client left stops within one
    /// sentence's work.
    pub fn check_until(
        &self,
        question: Option<&str>,
        passages: &[Passage],
        answer: &str,
        stop: &dyn Fn() -> bool,
    ) -> Option<CheckOutput> {
        check::check_until(
            question,
            passages,
            answer,
            &self.inner.config,
            self.inner.verifier.as_ref(),
            stop,
        )
    }

    /// The contract and the context for `question` over `passages`:
    /// trimmed to the budget, then numbered.
    pub fn prompt(&self, question: &str, passages: &[Passage]) -> PromptOutput {
        let config = &self.inner.config;
        let context = assemble(passages, &config.assembly, &ApproxTokens);
        let rendered = prompt::render(question, &context, config.refusal_form);
        PromptOutput {
            system: rendered.system,
            user: rendered.user,
            passages: context
                .passages
                .iter()
                .map(|p| PromptPassage {
                    n: p.n,
                    id: p.passage.id.clone(),
                    source_url: groundcite_core::link::safe_link(&p.passage.source_url).to_string(),
                    section: p.passage.section.clone(),
                    text: p.text.to_owned(),
                    trimmed: p.trimmed,
                    score: p.passage.score,
                })
                .collect(),
        }
    }
}
