//! # groundcite-engine: the pipeline
//!
//! retrieval → gate → context assembly → prompt → generate → validate
//! (regenerate once on ids never sent) → support → resolve → policy.
//!
//! The pure core (`groundcite-core`, `groundcite-verify`) decides; this
//! crate wires the adapters around it: the index ([`Retriever`]), the
//! generators (`groundcite-llm` and the embedded [`ExtractiveGenerator`]),
//! the configuration ([`Settings`]), and the audit log's records of
//! answers and its stores by location ([`audit`]).

mod answer;
pub mod answerability;
pub mod audit;
pub mod checker;
pub mod eval;
pub mod extractive;
pub mod judge;
pub mod pipeline;
pub mod settings;
pub mod standalone;
mod text;

pub use answer::{
    AskEvent, AskOptions, AskRefusal, AskResult, Attempt, GenerationMode, NO_DIRECT_ANSWER,
    RefusalReason, Retraction, Retrieval, SOURCES_FOUND_UNJUDGED, SentPassageInfo,
    StreamedSentence, Timings, render_refusal,
};
/// The most passages one question or search retrieves (`top_k`, `k`): the
/// one bound the settings, the pipeline, the service and the Python package
/// hold requests to.
pub const MAX_TOP_K: usize = 50;

pub use answerability::{
    Answerability, AnswerabilityConfig, AnswersQuestion, Relevance, TrainedThresholds, UnitScorer,
};
pub use checker::{Checker, PromptOutput, PromptPassage};
pub use extractive::{ExtractiveConfig, ExtractiveGenerator};
pub use groundcite_index::Retriever;
pub use judge::{GeneratorJudge, JudgeBackend, JudgeSettings};
pub use pipeline::{Engine, JUDGES_HINT, Judged, index_embedder, load_embedder, load_judges};
pub use settings::{
    ConfigEntry, Configured, ContractRole, DEFAULT_MODEL_DIR, DEMO_HANDOFF, GeneratorKind, Origin,
    Override, PageSettings, Settings,
};

/// Errors of the pipeline. Findings (bad citations, unsupported claims)
/// are never errors: they are in the [`AskResult`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request cannot be served as sent (an empty question, say).
    #[error("{0}")]
    BadRequest(String),
    /// The index is missing, empty or unreadable, or its vectors are not
    /// the configured model's.
    #[error("index: {0}")]
    Index(String),
    /// The message includes the model error's; it is not also a `source`
    /// (a chain printer would say it twice).
    #[error("generator: {0}")]
    Generation(groundcite_llm::LlmError),
    /// The configuration is invalid, or names something that cannot be
    /// loaded.
    #[error("configuration: {0}")]
    Config(String),
    /// A failure that is not the caller's (a model failing at inference, say).
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngineError {
    /// A stable code for the service's error table.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::BadRequest(_) => "bad_request",
            EngineError::Index(_) => "index_unavailable",
            EngineError::Generation(e) => e.code(),
            EngineError::Config(_) => "configuration",
            EngineError::Internal(_) => "internal",
        }
    }
}

impl From<groundcite_llm::LlmError> for EngineError {
    fn from(e: groundcite_llm::LlmError) -> Self {
        EngineError::Generation(e)
    }
}

impl From<groundcite_index::Error> for EngineError {
    fn from(e: groundcite_index::Error) -> Self {
        EngineError::Index(e.to_string())
    }
}
