//! Anthropic Messages API, in two modes: the citation contract like any
//! model, or Claude's native citations mapped onto `[k]` markers.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::http::{self, HttpCore, StreamDecoder, drive_stream, snippet};
use crate::sse::SseEvent;
use crate::{
    BoxFuture, ChatRequest, Document, EventStream, Generation, Generator, LlmError, NativeCitation,
    Role, Secret, StreamEvent, TransportConfig,
};

/// How passages reach Claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnthropicMode {
    /// Like any model: `system` and `messages` are sent as given (the
    /// numbered passages are already in the prompt); `documents` are not
    /// sent. The answer's `[k]` markers are the model's own.
    #[default]
    Contract,
    /// `documents` are sent as `document` content blocks with citations
    /// enabled, placed before the text of the first user message. The
    /// model's `char_location` citations become `[k]` markers and
    /// [`NativeCitation`]s (see [`AnthropicGenerator`]).
    NativeCitations,
}

/// Settings of [`AnthropicGenerator`], loadable from `groundcite.toml`.
/// Every field has a default, so any subset may be given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnthropicConfig {
    /// Where the API lives, with or without a trailing `/v1`; requests go to
    /// `{base_url}/v1/messages`. Default `"https://api.anthropic.com"`.
    pub base_url: String,
    /// The model name. Default `"claude-sonnet-4-5"`.
    pub model: String,
    /// The environment variable holding the API key (sent as `x-api-key`).
    /// Always required. Default `"ANTHROPIC_API_KEY"`.
    pub api_key_env: String,
    /// Contract or native citations. Default `contract` (in TOML:
    /// `mode = "contract"` or `mode = "native_citations"`).
    pub mode: AnthropicMode,
    /// The `anthropic-version` header. Default `"2023-06-01"`.
    pub version: String,
    /// Sampling temperature (0 to 1), unless the request overrides it.
    /// Default `0.0`.
    pub temperature: f32,
    /// Answer length limit (`max_tokens`, required by the API), unless the
    /// request overrides it. Default `512`.
    pub max_tokens: u32,
    /// Timeouts and retries (keys `timeout_secs`, `connect_timeout_secs`,
    /// `max_retries`, `backoff_ms`, `max_backoff_ms`,
    /// `max_retry_after_secs` in this same section).
    #[serde(flatten)]
    pub transport: TransportConfig,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: "https://api.anthropic.com".to_string(),
            model: "claude-sonnet-4-5".to_string(),
            api_key_env: "ANTHROPIC_API_KEY".to_string(),
            mode: AnthropicMode::Contract,
            version: "2023-06-01".to_string(),
            temperature: 0.0,
            max_tokens: 512,
            transport: TransportConfig::default(),
        }
    }
}

/// A [`Generator`] for `POST {base_url}/v1/messages`.
///
/// # Native citations
///
/// In [`AnthropicMode::NativeCitations`], each text block of the answer that
/// carries `citations` gets markers `[document_index + 1]` appended after its
/// text, before its trailing whitespace; a passage is marked once per
/// insertion point (adjacent citations of the same passage share one
/// marker). Each citation becomes a [`NativeCitation`] whose `answer_offset`
/// is the byte offset of its marker and whose `passage_start..passage_end`
/// are byte offsets into `documents[passage - 1].text`, converted from
/// Anthropic's character offsets (Unicode scalar values; if the quote does
/// not match there but matches as UTF-16 offsets, those are used). Out of
/// range values are kept for the passage number (the pipeline rejects it)
/// and clamped for offsets. Citation kinds other than `char_location` keep
/// their marker with an empty range.
pub struct AnthropicGenerator {
    name: String,
    config: AnthropicConfig,
    core: Arc<HttpCore>,
}

impl std::fmt::Debug for AnthropicGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicGenerator")
            .field("url", &self.core.url())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl AnthropicGenerator {
    /// Builds the generator, reading the key from `config.api_key_env`.
    ///
    /// Fails with `MissingApiKey` (naming the variable) when it is unset,
    /// and with `Config` for invalid settings; no request is made.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let key = Secret::require_env(&config.api_key_env)?;
        Self::with_api_key(config, key)
    }

    /// Builds the generator with an explicit key, ignoring `api_key_env`.
    pub fn with_api_key(config: AnthropicConfig, api_key: Secret) -> Result<Self, LlmError> {
        let (url, loopback) = http::endpoint(&config.base_url, "messages")?;
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("model must not be empty".to_string()));
        }
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut key = HeaderValue::from_str(api_key.expose()).map_err(|_| {
            LlmError::Config(format!(
                "the API key in {} contains characters not allowed in a header",
                config.api_key_env
            ))
        })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), key);
        let version = HeaderValue::from_str(&config.version).map_err(|_| {
            LlmError::Config(format!(
                "version {:?} is not a valid header value",
                config.version
            ))
        })?;
        headers.insert(HeaderName::from_static("anthropic-version"), version);
        let core = config.transport.core(url, loopback, headers)?;
        Ok(AnthropicGenerator {
            name: format!("anthropic:{}", config.model),
            config,
            core: Arc::new(core),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    fn native(&self) -> bool {
        self.config.mode == AnthropicMode::NativeCitations
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Result<Bytes, LlmError> {
        if !request.messages.iter().any(|m| m.role == Role::User) {
            return Err(LlmError::Config(
                "the request has no user message; the Messages API needs one".to_string(),
            ));
        }
        let mut documents_sent = !self.native();
        let mut messages = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            if !documents_sent && message.role == Role::User {
                documents_sent = true;
                let mut content: Vec<Value> =
                    request.documents.iter().map(document_block).collect();
                content.push(json!({"type": "text", "text": message.content}));
                messages.push(json!({"role": role, "content": content}));
            } else {
                messages.push(json!({"role": role, "content": message.content}));
            }
        }
        let mut body = json!({
            "model": self.config.model,
            "max_tokens": request.max_tokens.unwrap_or(self.config.max_tokens),
            "temperature": request.temperature.unwrap_or(self.config.temperature),
            "messages": messages,
        });
        if !request.system.is_empty() {
            body["system"] = json!(request.system);
        }
        if stream {
            body["stream"] = json!(true);
        }
        Ok(Bytes::from(body.to_string()))
    }
}

fn document_block(document: &Document) -> Value {
    let mut block = json!({
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": document.text},
        "citations": {"enabled": true},
    });
    if !document.title.is_empty() {
        block["title"] = json!(document.title);
    }
    block
}

impl Generator for AnthropicGenerator {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        let body = self.body(request, false);
        let core = Arc::clone(&self.core);
        let mut assembler = Assembler::new(self.native(), request.documents.clone());
        let model = self.config.model.clone();
        Box::pin(async move {
            let (raw, retries) = core.post(body?).await?;
            let mut generation = parse_message(&raw, &mut assembler, &model)?;
            generation.raw = raw;
            generation.retries = retries;
            Ok(generation)
        })
    }

    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        let body = match self.body(request, true) {
            Ok(body) => body,
            Err(error) => return Box::pin(futures::stream::once(async move { Err(error) })),
        };
        let decoder = AnthropicStream {
            assembler: Assembler::new(self.native(), request.documents.clone()),
            model: self.config.model.clone(),
            finish_reason: None,
            text_blocks: Vec::new(),
        };
        drive_stream(Arc::clone(&self.core), body, decoder)
    }
}

/// A citation as Anthropic sends it.
#[derive(Debug, Clone, Deserialize)]
struct CitationWire {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    cited_text: String,
    #[serde(default)]
    document_index: Option<usize>,
    #[serde(default)]
    start_char_index: Option<usize>,
    #[serde(default)]
    end_char_index: Option<usize>,
}

/// Builds the answer text block by block, inserting markers, and holding
/// back each block's trailing whitespace until the block ends (so a marker
/// can still go before it when streaming).
struct Assembler {
    native: bool,
    documents: Vec<Document>,
    /// Committed text: exactly the concatenation of the `Text` events out.
    text: String,
    /// Trailing whitespace of the current block, not yet committed.
    held: String,
    block_citations: Vec<CitationWire>,
    citations: Vec<NativeCitation>,
    /// The last marker group: where it ends in `text`, and its passages
    /// with their marker offsets.
    last_group: Option<(usize, Vec<(usize, usize)>)>,
}

impl Assembler {
    fn new(native: bool, documents: Vec<Document>) -> Self {
        Assembler {
            native,
            documents,
            text: String::new(),
            held: String::new(),
            block_citations: Vec::new(),
            citations: Vec::new(),
            last_group: None,
        }
    }

    fn push_text(&mut self, delta: &str, out: &mut Vec<StreamEvent>) {
        let mut pending = std::mem::take(&mut self.held);
        pending.push_str(delta);
        let keep = pending.trim_end().len();
        self.held = pending.split_off(keep);
        if !pending.is_empty() {
            self.text.push_str(&pending);
            out.push(StreamEvent::Text(pending));
        }
    }

    fn push_citation(&mut self, citation: CitationWire) {
        if self.native {
            self.block_citations.push(citation);
        }
    }

    fn end_block(&mut self, out: &mut Vec<StreamEvent>) {
        let citations = std::mem::take(&mut self.block_citations);
        let mut cited = citations
            .iter()
            .filter(|c| c.document_index.is_some())
            .peekable();
        if cited.peek().is_some() {
            let offset = self.text.len();
            let mut group = match self.last_group.take() {
                // Adjacent: nothing but whitespace since the last markers.
                Some((end, group)) if self.text[end..].trim().is_empty() => group,
                _ => Vec::new(),
            };
            let mut marker = String::new();
            for citation in cited {
                let document_index = citation.document_index.unwrap_or_default();
                let passage = document_index.saturating_add(1);
                let answer_offset = match group.iter().find(|(p, _)| *p == passage) {
                    Some((_, at)) => *at,
                    None => {
                        let at = offset + marker.len();
                        marker.push_str(&format!("[{passage}]"));
                        group.push((passage, at));
                        at
                    }
                };
                let (passage_start, passage_end) = self.passage_range(document_index, citation);
                let native = NativeCitation {
                    passage,
                    cited_text: citation.cited_text.clone(),
                    passage_start,
                    passage_end,
                    answer_offset,
                };
                self.citations.push(native.clone());
                out.push(StreamEvent::Citation(native));
            }
            if !marker.is_empty() {
                self.text.push_str(&marker);
                out.push(StreamEvent::Text(marker));
            }
            self.last_group = Some((self.text.len(), group));
        }
        for citation in &citations {
            if citation.document_index.is_none() {
                tracing::warn!(kind = %citation.kind, "citation without document_index ignored");
            }
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.text.push_str(&held);
            out.push(StreamEvent::Text(held));
        }
    }

    fn passage_range(&self, document_index: usize, citation: &CitationWire) -> (usize, usize) {
        let Some(document) = self.documents.get(document_index) else {
            return (0, 0);
        };
        match (citation.start_char_index, citation.end_char_index) {
            (Some(start), Some(end))
                if citation.kind == "char_location" || citation.kind.is_empty() =>
            {
                char_range_to_bytes(&document.text, start, end, &citation.cited_text)
            }
            _ => (0, 0),
        }
    }
}

/// Converts a character range of `text` into a byte range: as Unicode
/// scalar values first; as UTF-16 code units if only those match `cited`.
/// Clamped to the text, with `start <= end`.
fn char_range_to_bytes(text: &str, start: usize, end: usize, cited: &str) -> (usize, usize) {
    let scalar = |index: usize| {
        text.char_indices()
            .nth(index)
            .map_or(text.len(), |(at, _)| at)
    };
    let by_scalar = (scalar(start), scalar(end).max(scalar(start)));
    if cited.is_empty() || text.get(by_scalar.0..by_scalar.1) == Some(cited) {
        return by_scalar;
    }
    let utf16 = |index: usize| {
        let mut units = 0;
        for (at, ch) in text.char_indices() {
            if units == index {
                return Some(at);
            }
            units += ch.len_utf16();
        }
        (units == index).then_some(text.len())
    };
    if let (Some(s), Some(e)) = (utf16(start), utf16(end))
        && text.get(s..e) == Some(cited)
    {
        return (s, e);
    }
    by_scalar
}

#[derive(Deserialize)]
struct MessageWire {
    #[serde(default)]
    model: Option<String>,
    content: Vec<BlockWire>,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct BlockWire {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    citations: Option<Vec<CitationWire>>,
}

/// Reads a non-streaming Messages body (`raw` and `retries` are left for
/// the caller).
fn parse_message(
    raw: &str,
    assembler: &mut Assembler,
    configured_model: &str,
) -> Result<Generation, LlmError> {
    let wire: MessageWire = serde_json::from_str(raw).map_err(|e| {
        LlmError::InvalidResponse(format!(
            "not a Messages API response ({e}); body starts with {:?}",
            snippet(raw, 200)
        ))
    })?;
    let mut sink = Vec::new();
    for block in wire.content.into_iter().filter(|b| b.kind == "text") {
        assembler.push_text(block.text.as_deref().unwrap_or_default(), &mut sink);
        for citation in block.citations.unwrap_or_default() {
            assembler.push_citation(citation);
        }
        assembler.end_block(&mut sink);
    }
    finish(
        assembler,
        wire.model.unwrap_or_default(),
        configured_model,
        wire.stop_reason,
    )
}

fn finish(
    assembler: &mut Assembler,
    model: String,
    configured_model: &str,
    finish_reason: Option<String>,
) -> Result<Generation, LlmError> {
    if assembler.text.trim().is_empty() {
        return Err(LlmError::EmptyContent);
    }
    Ok(Generation {
        text: std::mem::take(&mut assembler.text),
        native_citations: std::mem::take(&mut assembler.citations),
        model: if model.is_empty() {
            configured_model.to_string()
        } else {
            model
        },
        finish_reason,
        raw: String::new(),
        retries: 0,
        structured: false,
    })
}

#[derive(Deserialize)]
struct EventWire {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    content_block: Option<BlockWire>,
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// Decodes Anthropic's stream events until `message_stop`.
struct AnthropicStream {
    assembler: Assembler,
    model: String,
    finish_reason: Option<String>,
    /// Indices of the open text blocks.
    text_blocks: Vec<usize>,
}

impl StreamDecoder for AnthropicStream {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError> {
        let wire: EventWire = serde_json::from_str(&event.data).map_err(|e| {
            LlmError::InvalidResponse(format!(
                "stream event is not JSON ({e}); it starts with {:?}",
                snippet(&event.data, 200)
            ))
        })?;
        let kind = if wire.kind.is_empty() {
            event.event.unwrap_or_default()
        } else {
            wire.kind
        };
        let index = wire.index.unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                if let Some(model) = wire
                    .message
                    .as_ref()
                    .and_then(|m| m.get("model"))
                    .and_then(|m| m.as_str())
                    .filter(|m| !m.is_empty())
                {
                    self.model = model.to_string();
                }
            }
            "content_block_start" => {
                if let Some(block) = wire.content_block.filter(|b| b.kind == "text") {
                    self.text_blocks.push(index);
                    if let Some(text) = block.text.filter(|t| !t.is_empty()) {
                        self.assembler.push_text(&text, out);
                    }
                    for citation in block.citations.unwrap_or_default() {
                        self.assembler.push_citation(citation);
                    }
                }
            }
            "content_block_delta" if self.text_blocks.contains(&index) => {
                let delta = wire.delta.unwrap_or_default();
                match delta.get("type").and_then(|t| t.as_str()) {
                    Some("text_delta") => {
                        let text = delta
                            .get("text")
                            .and_then(|t| t.as_str())
                            .unwrap_or_default();
                        self.assembler.push_text(text, out);
                    }
                    Some("citations_delta") => {
                        let citation = delta.get("citation").cloned().unwrap_or_default();
                        let citation: CitationWire =
                            serde_json::from_value(citation).map_err(|e| {
                                LlmError::InvalidResponse(format!(
                                    "unreadable citations_delta: {e}"
                                ))
                            })?;
                        self.assembler.push_citation(citation);
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(position) = self.text_blocks.iter().position(|i| *i == index) {
                    self.text_blocks.remove(position);
                    self.assembler.end_block(out);
                }
            }
            "message_delta" => {
                if let Some(reason) = wire
                    .delta
                    .as_ref()
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(|r| r.as_str())
                {
                    self.finish_reason = Some(reason.to_string());
                }
            }
            "message_stop" => return Ok(true),
            "error" => return Err(stream_error(wire.error.unwrap_or_default())),
            // "ping" and event types added later.
            _ => {}
        }
        Ok(false)
    }

    fn complete_at_eof(&self) -> bool {
        false
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<Generation, LlmError> {
        if !self.text_blocks.is_empty() || !self.assembler.held.is_empty() {
            self.text_blocks.clear();
            self.assembler.end_block(out);
        }
        let model = std::mem::take(&mut self.model);
        finish(
            &mut self.assembler,
            model.clone(),
            &model,
            self.finish_reason.take(),
        )
    }
}

/// Maps an in-stream `error` event to the error its type stands for.
fn stream_error(error: Value) -> LlmError {
    let kind = error
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("error");
    let message = error
        .get("message")
        .and_then(|m| m.as_str())
        .unwrap_or("(no message)");
    let status = match kind {
        "rate_limit_error" => return LlmError::RateLimited { retry_after: None },
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "overloaded_error" => 529,
        _ => 500,
    };
    LlmError::Http {
        status,
        message: format!("{kind} in the stream: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_offsets_become_byte_offsets() {
        let text = "Café crème: 30 días.";
        // "30 días" is chars 12..19.
        assert_eq!(char_range_to_bytes(text, 12, 19, "30 días"), (14, 22));
        assert_eq!(&text[14..22], "30 días");
        // UTF-16 fallback: an emoji is 1 scalar value but 2 UTF-16 units.
        let text = "😀 ok";
        assert_eq!(char_range_to_bytes(text, 3, 5, "ok"), (5, 7));
        // Out of range: clamped.
        assert_eq!(char_range_to_bytes("abc", 2, 99, ""), (2, 3));
        assert_eq!(char_range_to_bytes("abc", 9, 1, ""), (3, 3));
    }

    #[test]
    fn adjacent_citations_of_one_passage_share_a_marker() {
        let mut assembler = Assembler::new(true, vec![Document::default(), Document::default()]);
        let mut out = Vec::new();
        let cite = |document_index| CitationWire {
            kind: "char_location".into(),
            cited_text: String::new(),
            document_index: Some(document_index),
            start_char_index: Some(0),
            end_char_index: Some(0),
        };
        assembler.push_text("A claim ", &mut out);
        assembler.push_citation(cite(0));
        assembler.push_citation(cite(0));
        assembler.push_citation(cite(1));
        assembler.end_block(&mut out);
        // An empty block citing passage 1 again right after: no new marker.
        assembler.push_citation(cite(0));
        assembler.end_block(&mut out);
        assert_eq!(assembler.text, "A claim[1][2] ");
        let offsets: Vec<(usize, usize)> = assembler
            .citations
            .iter()
            .map(|c| (c.passage, c.answer_offset))
            .collect();
        assert_eq!(offsets, vec![(1, 7), (1, 7), (2, 10), (1, 7)]);
        let streamed: String = out
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, assembler.text);
    }
}
