//! The seam between the service and the pipeline.
//!
//! An [`Answerer`] hands back the engine's own types ([`AskResult`]); the
//! service serializes them as they are, and metrics and the audit log read
//! their typed fields. The engine implements it (`crate::engine`); test
//! doubles (`fake::StaticAnswerer`, feature `test-support`) build the same types.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use groundcite_engine::AskResult;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};

/// Options of one question, from the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskParams {
    /// How many passages to retrieve; the answerer's default when `None`.
    pub top_k: Option<usize>,
}

/// What went wrong while answering, in the service's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerErrorKind {
    /// The request is invalid (400).
    BadRequest,
    /// The LLM failed (502).
    Upstream,
    /// The LLM or the pipeline timed out (504).
    Timeout,
    /// The index is not open, no generator (503).
    Unavailable,
    /// A bug; the message is logged, never returned (500).
    Internal,
}

/// An error from the answerer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerError {
    /// What went wrong, which sets the HTTP status and error code.
    pub kind: AnswerErrorKind,
    /// The answerer's own stable code (for logs), e.g. `generation`.
    pub source_code: &'static str,
    /// The detail; returned to the client only for bad requests, logged otherwise.
    pub message: String,
}

impl AnswerError {
    /// An error of `kind`, with the answerer's code and the detail.
    pub fn new(
        kind: AnswerErrorKind,
        source_code: &'static str,
        message: impl Into<String>,
    ) -> AnswerError {
        AnswerError {
            kind,
            source_code,
            message: message.into(),
        }
    }

    /// Maps to the error table. Internal details are logged, not returned;
    /// upstream messages are kept (they say which backend failed, not how
    /// the service is built).
    pub fn into_api(self, request_id: &str) -> ApiError {
        match self.kind {
            AnswerErrorKind::BadRequest => ApiError::new(ErrorCode::InvalidBody, self.message),
            AnswerErrorKind::Upstream => {
                tracing::warn!(request_id, code = self.source_code, error = %self.message, "upstream failure");
                ApiError::new(
                    ErrorCode::UpstreamError,
                    format!("the language model call failed (request id {request_id})"),
                )
            }
            AnswerErrorKind::Timeout => {
                tracing::warn!(request_id, code = self.source_code, error = %self.message, "timeout");
                ApiError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the answer took too long (request id {request_id}); a local model answering with one regeneration can need more than the service's timeout: raise GROUNDCITE_TIMEOUT_SECS (default 60 s)"
                    ),
                )
            }
            AnswerErrorKind::Unavailable => {
                tracing::warn!(request_id, code = self.source_code, error = %self.message, "not ready");
                ApiError::new(
                    ErrorCode::NotReady,
                    "the index is not open or no generator is configured",
                )
            }
            AnswerErrorKind::Internal => ApiError::internal(
                request_id,
                format_args!("{}: {}", self.source_code, self.message),
            ),
        }
    }
}

impl std::fmt::Display for AnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.source_code, self.message)
    }
}

impl std::error::Error for AnswerError {}

/// A streamed sentence whose markers validated (the data of an SSE
/// `sentence` event): the engine's type, served as it is.
pub use groundcite_engine::StreamedSentence as SentenceEvent;

/// The sentences streamed so far are withdrawn (the data of an SSE
/// `retract` event): the engine's type, served as it is.
pub use groundcite_engine::Retraction as RetractEvent;

/// One event of a streamed answer.
#[derive(Debug, Clone)]
pub enum AnswerEvent {
    /// A sentence whose markers validated.
    Sentence(SentenceEvent),
    /// Every sentence sent so far is withdrawn.
    Retract(RetractEvent),
    /// The full answer (as [`Answerer::ask`] returns it). Last event.
    Final(Box<AskResult>),
    /// A failure. Last event.
    Error(AnswerError),
}

/// A search hit (`GET /v1/search`).
#[derive(utoipa::ToSchema, Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The passage id: `{relative/path}#L{first}-L{last}`, stable across re-ingests.
    pub id: String,
    /// The page title.
    pub title: String,
    /// The heading path joined with " › ", or the page title above the first heading.
    pub section: String,
    /// The page URL, plus the `#anchor` of the passage's heading when it has one.
    pub source_url: String,
    /// The passage's cleaned text.
    pub text: String,
    /// Normalised to `0..=1`.
    pub score: f32,
}

/// Is the answerer able to answer?
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// The index is open.
    pub index: bool,
    /// The generator's name (`scripted`, `openai`, `extractive`, ...), if one is configured.
    pub generator: Option<String>,
    /// Passages in the index, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passages: Option<u64>,
}

impl Readiness {
    /// Ready to answer: the index is open and a generator is configured.
    pub fn is_ready(&self) -> bool {
        self.index && self.generator.is_some()
    }
}

/// Answers questions: retrieval, generation and the checks. The engine
/// implements it; tests and demos use `fake::StaticAnswerer`
/// (feature `test-support`).
pub trait Answerer: Send + Sync + 'static {
    /// Answers one question.
    fn ask<'a>(
        &'a self,
        question: &'a str,
        params: AskParams,
    ) -> BoxFuture<'a, Result<AskResult, AnswerError>>;

    /// Answers one question sentence by sentence: zero or more
    /// [`AnswerEvent::Sentence`], then one `Final` or `Error`.
    fn ask_stream(&self, question: &str, params: AskParams) -> BoxStream<'static, AnswerEvent>;

    /// Searches the index.
    fn search<'a>(
        &'a self,
        query: &'a str,
        k: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, AnswerError>>;

    /// Index open, generator configured.
    fn readiness(&self) -> Readiness;
}
