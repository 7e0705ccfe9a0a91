//! The transport shared by the HTTP backends: endpoint URLs, the client,
//! the retry loop, and the driver that turns an SSE body into
//! [`StreamEvent`]s.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;

use crate::retry::{RetryPolicy, parse_retry_after};
use crate::sse::{SseEvent, SseParser};
use crate::{EventStream, Generation, LlmError, StreamEvent};

/// Builds `{base}/v1/{path}` from a base URL given with or without a
/// trailing `/v1` (and trailing slashes). Returns the URL and whether its
/// host is a loopback address.
pub(crate) fn endpoint(base_url: &str, path: &str) -> Result<(String, bool), LlmError> {
    let mut base = base_url.trim().trim_end_matches('/');
    if let Some(stripped) = base.strip_suffix("/v1") {
        base = stripped;
    }
    let url = format!("{base}/v1/{path}");
    let parsed = reqwest::Url::parse(&url)
        .map_err(|e| LlmError::Config(format!("base_url {base_url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(LlmError::Config(format!(
            "base_url {base_url:?} must start with http:// or https://"
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(LlmError::Config(
            "base_url must not contain credentials; put the key in the environment variable named by api_key_env".to_string(),
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| LlmError::Config(format!("base_url {base_url:?} has no host")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    Ok((url, loopback))
}

/// One endpoint with its client, headers, timeouts and retry policy.
pub(crate) struct HttpCore {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    timeout: Duration,
    policy: RetryPolicy,
}

/// A failed attempt: the error, and whether it may be retried.
struct Failure {
    error: LlmError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn fatal(error: LlmError) -> Self {
        Failure {
            error,
            retryable: false,
            retry_after: None,
        }
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

impl HttpCore {
    /// `headers` must already hold the auth header (marked sensitive).
    pub fn new(
        url: String,
        loopback: bool,
        headers: HeaderMap,
        timeout: Duration,
        connect_timeout: Duration,
        policy: RetryPolicy,
    ) -> Result<Self, LlmError> {
        // TLS uses ring unless the program installed another provider
        // (then installing fails, and that one is used).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .user_agent(concat!("groundcite/", env!("CARGO_PKG_VERSION")));
        if loopback {
            // A local model server is never reached through a proxy.
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpCore {
            client,
            url,
            headers,
            timeout,
            policy,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Posts `body` and reads the whole response body, retrying per the
    /// policy. Returns the body and the number of retries.
    pub async fn post(&self, body: Bytes) -> Result<(String, u32), LlmError> {
        self.with_retries(|| async {
            let response = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .body(body.clone())
                .timeout(self.timeout)
                .send()
                .await
                .map_err(|e| self.transport_failure(e))?;
            if !response.status().is_success() {
                return Err(self.status_failure(response).await);
            }
            let bytes = response
                .bytes()
                .await
                .map_err(|e| self.transport_failure(e))?;
            String::from_utf8(bytes.to_vec()).map_err(|_| {
                Failure::fatal(LlmError::InvalidResponse(
                    "the response body is not valid UTF-8".to_string(),
                ))
            })
        })
        .await
    }

    /// Posts `body` and waits for the first non-empty chunk of a successful
    /// response, retrying per the policy until then (never after).
    async fn open_stream(&self, body: Bytes) -> Result<((Bytes, ByteStream), u32), LlmError> {
        self.with_retries(|| async {
            let request = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .body(body.clone())
                .send();
            // One deadline for the response head and the first chunk.
            let deadline = tokio::time::Instant::now() + self.timeout;
            let response = match tokio::time::timeout_at(deadline, request).await {
                Ok(result) => result.map_err(|e| self.transport_failure(e))?,
                Err(_) => return Err(Failure::fatal(self.timeout_error())),
            };
            if !response.status().is_success() {
                return Err(self.status_failure(response).await);
            }
            let mut stream: ByteStream = Box::pin(response.bytes_stream());
            loop {
                match tokio::time::timeout_at(deadline, stream.next()).await {
                    Err(_) => return Err(Failure::fatal(self.timeout_error())),
                    Ok(Some(Ok(chunk))) if chunk.is_empty() => continue,
                    Ok(Some(Ok(chunk))) => return Ok((chunk, stream)),
                    Ok(Some(Err(e))) => return Err(self.transport_failure(e)),
                    Ok(None) => {
                        return Err(Failure {
                            error: self.connect_error(
                                "the server closed the stream before sending anything".to_string(),
                            ),
                            retryable: true,
                            retry_after: None,
                        });
                    }
                }
            }
        })
        .await
    }

    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<(T, u32), LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut retries = 0;
        loop {
            let failure = match attempt().await {
                Ok(value) => return Ok((value, retries)),
                Err(failure) => failure,
            };
            if !failure.retryable || retries >= self.policy.max_retries {
                return Err(failure.error);
            }
            let wait = match failure.retry_after {
                Some(wanted) if wanted > self.policy.max_retry_after => {
                    tracing::warn!(
                        url = %self.url,
                        retry_after_ms = wanted.as_millis() as u64,
                        "server asked to wait longer than max_retry_after; giving up"
                    );
                    return Err(failure.error);
                }
                Some(wanted) => wanted,
                None => self.policy.backoff_for(retries),
            };
            retries += 1;
            tracing::warn!(
                url = %self.url,
                error = %failure.error,
                retry = retries,
                wait_ms = wait.as_millis() as u64,
                "model request failed; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    fn timeout_error(&self) -> LlmError {
        LlmError::Timeout {
            after: self.timeout,
        }
    }

    fn connect_error(&self, message: String) -> LlmError {
        LlmError::Connect {
            url: self.url.clone(),
            message,
        }
    }

    fn transport_failure(&self, error: reqwest::Error) -> Failure {
        // A connect timeout is a connection failure (retried), not the
        // request timeout.
        if error.is_timeout() && !error.is_connect() {
            return Failure::fatal(self.timeout_error());
        }
        Failure {
            error: self.connect_error(error_chain(&error.without_url())),
            retryable: true,
            retry_after: None,
        }
    }

    async fn status_failure(&self, response: reqwest::Response) -> Failure {
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = match tokio::time::timeout(self.timeout, response.bytes()).await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        let retryable = status == 408 || status == 429 || (500..=599).contains(&status);
        let error = if status == 429 {
            LlmError::RateLimited { retry_after }
        } else {
            LlmError::Http {
                status,
                message: error_message(&body),
            }
        };
        Failure {
            error,
            retryable,
            retry_after,
        }
    }
}

/// `retry-after-ms` (sent by OpenAI) or `Retry-After`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, SystemTime::now())
}

/// The message of an error body: `error.message` (OpenAI, Anthropic),
/// `error` as a string (Ollama), `message`, or the start of the body.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
        let message = value
            .pointer("/error/message")
            .or_else(|| value.get("error").filter(|e| e.is_string()))
            .or_else(|| value.get("message"))
            .and_then(|m| m.as_str());
        if let Some(message) = message {
            return snippet(message, 500);
        }
    }
    let body = body.trim();
    if body.is_empty() {
        "(empty body)".to_string()
    } else {
        snippet(body, 300)
    }
}

/// At most `max` bytes of `text` (cut on a character boundary).
pub(crate) fn snippet(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// Turns the SSE events of one backend into stream events.
pub(crate) trait StreamDecoder: Send + 'static {
    /// Handles one event, pushing what it produces into `out`. Returns
    /// `Ok(true)` when the event marks the end of the answer.
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, LlmError>;

    /// Whether the body may end here without an explicit end marker.
    fn complete_at_eof(&self) -> bool;

    /// Builds the answer (`raw` and `retries` are filled in by the driver),
    /// pushing any text still held back into `out` first.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<Generation, LlmError>;
}

struct Driver<D> {
    core: Arc<HttpCore>,
    body: Option<Bytes>,
    bytes: Option<ByteStream>,
    parser: SseParser,
    decoder: D,
    pending: VecDeque<Result<StreamEvent, LlmError>>,
    raw: String,
    partial: String,
    /// The first bytes of the body, to quote when it is not an event stream.
    head: Vec<u8>,
    events_seen: usize,
    retries: u32,
    ended: bool,
}

/// Streams an answer: opens the stream (with retries), then decodes it.
pub(crate) fn drive_stream<D: StreamDecoder>(
    core: Arc<HttpCore>,
    body: Bytes,
    decoder: D,
) -> EventStream {
    let driver = Driver {
        core,
        body: Some(body),
        bytes: None,
        parser: SseParser::default(),
        decoder,
        pending: VecDeque::new(),
        raw: String::new(),
        partial: String::new(),
        head: Vec::new(),
        events_seen: 0,
        retries: 0,
        ended: false,
    };
    Box::pin(futures::stream::unfold(driver, |mut driver| async move {
        loop {
            if let Some(item) = driver.pending.pop_front() {
                return Some((item, driver));
            }
            if driver.ended {
                return None;
            }
            driver.step().await;
        }
    }))
}

impl<D: StreamDecoder> Driver<D> {
    async fn step(&mut self) {
        let Some(bytes) = self.bytes.as_mut() else {
            let body = self.body.take().unwrap_or_default();
            match self.core.open_stream(body).await {
                Ok(((first, stream), retries)) => {
                    self.retries = retries;
                    self.bytes = Some(stream);
                    self.on_chunk(&first);
                }
                Err(error) => self.fail(error),
            }
            return;
        };
        match tokio::time::timeout(self.core.timeout, bytes.next()).await {
            Ok(Some(Ok(chunk))) => self.on_chunk(&chunk),
            Ok(Some(Err(error))) => self.interrupted(&error_chain(&error.without_url())),
            Ok(None) => {
                if let Some(event) = self.parser.finish()
                    && self.on_event(event)
                {
                    return;
                }
                if self.events_seen == 0 {
                    let head = String::from_utf8_lossy(&self.head).into_owned();
                    self.fail(LlmError::InvalidResponse(format!(
                        "expected an event stream (text/event-stream) but the body has no events; it starts with {:?}",
                        snippet(&head, 200)
                    )));
                } else if self.decoder.complete_at_eof() {
                    self.complete();
                } else {
                    self.interrupted("the server closed the stream before the end marker");
                }
            }
            Err(_) => {
                let reason = format!("no data for {:?}", self.core.timeout);
                self.interrupted(&reason);
            }
        }
    }

    fn on_chunk(&mut self, chunk: &[u8]) {
        if self.head.len() < 256 {
            let take = chunk.len().min(256 - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        match self.parser.push(chunk) {
            Ok(events) => {
                for event in events {
                    if self.on_event(event) {
                        return;
                    }
                }
            }
            Err(error) => self.fail(error),
        }
    }

    /// Returns true when the stream has ended (answer complete or failed).
    fn on_event(&mut self, event: SseEvent) -> bool {
        self.events_seen += 1;
        if !self.raw.is_empty() {
            self.raw.push('\n');
        }
        self.raw.push_str(&event.data);
        let mut out = Vec::new();
        let result = self.decoder.on_event(event, &mut out);
        self.queue(out);
        match result {
            Ok(false) => false,
            Ok(true) => {
                self.complete();
                true
            }
            Err(error) => {
                self.fail(error);
                true
            }
        }
    }

    fn queue(&mut self, out: Vec<StreamEvent>) {
        for event in out {
            if let StreamEvent::Text(text) = &event {
                self.partial.push_str(text);
            }
            self.pending.push_back(Ok(event));
        }
    }

    fn complete(&mut self) {
        let mut out = Vec::new();
        let result = self.decoder.finish(&mut out);
        self.queue(out);
        match result {
            Ok(mut generation) => {
                generation.raw = std::mem::take(&mut self.raw);
                generation.retries = self.retries;
                self.pending.push_back(Ok(StreamEvent::Done(generation)));
                self.end();
            }
            Err(error) => self.fail(error),
        }
    }

    fn interrupted(&mut self, reason: &str) {
        tracing::warn!(url = %self.core.url(), reason, received = self.partial.len(), "answer stream interrupted");
        self.fail(LlmError::StreamInterrupted {
            partial: self.partial.clone(),
        });
    }

    fn fail(&mut self, error: LlmError) {
        self.pending.push_back(Err(error));
        self.end();
    }

    fn end(&mut self) {
        self.ended = true;
        // Dropping the body closes the connection.
        self.bytes = None;
    }
}
