//! The engine as an [`Answerer`].
//!
//! ```no_run
//! # fn run() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use groundcite_engine::{Engine, Settings};
//! use groundcite_server::{AppState, AuditConfig, ServerConfig};
//!
//! let settings = Settings::default();
//! let mut config = ServerConfig::from_env()?;
//! config.check = settings.check.clone();                  // /v1/check judges like the engine
//! config.audit = AuditConfig::at(&settings.audit_path);
//! let engine = Engine::from_settings(settings)?;
//! let state = AppState::new(config, Some(Arc::new(engine)));
//! # Ok(()) }
//! ```

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use groundcite_engine::{AskEvent, AskOptions, AskResult, Engine, EngineError};

use crate::answerer::{
    AnswerError, AnswerErrorKind, AnswerEvent, Answerer, AskParams, Readiness, SearchHit,
};

/// The engine's errors in the service's terms: a bad request stays a 400,
/// a model timeout is a 504, any other model failure a 502, an index
/// failure a 503; configuration and internal errors are 500 (logged).
pub fn answer_error(e: EngineError) -> AnswerError {
    let code = e.code();
    let kind = match &e {
        EngineError::BadRequest(_) => AnswerErrorKind::BadRequest,
        EngineError::Index(_) => AnswerErrorKind::Unavailable,
        EngineError::Generation(_) if code == "llm_timeout" => AnswerErrorKind::Timeout,
        EngineError::Generation(_) => AnswerErrorKind::Upstream,
        EngineError::Config(_) | EngineError::Internal(_) => AnswerErrorKind::Internal,
    };
    AnswerError::new(kind, code, e.to_string())
}

impl Answerer for Engine {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        params: AskParams,
    ) -> BoxFuture<'a, Result<AskResult, AnswerError>> {
        async move {
            let opts = AskOptions {
                top_k: params.top_k,
            };
            Engine::ask(self, question, &opts)
                .await
                .map_err(answer_error)
        }
        .boxed()
    }

    fn ask_stream(&self, question: &str, params: AskParams) -> BoxStream<'static, AnswerEvent> {
        let opts = AskOptions {
            top_k: params.top_k,
        };
        Engine::ask_stream(self, question, &opts)
            .map(|event| match event {
                AskEvent::Sentence(sentence) => AnswerEvent::Sentence(sentence),
                AskEvent::Retract(retraction) => AnswerEvent::Retract(retraction),
                AskEvent::Final(result) => AnswerEvent::Final(result),
                AskEvent::Error(e) => AnswerEvent::Error(answer_error(e)),
            })
            .boxed()
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        k: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, AnswerError>> {
        let engine = self.clone();
        let query = query.to_string();
        async move {
            let hits = tokio::task::spawn_blocking(move || engine.search(&query, k))
                .await
                .map_err(|e| AnswerError::new(AnswerErrorKind::Internal, "join", e.to_string()))?
                .map_err(answer_error)?;
            Ok(hits
                .into_iter()
                .map(|h| SearchHit {
                    id: h.chunk.id,
                    title: h.chunk.title,
                    section: h.chunk.section,
                    source_url: h.chunk.source_url,
                    text: h.chunk.text,
                    score: h.score,
                })
                .collect())
        }
        .boxed()
    }

    /// An engine exists only once its index is open and its generator
    /// built; its index is ready while it holds chunks (an index emptied
    /// under a running server, or a shared PostgreSQL index still empty,
    /// is not).
    fn readiness(&self) -> Readiness {
        Readiness {
            index: self.num_chunks() != Some(0),
            generator: Some(self.generator_name().to_string()),
            passages: None,
        }
    }
}
