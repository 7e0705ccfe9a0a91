//! LLM backends of groundcite, behind one [`Generator`] trait.
//!
//! groundcite numbers the retrieved passages `[1]..[n]` in a prompt, asks a
//! model, and checks every marker in the answer. This crate is the "ask a
//! model" step: it turns a [`ChatRequest`] into a [`Generation`] (or a
//! stream of [`StreamEvent`]s), and reports every failure as a typed
//! [`LlmError`]. It does not validate markers: an answer citing `[7]` when
//! three passages were sent is returned verbatim, and the pipeline rejects
//! it.
//!
//! ```
//! use groundcite_llm::{ChatMessage, ChatRequest, Generator, ScriptedGenerator};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), groundcite_llm::LlmError> {
//! let generator: Box<dyn Generator> = Box::new(ScriptedGenerator::new(vec![
//!     "Reimbursements settle within 30 days of approval [2].".to_string(),
//! ]));
//! let request = ChatRequest {
//!     system: "You answer ONLY from the numbered passages below. ...".to_string(),
//!     messages: vec![ChatMessage::user("How long does reimbursement take?")],
//!     ..ChatRequest::default()
//! };
//! let answer = generator.generate(&request).await?;
//! assert_eq!(answer.text, "Reimbursements settle within 30 days of approval [2].");
//! # Ok(())
//! # }
//! ```
//!
//! # Backends
//!
//! | backend | endpoint | key | notes |
//! |---|---|---|---|
//! | [`OpenAiGenerator`] | `POST {base_url}/v1/chat/completions` | `Authorization: Bearer` from `OPENAI_API_KEY` (configurable); not required for loopback servers | OpenAI, Ollama, llama.cpp, vLLM, LM Studio; `base_url` with or without `/v1` |
//! | [`AnthropicGenerator`] | `POST {base_url}/v1/messages`, `anthropic-version: 2023-06-01` | `x-api-key` from `ANTHROPIC_API_KEY` (configurable); always required | [`AnthropicMode::Contract`]: the prompt's own markers; [`AnthropicMode::NativeCitations`]: passages as `document` blocks, Claude's `char_location` citations turned into `[k]` markers and [`NativeCitation`]s |
//! | [`ScriptedGenerator`] | none | none | replays prepared answers (and errors), optionally streamed at a fixed pace; for tests, benchmarks and demos |
//!
//! The HTTP backends are built from [`OpenAiConfig`] / [`AnthropicConfig`]
//! (serde, every field defaulted and documented, ready for a
//! `groundcite.toml` section); their timeouts and retries are one
//! [`TransportConfig`], flattened into each section. A missing key fails
//! at construction with [`LlmError::MissingApiKey`] naming the variable,
//! before any request.
//! Keys are held in [`Secret`], whose `Debug`/`Display` print `***`, are
//! sent in headers marked sensitive, and never appear in errors or logs.
//!
//! # Structured answers
//!
//! A [`ChatRequest`] with [`ChatRequest::structured`] asks for JSON
//! constrained by a schema (groundcite's: citation ids an `enum` of the
//! passages sent). [`OpenAiGenerator`] sends it as `response_format` in
//! the form [`StructuredFormat`] selects (default `auto`: OpenAI's
//! `json_schema`, then llama-cpp-python's `json_object` with a `schema`,
//! then free text), with the request's instruction added to the prompt. A
//! server that rejects a form (a 400, 422 or 501 naming the response
//! format, schema or grammar; llama-cpp-python 0.3.36 answers `json_schema`
//! with a 500 naming `response_format`, retried first like any 5xx) is
//! asked again in the next form, and
//! the generator remembers it for the rest of the process, streaming or
//! not. [`Generation::structured`] says whether the reply was asked under
//! the schema. The other backends ignore the request and answer in free
//! text. Nothing here parses the JSON: the pipeline renders it to markers
//! and validates it like any answer.
//!
//! # Retry policy
//!
//! Deterministic, no jitter. With the defaults (`max_retries = 2`,
//! `backoff_ms = 500`, `max_backoff_ms = 8000`, `max_retry_after_secs = 30`),
//! a request is sent at most 3 times.
//!
//! | failure | retried? | wait before retry `i` (0-based) |
//! |---|---|---|
//! | HTTP 429 | yes, up to `max_retries` | `Retry-After` (seconds or HTTP date) or `retry-after-ms` if sent, else `backoff * 2^i` (capped at `max_backoff`); a `Retry-After` above `max_retry_after_secs` is not waited for: `RateLimited { retry_after }` at once |
//! | HTTP 5xx (incl. Anthropic 529 overloaded), 408 | yes | same as 429 (`Retry-After` honoured when present) |
//! | connection refused / reset / closed before the response (or, streaming, before its first byte) | yes | `backoff * 2^i` |
//! | other 4xx (400, 401, 403, 404, 413, 422 ...) | no | - |
//! | timeout (`timeout_secs`) | no: the time budget is spent | - |
//! | invalid JSON, empty content | no: the caller decides to regenerate | - |
//! | anything after the first streamed byte | no: text was already delivered | - |
//!
//! [`Generation::retries`] reports how many retries a success needed; each
//! retry is logged at `warn` (URL, error, wait; never the key).
//!
//! # Streaming contract
//!
//! [`Generator::generate_stream`] yields zero or more [`StreamEvent::Text`]
//! and [`StreamEvent::Citation`] items, then exactly one
//! [`StreamEvent::Done`] with the complete [`Generation`], whose `text` is
//! exactly the concatenation of the `Text` items. On failure it yields one
//! `Err` instead of `Done`, and then ends. Nothing is sent before the
//! stream is first polled; dropping it closes the connection.
//!
//! * The stream is complete only when the server says so: OpenAI's
//!   `data: [DONE]` (or a `finish_reason` followed by the end of the body);
//!   Anthropic's `message_stop`. A body that ends (or breaks, or stalls for
//!   longer than `timeout_secs`) before that yields
//!   [`LlmError::StreamInterrupted`] with `partial`, the text yielded so far.
//!   It is never reported as complete.
//! * `timeout_secs` bounds the wait from sending the request to the first
//!   chunk of the body ([`LlmError::Timeout`]), then each gap between
//!   chunks (`StreamInterrupted`); the total length of a stream is not
//!   bounded.
//! * Retries happen only before the first byte of a successful response.
//! * OpenAI: `choices[0].delta.content` of each `data:` chunk becomes a
//!   `Text`. An in-stream `{"error": ...}` object becomes [`LlmError::Http`].
//! * Anthropic: `text_delta`s become `Text`; `citations_delta`s (native
//!   mode) become `Citation`s plus a `Text` with the `[k]` marker when their
//!   block stops; a block's trailing whitespace is held back until the block
//!   ends so the marker can precede it. `ping` and unknown events are
//!   ignored; an `error` event becomes [`LlmError::Http`] with the status its
//!   type stands for (`overloaded_error` 529, `api_error` 500, ...) or
//!   [`LlmError::RateLimited`].
//! * `Generation::raw` holds the SSE `data` payloads joined with `\n`.
//!
//! # Errors
//!
//! | error | `code()` | meaning | what to do |
//! |---|---|---|---|
//! | [`LlmError::Timeout`] | `llm_timeout` | no answer (or no next chunk) in `timeout_secs` | raise the timeout, lower `max_tokens` |
//! | [`LlmError::Connect`] | `llm_connect` | unreachable, refused, reset (after retries) | check `base_url`, start the server |
//! | [`LlmError::Http`] | `llm_http` | non-success status (after retries for 5xx) | 401/403: key; 404: model or URL; 5xx: later |
//! | [`LlmError::RateLimited`] | `llm_rate_limited` | 429 after retries, or `Retry-After` above the cap | wait `retry_after` |
//! | [`LlmError::InvalidResponse`] | `llm_invalid_response` | body is not the documented format | check `base_url` points at the right API |
//! | [`LlmError::EmptyContent`] | `llm_empty_content` | the model returned no text | regenerate; raise `max_tokens` |
//! | [`LlmError::StreamInterrupted`] | `llm_stream_interrupted` | stream cut before its end marker | never serve `partial` as complete; retry |
//! | [`LlmError::MissingApiKey`] | `llm_missing_api_key` | key variable unset (at construction) | export it or set `api_key_env` |
//! | [`LlmError::Config`] | `llm_config` | invalid settings or request; scripted generator exhausted | fix the configuration |
#![warn(missing_docs)]

mod anthropic;
mod error;
mod generator;
mod http;
mod openai;
mod retry;
mod scripted;
mod secret;
/// The server-sent-events framing the streaming backends read (public
/// for the fuzz target).
pub mod sse;
mod transport;
mod types;

pub use anthropic::{AnthropicConfig, AnthropicGenerator, AnthropicMode};
pub use error::LlmError;
pub use generator::{BoxFuture, EventStream, Generator};
pub use openai::{OpenAiConfig, OpenAiGenerator, StructuredFormat};
pub use retry::{RetryPolicy, parse_retry_after};
pub use scripted::{Exhausted, ScriptedGenerator};
pub use secret::Secret;
pub use transport::TransportConfig;
pub use types::{
    ChatMessage, ChatRequest, Document, Generation, NativeCitation, Role, StreamEvent,
    StructuredRequest,
};
