//! OpenAI-compatible Chat Completions: OpenAI itself, and local servers
//! (Ollama, llama.cpp's server, vLLM, LM Studio) that speak the same API.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::http::{self, HttpCore, StreamDecoder, drive_stream, snippet};
use crate::sse::SseEvent;
use crate::{
    BoxFuture, ChatRequest, EventStream, Generation, Generator, LlmError, Role, Secret,
    StreamEvent, TransportConfig,
};

/// Settings of [`OpenAiGenerator`], loadable from `groundcite.toml`.
/// Every field has a default, so any subset may be given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiConfig {
    /// Where the API lives, with or without a trailing `/v1`; requests go to
    /// `{base_url}/v1/chat/completions`. Default `"https://api.openai.com"`.
    /// Ollama: `"http://127.0.0.1:11434"`; llama.cpp: `"http://127.0.0.1:8080"`.
    pub base_url: String,
    /// The model name sent in every request. Default `"gpt-4o-mini"`.
    pub model: String,
    /// The environment variable holding the API key (sent as
    /// `Authorization: Bearer ...`). Default `"OPENAI_API_KEY"`.
    pub api_key_env: String,
    /// Whether a missing key is an error. Default `None`: required unless
    /// `base_url` is a loopback address (`localhost`, `127.0.0.0/8`,
    /// `::1`), since local servers need no key. A key that is set is always
    /// sent.
    pub api_key_required: Option<bool>,
    /// Sampling temperature, unless the request overrides it. Default `0.0`.
    pub temperature: f32,
    /// Answer length limit (`max_tokens`), unless the request overrides it.
    /// Default `512`.
    pub max_tokens: u32,
    /// How a structured answer ([`ChatRequest::structured`]) is asked for.
    /// Default `auto`: OpenAI's `json_schema` form, then, if the server
    /// rejects it, llama-cpp-python's `json_object` with a `schema`, then
    /// free text. A rejection is recognised from the server's error (a
    /// 400, 422 or 501 naming the response format, schema or grammar, or
    /// llama-cpp-python's 500 naming `response_format`) and remembered for
    /// the life of the process; the request is then sent in the next form.
    pub structured: StructuredFormat,
    /// Timeouts and retries (keys `timeout_secs`, `connect_timeout_secs`,
    /// `max_retries`, `backoff_ms`, `max_backoff_ms`,
    /// `max_retry_after_secs` in this same section).
    #[serde(flatten)]
    pub transport: TransportConfig,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: "https://api.openai.com".to_string(),
            model: "gpt-4o-mini".to_string(),
            api_key_env: "OPENAI_API_KEY".to_string(),
            api_key_required: None,
            temperature: 0.0,
            max_tokens: 512,
            structured: StructuredFormat::Auto,
            transport: TransportConfig::default(),
        }
    }
}

/// How the JSON schema of a structured answer is sent (`openai.structured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredFormat {
    /// `json_schema`, then `json_object`, then free text, each on the
    /// previous one's rejection (default).
    #[default]
    Auto,
    /// `"response_format": {"type": "json_schema", "json_schema": {"name":
    /// "answer", "strict": true, "schema": ...}}`: OpenAI, vLLM, Ollama,
    /// llama.cpp's own server. Rejected: free text.
    JsonSchema,
    /// `"response_format": {"type": "json_object", "schema": ...}`:
    /// llama-cpp-python's server (0.3.x), llama.cpp's own server.
    /// Rejected: free text.
    JsonObject,
    /// Never ask for a structured answer.
    Off,
}

/// The forms, in the order `auto` tries them. The state of a generator is
/// an index into it; `FREE_TEXT` is past its end.
const FORMS: [StructuredFormat; 2] = [StructuredFormat::JsonSchema, StructuredFormat::JsonObject];
const FREE_TEXT: u8 = FORMS.len() as u8;

impl StructuredFormat {
    /// Where a generator configured with this format starts.
    fn first_level(self) -> u8 {
        match self {
            StructuredFormat::Auto | StructuredFormat::JsonSchema => 0,
            StructuredFormat::JsonObject => 1,
            StructuredFormat::Off => FREE_TEXT,
        }
    }

    /// Where it goes when the form at `level` is rejected.
    fn next_level(self, level: u8) -> u8 {
        match self {
            StructuredFormat::Auto => level + 1,
            _ => FREE_TEXT,
        }
    }
}

/// Whether `error` is a server refusing the `response_format` (rather than
/// the request as a whole): a 400, 422 or 501 whose message names the
/// response format, a schema or a grammar, or a 500 whose message names
/// `response_format`. (llama-cpp-python 0.3.36 answers `json_schema` with
/// a 500 quoting its validation error on `response_format.type`; OpenAI
/// answers an unsupported format with a 400 `Invalid parameter:
/// 'response_format' ...`.) A 500 is retried first like any 5xx.
pub(crate) fn rejects_response_format(error: &LlmError) -> bool {
    let LlmError::Http { status, message } = error else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    match status {
        400 | 422 | 501 => [
            "response_format",
            "json_schema",
            "json_object",
            "schema",
            "grammar",
        ]
        .iter()
        .any(|word| message.contains(word)),
        500 => message.contains("response_format"),
        _ => false,
    }
}

/// A [`Generator`] for `POST {base_url}/v1/chat/completions`.
///
/// The request is `system` (as a `system` message, when non-empty) followed
/// by `messages`; `documents` are not sent (the prompt stage renders them).
/// With [`ChatRequest::structured`], the schema is sent as
/// `response_format` (see [`StructuredFormat`]) and the instruction is
/// added to the prompt; a server that rejects it is remembered and asked
/// in free text from then on.
/// Cheap to share: clone the `Arc` it lives in.
pub struct OpenAiGenerator {
    name: String,
    config: OpenAiConfig,
    core: Arc<HttpCore>,
    /// The structured form in use: an index into `FORMS`, or `FREE_TEXT`.
    /// Only ever moves towards free text, when a server rejects a form.
    level: Arc<AtomicU8>,
}

impl std::fmt::Debug for OpenAiGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiGenerator")
            .field("url", &self.core.url())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OpenAiGenerator {
    /// Builds the generator, reading the key from `config.api_key_env`.
    ///
    /// Fails with `MissingApiKey` (naming the variable) when a key is
    /// required and unset, and with `Config` for invalid settings; no
    /// request is made.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let key = if config.api_key_env.trim().is_empty() {
            None
        } else {
            Secret::from_env(&config.api_key_env)?
        };
        Self::build(config, key)
    }

    /// Builds the generator with an explicit key (`None`: no auth header),
    /// ignoring `api_key_env` and `api_key_required`.
    pub fn with_api_key(config: OpenAiConfig, api_key: Option<Secret>) -> Result<Self, LlmError> {
        let mut config = config;
        config.api_key_required = Some(false);
        Self::build(config, api_key)
    }

    fn build(config: OpenAiConfig, key: Option<Secret>) -> Result<Self, LlmError> {
        let (url, loopback) = http::endpoint(&config.base_url, "chat/completions")?;
        if key.is_none() && config.api_key_required.unwrap_or(!loopback) {
            return Err(LlmError::MissingApiKey {
                var: config.api_key_env.clone(),
            });
        }
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("model must not be empty".to_string()));
        }
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    LlmError::Config(format!(
                        "the API key in {} contains characters not allowed in a header",
                        config.api_key_env
                    ))
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let core = config.transport.core(url, loopback, headers)?;
        Ok(OpenAiGenerator {
            name: format!("openai:{}", config.model),
            level: Arc::new(AtomicU8::new(config.structured.first_level())),
            config,
            core: Arc::new(core),
        })
    }

    /// The structured form requests are sent with now (`None`: free
    /// text), after any rejection seen so far.
    pub fn structured_form(&self) -> Option<StructuredFormat> {
        FORMS
            .get(usize::from(self.level.load(Ordering::Relaxed)))
            .copied()
    }

    /// The settings in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The request body, with the structured form at `level` when the
    /// request asks for one (and `level` is not free text).
    fn body(&self, request: &ChatRequest, stream: bool, level: u8) -> Bytes {
        let form = request
            .structured
            .as_ref()
            .and_then(|structured| Some((structured, *FORMS.get(usize::from(level))?)));
        let mut system = request.system.clone();
        let mut last_user = request.messages.iter().rposition(|m| m.role == Role::User);
        if let Some((structured, _)) = form {
            if !system.is_empty() {
                system.push('\n');
                system.push_str(&structured.instruction);
                last_user = None;
            } else if last_user.is_none() {
                system = structured.instruction.clone();
            }
        }
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !system.is_empty() {
            messages.push(json!({"role": "system", "content": system}));
        }
        for (i, message) in request.messages.iter().enumerate() {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let content = match form {
                Some((structured, _)) if last_user == Some(i) => {
                    format!("{}\n\n{}", message.content, structured.instruction)
                }
                _ => message.content.clone(),
            };
            messages.push(json!({"role": role, "content": content}));
        }
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": request.temperature.unwrap_or(self.config.temperature),
            "max_tokens": request.max_tokens.unwrap_or(self.config.max_tokens),
            "stream": stream,
        });
        if let Some((structured, format)) = form {
            body["response_format"] = match format {
                StructuredFormat::JsonObject => {
                    json!({"type": "json_object", "schema": structured.schema})
                }
                _ => json!({
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "strict": true, "schema": structured.schema},
                }),
            };
        }
        Bytes::from(body.to_string())
    }

    /// The level to try after the form at `level` was rejected by `error`,
    /// if it was a rejection of the form; remembered for later requests.
    fn downgrade(&self, level: u8, error: &LlmError) -> Option<u8> {
        if level >= FREE_TEXT || !rejects_response_format(error) {
            return None;
        }
        let next = self.config.structured.next_level(level);
        self.level.fetch_max(next, Ordering::Relaxed);
        tracing::warn!(
            url = %self.core.url(),
            rejected = ?FORMS[usize::from(level)],
            now = ?FORMS.get(usize::from(next)),
            %error,
            "the server rejected the structured answer format; asking in the next form (remembered)"
        );
        Some(next)
    }
}

impl Generator for OpenAiGenerator {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        let this = self.handle();
        let request = request.clone();
        Box::pin(async move {
            let mut level = this.level.load(Ordering::Relaxed);
            loop {
                let body = this.body(&request, false, level);
                let structured = request.structured.is_some() && level < FREE_TEXT;
                let result = this.core.post(body).await.and_then(|(raw, retries)| {
                    let mut generation = parse_completion(&raw, &this.config.model)?;
                    generation.raw = raw;
                    generation.retries = retries;
                    generation.structured = structured;
                    Ok(generation)
                });
                match result {
                    Err(error) if structured => match this.downgrade(level, &error) {
                        Some(next) => level = next,
                        None => return Err(error),
                    },
                    other => return other,
                }
            }
        })
    }

    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        let this = self.handle();
        let request = request.clone();
        let opened = async move {
            let mut level = this.level.load(Ordering::Relaxed);
            loop {
                let structured = request.structured.is_some() && level < FREE_TEXT;
                let decoder = OpenAiStream {
                    model: this.config.model.clone(),
                    structured,
                    ..OpenAiStream::default()
                };
                let mut stream = drive_stream(
                    Arc::clone(&this.core),
                    this.body(&request, true, level),
                    decoder,
                );
                // A rejected form fails before any event: look at the first.
                let first = stream.next().await;
                if let Some(Err(error)) = &first
                    && structured
                    && let Some(next) = this.downgrade(level, error)
                {
                    level = next;
                    continue;
                }
                return futures::stream::iter(first).chain(stream).boxed();
            }
        };
        Box::pin(futures::stream::once(opened).flatten())
    }
}

impl OpenAiGenerator {
    /// A copy sharing the client and the remembered form, for a future
    /// that must own what it uses.
    fn handle(&self) -> OpenAiGenerator {
        OpenAiGenerator {
            name: self.name.clone(),
            config: self.config.clone(),
            core: Arc::clone(&self.core),
            level: Arc::clone(&self.level),
        }
    }
}

#[derive(Deserialize)]
struct CompletionWire {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<ChoiceWire>,
}

#[derive(Deserialize)]
struct ChoiceWire {
    #[serde(default)]
    message: Option<MessageWire>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct MessageWire {
    #[serde(default)]
    content: Option<String>,
}

/// Reads a non-streaming Chat Completions body (`raw` and `retries` are
/// left for the caller).
fn parse_completion(raw: &str, configured_model: &str) -> Result<Generation, LlmError> {
    let wire: CompletionWire = serde_json::from_str(raw).map_err(|e| {
        LlmError::InvalidResponse(format!(
            "not a Chat Completions response ({e}); body starts with {:?}",
            snippet(raw, 200)
        ))
    })?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or(LlmError::EmptyContent)?;
    let text = choice.message.and_then(|m| m.content).unwrap_or_default();
    if text.trim().is_empty() {
        return Err(LlmError::EmptyContent);
    }
    Ok(Generation {
        text,
        native_citations: Vec::new(),
        model: wire
            .model
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| configured_model.to_string()),
        finish_reason: choice.finish_reason,
        raw: String::new(),
        retries: 0,
        structured: false,
    })
}

#[derive(Deserialize)]
struct ChunkWire {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<ChunkChoiceWire>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChunkChoiceWire {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<MessageWire>,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// Decodes `data: {chunk}` events until `data: [DONE]`.
#[derive(Default)]
struct OpenAiStream {
    model: String,
    /// Asked under a schema (copied to the generation).
    structured: bool,
    text: String,
    finish_reason: Option<String>,
    done: bool,
}

impl StreamDecoder for OpenAiStream {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: ChunkWire = serde_json::from_str(data).map_err(|e| {
            LlmError::InvalidResponse(format!(
                "stream chunk is not a Chat Completions chunk ({e}); it starts with {:?}",
                snippet(data, 200)
            ))
        })?;
        if let Some(error) = chunk.error {
            let status = error
                .get("code")
                .and_then(|c| c.as_u64())
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (400..=599).contains(c))
                .unwrap_or(500);
            let message = http::error_message(&json!({ "error": error }).to_string());
            return Err(LlmError::Http { status, message });
        }
        if let Some(model) = chunk.model.filter(|m| !m.is_empty()) {
            self.model = model;
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(content) = choice.delta.and_then(|d| d.content)
                && !content.is_empty()
            {
                self.text.push_str(&content);
                out.push(StreamEvent::Text(content));
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(false)
    }

    fn complete_at_eof(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<Generation, LlmError> {
        if self.text.trim().is_empty() {
            return Err(LlmError::EmptyContent);
        }
        Ok(Generation {
            text: std::mem::take(&mut self.text),
            native_citations: Vec::new(),
            model: self.model.clone(),
            finish_reason: self.finish_reason.clone(),
            raw: String::new(),
            retries: 0,
            structured: self.structured,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_parsing() {
        let raw = r#"{"id":"x","object":"chat.completion","model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi [1]."},"finish_reason":"stop"}]}"#;
        let generation = parse_completion(raw, "cfg").unwrap();
        assert_eq!(generation.text, "Hi [1].");
        assert_eq!(generation.model, "m1");
        assert_eq!(generation.finish_reason.as_deref(), Some("stop"));
        let null_content = r#"{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"length"}]}"#;
        assert_eq!(
            parse_completion(null_content, "cfg"),
            Err(LlmError::EmptyContent)
        );
        assert!(matches!(
            parse_completion("{\"choices\": [", "cfg"),
            Err(LlmError::InvalidResponse(_))
        ));
    }

    #[test]
    fn config_defaults_and_partial_toml_like_input() {
        let config: OpenAiConfig = serde_json::from_str(
            r#"{"base_url": "http://127.0.0.1:11434/v1/", "model": "llama3.2", "timeout_secs": 5}"#,
        )
        .unwrap();
        assert_eq!(config.api_key_env, "OPENAI_API_KEY");
        assert_eq!(config.transport.max_retries, 2);
        assert_eq!(config.transport.timeout_secs, 5.0);
        // A loopback server needs no key.
        let generator = OpenAiGenerator::new(OpenAiConfig {
            api_key_env: "GROUNDCITE_TEST_NEVER_SET_7Q".to_string(),
            ..config
        })
        .unwrap();
        assert_eq!(
            generator.core.url(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(generator.name(), "openai:llama3.2");
    }
}
