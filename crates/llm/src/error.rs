//! The one error type of this crate.

use std::time::Duration;

/// Why a generation failed.
///
/// Every message says what happened and what to do about it. None of them
/// ever contains an API key (keys live in [`Secret`](crate::Secret), whose
/// `Debug` and `Display` are masked, and they are never put in a URL).
///
/// | variant | retried by the HTTP backends? | typical cause |
/// |---|---|---|
/// | `Timeout` | no (the time budget is spent) | server slower than `timeout_secs` |
/// | `Connect` | yes, before the first streamed byte | server down, connection refused or reset |
/// | `Http` | 5xx and 408: yes; other 4xx: no | bad key (401), unknown model (404), server fault (5xx) |
/// | `RateLimited` | yes, honouring `Retry-After` up to a cap | too many requests (429) |
/// | `InvalidResponse` | no | not an OpenAI/Anthropic API, or a broken proxy |
/// | `EmptyContent` | no (the caller decides whether to regenerate) | the model produced no text |
/// | `StreamInterrupted` | no (bytes were already streamed) | stream cut before its end marker |
/// | `MissingApiKey` | never sent | the key's environment variable is unset |
/// | `Config` | never sent | invalid configuration |
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The server did not answer (or, when streaming, did not send the next
    /// chunk) within the configured request timeout.
    #[error(
        "the model server did not answer within {after:?}; raise timeout_secs (a local CPU model can need minutes per answer), lower max_tokens or use a faster model"
    )]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },

    /// The server could not be reached, or closed the connection before the
    /// response was complete (non-streaming) or before its first byte
    /// (streaming).
    #[error(
        "could not reach the model server at {url}: {message}; check base_url and that the server is running"
    )]
    Connect {
        /// The endpoint that was called (never contains a key).
        url: String,
        /// What the transport reported.
        message: String,
    },

    /// The server answered with a non-success HTTP status (after retries,
    /// for retryable statuses).
    #[error("the model server answered HTTP {status}: {message}{hint}", hint = http_hint(*.status))]
    Http {
        /// The HTTP status code (Anthropic's in-stream `error` events are
        /// mapped to the status their error type stands for).
        status: u16,
        /// The server's error message, or the start of its body.
        message: String,
    },

    /// The server answered 429 (or an in-stream `rate_limit_error`) and
    /// retries did not help, or it asked to wait longer than
    /// `max_retry_after_secs`.
    #[error("rate limited by the model server{}; wait before retrying, or lower the request rate", fmt_retry_after(.retry_after))]
    RateLimited {
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },

    /// The response could not be read as the documented wire format.
    #[error(
        "the model server sent a response groundcite cannot read: {0}; check that base_url points at the right kind of API"
    )]
    InvalidResponse(String),

    /// The model answered, but with no text (or only whitespace).
    #[error("the model returned no text; regenerate, or raise max_tokens if it stopped for length")]
    EmptyContent,

    /// A streamed answer ended before the model said it was finished
    /// (OpenAI: no `data: [DONE]` and no `finish_reason`; Anthropic: no
    /// `message_stop`), or stalled longer than the timeout. `partial` holds
    /// all text streamed so far; it must never be served as a complete answer.
    #[error(
        "the answer stream ended before the model finished ({} bytes received); do not serve the partial answer, retry the request",
        .partial.len()
    )]
    StreamInterrupted {
        /// The text streamed before the cut (exactly the concatenation of
        /// the `Text` events already yielded).
        partial: String,
    },

    /// A hosted backend needs an API key and its environment variable is
    /// unset or empty. Reported when the generator is built, before any
    /// request.
    #[error(
        "the environment variable {var} holding the API key is not set; export it, or set api_key_env in groundcite.toml to the variable that holds your key"
    )]
    MissingApiKey {
        /// The environment variable that was read.
        var: String,
    },

    /// The configuration or the request cannot be used.
    #[error("invalid LLM configuration: {0}")]
    Config(String),
}

impl LlmError {
    /// A stable, machine-readable code for this error (for the server's
    /// error table and the audit log).
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Timeout { .. } => "llm_timeout",
            LlmError::Connect { .. } => "llm_connect",
            LlmError::Http { .. } => "llm_http",
            LlmError::RateLimited { .. } => "llm_rate_limited",
            LlmError::InvalidResponse(_) => "llm_invalid_response",
            LlmError::EmptyContent => "llm_empty_content",
            LlmError::StreamInterrupted { .. } => "llm_stream_interrupted",
            LlmError::MissingApiKey { .. } => "llm_missing_api_key",
            LlmError::Config(_) => "llm_config",
        }
    }
}

fn http_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check the API key and its permissions)",
        404 => " (check base_url and the model name)",
        400 | 413 | 422 => {
            " (the request was rejected: check the model name, max_tokens and the prompt size)"
        }
        500..=599 => " (server-side failure: retry later)",
        _ => "",
    }
}

fn fmt_retry_after(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(
            " (the server asked to wait {}s)",
            d.as_secs_f64().ceil() as u64
        ),
        None => String::new(),
    }
}
