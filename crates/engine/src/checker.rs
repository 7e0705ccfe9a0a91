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
use groundcite_embed::Embedder;
use groundcite_support::{
    LexicalVerifier, SemanticVerifier, SentenceEncoder, Verifier, VerifierKind,
};
use serde::Serialize;

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
    pub system: String,
    pub user: String,
    pub passages: Vec<PromptPassage>,
}

/// A passage of the assembled context.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptPassage {
    pub n: usize,
    pub id: String,
    pub source_url: String,
    pub section: String,
    /// Cut to fit the token budget.
    pub trimmed: bool,
}

impl Checker {
    /// A checker with the lexical verifier configured by `config.support`.
    pub fn new(config: CheckConfig) -> Checker {
        let verifier = Box::new(LexicalVerifier::new(config.support.clone()));
        Checker {
            inner: Arc::new(Inner { config, verifier }),
        }
    }

    /// The checker `config.verifier` names: lexical, or semantic with
    /// `embedder`. A semantic verifier without a model, or the LLM judge
    /// (not built yet), is a configuration error, never a silent fallback.
    pub fn configured(
        config: CheckConfig,
        embedder: Option<Arc<Embedder>>,
    ) -> Result<Checker, crate::EngineError> {
        match (config.verifier, embedder) {
            (VerifierKind::Lexical, _) => Ok(Checker::new(config)),
            (VerifierKind::Semantic, Some(embedder)) => {
                Ok(Checker::with_embedder(config, embedder))
            }
            (VerifierKind::Semantic, None) => Err(crate::EngineError::Config(format!(
                "check.verifier = \"semantic\" needs an embedding model: {}",
                groundcite_embed::FETCH_HINT
            ))),
            (VerifierKind::Llm, _) => Err(crate::EngineError::Config(
                "check.verifier = \"llm\" is not available yet: use \"lexical\" or \"semantic\""
                    .into(),
            )),
        }
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

    pub fn config(&self) -> &CheckConfig {
        &self.inner.config
    }

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
                    source_url: p.passage.source_url.clone(),
                    section: p.passage.section.clone(),
                    trimmed: p.trimmed,
                })
                .collect(),
        }
    }
}
