//! Requests, answers and stream events: the vocabulary shared by every
//! backend.

use serde::{Deserialize, Serialize};

/// Who wrote a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person asking (or the pipeline speaking for them).
    User,
    /// The model (an earlier answer, e.g. when asking it to regenerate).
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A retrieved passage, as sent to backends that take documents natively.
///
/// Passage `k` (the `[k]` of the prompt) is `documents[k - 1]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Document {
    /// A short title (sent to Anthropic as the document title; omitted when
    /// empty).
    pub title: String,
    /// The passage text. Native citation offsets point into it.
    pub text: String,
}

/// What to ask the model.
///
/// Backends that only speak chat (OpenAI-compatible, Anthropic in `Contract`
/// mode) ignore `documents`: the numbered passages are expected to be in
/// `system` or in the messages already, rendered by the prompt stage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The system prompt (the citation contract). Not sent when empty.
    pub system: String,
    /// The conversation, oldest first; normally one user message.
    pub messages: Vec<ChatMessage>,
    /// The passages; passage `k` is `documents[k - 1]`. Used by Anthropic's
    /// `NativeCitations` mode.
    pub documents: Vec<Document>,
    /// Overrides the backend's configured `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Overrides the backend's configured `temperature`.
    pub temperature: Option<f32>,
    /// Ask for a structured answer: JSON constrained by a schema. Backends
    /// that cannot (Anthropic, the scripted generator) ignore it and answer
    /// in free text; [`Generation::structured`] says which was done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<StructuredRequest>,
}

/// A request for an answer constrained by a JSON schema.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StructuredRequest {
    /// The JSON schema the reply must follow.
    pub schema: serde_json::Value,
    /// What the model is told about the shape, sent only together with the
    /// schema: appended to the system message (or, without one, to the
    /// last user message).
    pub instruction: String,
}

/// A citation produced by the model itself (Anthropic native citations),
/// already mapped onto groundcite's `[k]` markers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeCitation {
    /// The passage cited, 1-based (`document_index + 1`). It is copied from
    /// the response without range checks: validation is the pipeline's job.
    pub passage: usize,
    /// The quoted text, as the model reported it.
    pub cited_text: String,
    /// Start of the quote: a byte offset into `documents[passage - 1].text`
    /// (converted from Anthropic's character offset; clamped to the text).
    pub passage_start: usize,
    /// End of the quote (exclusive), a byte offset like `passage_start`.
    pub passage_end: usize,
    /// Byte offset in [`Generation::text`] where this citation's `[k]`
    /// marker starts.
    pub answer_offset: usize,
}

/// A finished answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Generation {
    /// The answer text. With native citations, `[k]` markers have been
    /// inserted, so the rest of the pipeline sees an ordinary marked answer.
    /// Markers written by the model are returned verbatim, valid or not.
    pub text: String,
    /// Native citations, in answer order (empty for other backends).
    pub native_citations: Vec<NativeCitation>,
    /// The model that answered (as the server reported it, else as
    /// configured).
    pub model: String,
    /// Why the model stopped (`"stop"`, `"length"`, `"end_turn"`,
    /// `"max_tokens"`, ...), as the server reported it.
    pub finish_reason: Option<String>,
    /// For the audit log: the raw response body, or the SSE `data` payloads
    /// joined with `\n`.
    pub raw: String,
    /// How many times the request was retried before it succeeded.
    pub retries: u32,
    /// The reply was asked for under [`ChatRequest::structured`]'s schema
    /// and the server accepted it: `text` is meant to be JSON of that
    /// shape. `false`: free text (not asked, or the server rejected the
    /// schema and the request was sent again without it).
    pub structured: bool,
}

/// One item of a streamed answer; see the crate docs for the contract.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More answer text. Concatenated, all `Text` events equal the final
    /// [`Generation::text`].
    Text(String),
    /// A native citation, emitted when its cited block ends, just before
    /// the `Text` event that carries its marker; its `answer_offset` is where
    /// that marker starts. (A citation of a passage whose marker was already
    /// placed at that point refers to the earlier marker.)
    Citation(NativeCitation),
    /// The end: the complete answer. Always the last item of a successful
    /// stream.
    Done(Generation),
}
