//! The handlers.

use std::convert::Infallible;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, FromRequestParts, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::stream::BoxStream;
use groundcite_audit::JsonText;
use groundcite_core::Passage;
use groundcite_engine::AskResult;
use groundcite_engine::audit::{answer_record, check_record, failure_record};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::AppState;
use crate::answerer::{AnswerError, AnswerErrorKind, AnswerEvent, AskParams};
use crate::audit;
use crate::error::{ApiError, Envelope, ErrorCode};

/// Largest `top_k` and `k`.
pub const MAX_K: usize = groundcite_engine::MAX_TOP_K;

/// The request id set by the request-id layer (`x-request-id`).
pub struct ReqId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ReqId {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ReqId(
            parts
                .headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_string(),
        ))
    }
}

/// The client's own `x-request-id`, if it sent one (see
/// `util::assign_request_id`): recorded, never used as an id.
pub struct ClientReqId(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for ClientReqId {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientReqId(
            parts
                .extensions
                .get::<crate::util::ClientRequestId>()
                .map(|c| c.0.clone()),
        ))
    }
}

/// A JSON body, with every failure mapped to the error table: 415 unless
/// the content type is JSON, 413 over the body limit, 400
/// `malformed_json` / `invalid_body`.
///
/// A missing `Content-Type` is refused too: a page on another origin can
/// send a body without one (or as `text/plain`) with no CORS preflight,
/// and must not get answers asked, checks run or audit records written in
/// the name of whoever's browser it runs in. `application/json` (any
/// parameters) and `application/*+json` are never sent that way.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let Some(ct) = req.headers().get(header::CONTENT_TYPE) else {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "send the body with Content-Type: application/json (none was given)",
            ));
        };
        let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
        let essence = ct.split(';').next().unwrap_or("").trim();
        let json = essence == "application/json"
            || essence
                .strip_prefix("application/")
                .is_some_and(|sub| sub.ends_with("+json"));
        if !json {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                format!("expected Content-Type: application/json, got {essence:?}"),
            ));
        }
        let bytes = read_body(req, state.config().body_limit).await?;
        serde_json::from_slice(&bytes).map(ApiJson).map_err(|e| {
            let code = match e.classify() {
                serde_json::error::Category::Data => ErrorCode::InvalidBody,
                _ => ErrorCode::MalformedJson,
            };
            ApiError::new(code, e.to_string())
        })
    }
}

/// Most bytes read and thrown away after a body went over the limit, so
/// that a client that sends its whole body before reading (Python's
/// http.client, browsers) can read the 413 instead of a reset connection.
const DRAIN_MAX_BYTES: usize = 16 * 1024 * 1024;
/// Longest time spent draining.
const DRAIN_MAX: std::time::Duration = std::time::Duration::from_secs(5);

/// The body, at most `limit` bytes. Over the limit (declared by
/// `Content-Length` or found while reading), the rest is drained (at most
/// [`DRAIN_MAX_BYTES`], [`DRAIN_MAX`]) and the 413 closes the connection.
/// A client that declared a body over the limit and waits for
/// `100 Continue` (`Expect: 100-continue`) gets the 413 at once: the body
/// is never read, so the server never invites it to send it.
async fn read_body(req: Request, limit: usize) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut over = declared.is_some_and(|n| n > limit as u64);
    let expects_continue = req
        .headers()
        .get(header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"));
    if over && expects_continue {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("the request body is larger than {limit} bytes"),
        ));
    }
    let mut stream = req.into_body().into_data_stream();
    let mut body = Vec::new();
    let mut drained = 0usize;
    let deadline = tokio::time::Instant::now() + DRAIN_MAX;
    loop {
        let next = if over {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(next) => next,
                Err(_) => break,
            }
        } else {
            stream.next().await
        };
        let Some(chunk) = next else { break };
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(_) if over => break,
            Err(e) => return Err(ApiError::new(ErrorCode::InvalidBody, e.to_string())),
        };
        if !over && body.len() + chunk.len() > limit {
            over = true;
            drained = body.len();
            body = Vec::new();
        }
        if over {
            drained += chunk.len();
            if drained > DRAIN_MAX_BYTES {
                break;
            }
        } else {
            body.extend_from_slice(&chunk);
        }
    }
    if over {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("the request body is larger than {limit} bytes"),
        ));
    }
    Ok(Bytes::from(body))
}

/// A JSON response from bytes already serialized.
pub fn json_bytes(status: StatusCode, body: Bytes) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn json_value(value: &serde_json::Value) -> Response {
    json_bytes(StatusCode::OK, Bytes::from(value.to_string()))
}

/// A typed response body, serialized once.
fn to_json<T: serde::Serialize>(request_id: &str, value: &T) -> Result<JsonText, ApiError> {
    JsonText::to_json(value).map_err(|e| ApiError::internal(request_id, e))
}

// ---------------------------------------------------------------- /v1/ask

/// The request bodies refuse a field they do not know (400 `invalid_body`
/// naming it): a misspelt `topk` is an error, never silently ignored.
/// Passages inside them keep accepting extra fields (a retriever's
/// metadata).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AskRequest {
    /// The question to answer; not empty or white space.
    #[schema(min_length = 1)]
    pub question: String,
    /// Passages to retrieve (default: the configured `top_k`).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 50)]
    pub top_k: Option<usize>,
    /// Answer as server-sent events.
    #[serde(default)]
    pub stream: bool,
}

fn check_k(name: &str, k: usize) -> Result<(), ApiError> {
    if (1..=MAX_K).contains(&k) {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::InvalidParameter,
            format!("{name} must be between 1 and {MAX_K}, got {k}"),
        ))
    }
}

fn ready_answerer(state: &AppState) -> Result<std::sync::Arc<dyn crate::Answerer>, ApiError> {
    let not_ready = |why: &str| ApiError::new(ErrorCode::NotReady, why.to_string());
    let answerer = state.answerer().ok_or_else(|| {
        not_ready("this server has no index or generator: only /v1/check and /v1/prompt are served")
    })?;
    let readiness = answerer.readiness();
    if !readiness.index {
        return Err(not_ready("the index is not open"));
    }
    if readiness.generator.is_none() {
        return Err(not_ready("no generator is configured"));
    }
    Ok(answerer.clone())
}

/// Records an answer (metrics, audit) and returns its JSON. With a commit
/// wait, returns once the record has committed, or refuses the answer (503
/// `audit_unavailable`) when it has not within the wait: no answer is
/// served without its record.
async fn finish_answer(
    state: &AppState,
    request_id: &str,
    client_request_id: Option<&str>,
    answer: &AskResult,
) -> Result<JsonText, ApiError> {
    let mut safe;
    let answer = if links_are_safe(answer) {
        answer
    } else {
        safe = answer.clone();
        safe.sanitize_links();
        &safe
    };
    let json = to_json(request_id, answer)?;
    state.metrics().record_answer(answer);
    if state.audit().is_enabled() {
        let mut record = answer_record(request_id, answer, json.clone());
        record.client_request_id = client_request_id.map(str::to_string);
        state
            .audit()
            .record_and_wait(record)
            .await
            .map_err(|why| audit::unavailable(why, request_id))?;
    }
    Ok(json)
}

/// Are all the answer's urls safe links already (the engine makes them
/// so; another answerer might not)?
fn links_are_safe(answer: &AskResult) -> bool {
    use groundcite_core::link::is_safe_link;
    answer.sources.iter().all(|s| is_safe_link(&s.url))
        && answer.passages.iter().all(|p| is_safe_link(&p.source_url))
        && answer.refusal.as_ref().is_none_or(|r| {
            r.closest_passages
                .iter()
                .all(|p| is_safe_link(&p.source_url))
        })
}

/// Answer a question from the index, with checked citations.
///
/// With `stream: true`, the response is `text/event-stream`: one `sentence`
/// event per sentence whose markers validated (data: `StreamedSentence`;
/// never a sentence with an id never sent, nor, under the `refuse` or `drop`
/// unsupported policy, a contradicted or unsupported one), then one `final`
/// event (data: `AskResult`) or one `error` event (data: `Error`). When the
/// attempt the sentences came from is rejected (regenerated, refused, or
/// sentences dropped), a `retract` event (data: `Retraction`) comes before
/// `final` or `error`: every sentence shown so far is withdrawn and the
/// final answer replaces them.
#[utoipa::path(
    post, path = "/v1/ask", operation_id = "ask",
    security(("bearer" = []), ()),
    request_body = AskRequest,
    responses(
        (status = 200, description = "The answer object, or (stream) server-sent events: `event: sentence|retract|final|error`, `data:` JSON (StreamedSentence, Retraction, AskResult or Error).",
            content((AskResult = "application/json"), (String = "text/event-stream"))),
        (status = 400, description = "`malformed_json`, `invalid_body`, `empty_question`, `invalid_parameter`.", body = Envelope),
        (status = 401, description = "`missing_api_key`, `invalid_api_key`.", body = Envelope),
        (status = 413, description = "`payload_too_large`.", body = Envelope),
        (status = 415, description = "`unsupported_media_type`.", body = Envelope),
        (status = 500, description = "`internal`; the detail is logged with the request id.", body = Envelope),
        (status = 502, description = "The language model call failed (`upstream_error`).", body = Envelope),
        (status = 503, description = "No index or generator (`not_ready`), or the answer's audit record did not commit within the commit wait (`audit_unavailable`, with `Retry-After`): the answer is not served.", body = Envelope),
        (status = 504, description = "`timeout`.", body = Envelope),
    )
)]
pub async fn ask(
    State(state): State<AppState>,
    ReqId(request_id): ReqId,
    ClientReqId(client_request_id): ClientReqId,
    ApiJson(req): ApiJson<AskRequest>,
) -> Result<Response, ApiError> {
    let question = req.question.trim();
    if question.is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyQuestion,
            "the question is empty",
        ));
    }
    if let Some(k) = req.top_k {
        check_k("top_k", k)?;
    }
    let answerer = ready_answerer(&state)?;
    let params = AskParams { top_k: req.top_k };
    if req.stream {
        let events = answerer.ask_stream(question, params);
        let asked = Asked {
            question: question.to_string(),
            client_request_id,
        };
        return Ok(sse(state, request_id, asked, events));
    }
    let answer = tokio::time::timeout(state.config().timeout, answerer.ask(question, params))
        .await
        .unwrap_or_else(|_| {
            Err(AnswerError::new(
                AnswerErrorKind::Timeout,
                "timeout",
                format!("no answer within {:?}", state.config().timeout),
            ))
        });
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            // A failed model call is audited too: every request leaves a record.
            if state.audit().is_enabled()
                && matches!(e.kind, AnswerErrorKind::Upstream | AnswerErrorKind::Timeout)
            {
                let mut record = failure_record(&request_id, question, e.source_code, &e.message);
                record.client_request_id = client_request_id;
                // The client gets the model's error either way.
                let _ = state.audit().record_and_wait(record).await;
            }
            return Err(e.into_api(&request_id));
        }
    };
    let json = finish_answer(&state, &request_id, client_request_id.as_deref(), &answer).await?;
    Ok(json_bytes(StatusCode::OK, json.bytes()))
}

/// What a streamed answer's audit record needs of its request.
struct Asked {
    question: String,
    /// The client's own `x-request-id`, kept beside ours.
    client_request_id: Option<String>,
}

struct StreamState {
    inner: BoxStream<'static, AnswerEvent>,
    state: AppState,
    request_id: String,
    asked: Asked,
    deadline: tokio::time::Instant,
    done: bool,
}

/// Server-sent events: `sentence`* then `final` or `error`. The whole
/// stream is bounded by the request timeout.
fn sse(
    state: AppState,
    request_id: String,
    asked: Asked,
    inner: BoxStream<'static, AnswerEvent>,
) -> Response {
    let deadline = tokio::time::Instant::now() + state.config().timeout;
    let st = StreamState {
        inner,
        state,
        request_id,
        asked,
        deadline,
        done: false,
    };
    let events = futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        let error_event = |st: &StreamState, err: ApiError| {
            st.state.metrics().http_error(err.code);
            Event::default()
                .event("error")
                .data(err.to_value().to_string())
        };
        let event = match tokio::time::timeout_at(st.deadline, st.inner.next()).await {
            Ok(Some(AnswerEvent::Sentence(sentence))) => match to_json(&st.request_id, &sentence) {
                Ok(json) => Event::default().event("sentence").data(json.as_str()),
                Err(err) => {
                    st.done = true;
                    error_event(&st, err)
                }
            },
            Ok(Some(AnswerEvent::Retract(retract))) => match to_json(&st.request_id, &retract) {
                Ok(json) => Event::default().event("retract").data(json.as_str()),
                Err(err) => {
                    st.done = true;
                    error_event(&st, err)
                }
            },
            Ok(Some(AnswerEvent::Final(answer))) => {
                st.done = true;
                let client = st.asked.client_request_id.as_deref();
                match finish_answer(&st.state, &st.request_id, client, &answer).await {
                    Ok(json) => Event::default().event("final").data(json.as_str()),
                    Err(err) => error_event(&st, err),
                }
            }
            Ok(Some(AnswerEvent::Error(e))) => {
                st.done = true;
                if st.state.audit().is_enabled()
                    && matches!(e.kind, AnswerErrorKind::Upstream | AnswerErrorKind::Timeout)
                {
                    let mut record = failure_record(
                        &st.request_id,
                        &st.asked.question,
                        e.source_code,
                        &e.message,
                    );
                    record.client_request_id = st.asked.client_request_id.clone();
                    let _ = st.state.audit().record_and_wait(record).await;
                }
                let err = e.into_api(&st.request_id);
                error_event(&st, err)
            }
            Ok(None) => {
                st.done = true;
                let err =
                    ApiError::internal(&st.request_id, "answer stream ended without a final event");
                error_event(&st, err)
            }
            Err(_) => {
                st.done = true;
                let err = AnswerError::new(AnswerErrorKind::Timeout, "timeout", "stream deadline")
                    .into_api(&st.request_id);
                error_event(&st, err)
            }
        };
        Some((Ok::<_, Infallible>(event), st))
    });
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

// ---------------------------------------------------------------- /v1/check

/// The body of `POST /v1/check`: an answer and the passages it was given.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The question the answer was given to, if any: when present (and not
    /// blank), the answer is also judged on whether it answers it.
    #[serde(default)]
    pub question: Option<String>,
    /// In the order they were numbered: `[k]` is `passages[k-1]`. A
    /// passage may be a string (its text) or leave out `id` (`p1`, `p2`, ...).
    #[serde(deserialize_with = "groundcite_core::passage::deserialize_list")]
    pub passages: Vec<Passage>,
    /// The answer to check, with its `[k]` citation markers; not empty or white space.
    #[schema(min_length = 1)]
    pub answer: String,
}

/// Check an answer against the passages it was given: markers, sentences,
/// support, sources.
#[utoipa::path(
    post, path = "/v1/check", operation_id = "check",
    security(("bearer" = []), ()),
    request_body = CheckRequest,
    responses(
        (status = 200, description = "The check report.", body = groundcite_core::CheckOutput),
        (status = 400, description = "`malformed_json`, `invalid_body`, `empty_answer`.", body = Envelope),
        (status = 401, description = "`missing_api_key`, `invalid_api_key`.", body = Envelope),
        (status = 413, description = "`payload_too_large`.", body = Envelope),
        (status = 415, description = "`unsupported_media_type`.", body = Envelope),
        (status = 422, description = "Over a check limit (`limit_exceeded`); the message names which.", body = Envelope),
        (status = 500, description = "`internal`.", body = Envelope),
        (status = 503, description = "The report's audit record did not commit within the commit wait (`audit_unavailable`, with `Retry-After`): the report is not served.", body = Envelope),
        (status = 504, description = "`timeout`.", body = Envelope),
    )
)]
pub async fn check(
    State(state): State<AppState>,
    ReqId(request_id): ReqId,
    ClientReqId(client_request_id): ClientReqId,
    ApiJson(req): ApiJson<CheckRequest>,
) -> Result<Response, ApiError> {
    if req.answer.trim().is_empty() {
        return Err(ApiError::new(ErrorCode::EmptyAnswer, "the answer is empty"));
    }
    let started = Instant::now();
    // Every check runs on the blocking pool, whatever its size: a check
    // costs milliseconds to a second of CPU, and on the async workers it
    // would hold up every other connection (`/healthz` included). It stops
    // between sentences once nobody waits for it: its deadline passed, or
    // its client left (the handler's future is dropped).
    let stop = StopOnDrop::default();
    let flag = stop.flag();
    let st = state.clone();
    let work = tokio::task::spawn_blocking(move || {
        st.metrics().blocking_work("/v1/check");
        if let Err(e) = st.checker().admit(&req.passages, &req.answer) {
            return (req, Err(e));
        }
        let question = req.question.as_deref().filter(|q| !q.trim().is_empty());
        let report = st
            .checker()
            .check_until(question, &req.passages, &req.answer, &|| flag.is_set());
        if report.is_none() {
            st.metrics().check_stopped();
        }
        (req, Ok(report))
    });
    let timeout = state.config().timeout;
    let (req, report) = match tokio::time::timeout(timeout, work).await {
        Ok(done) => done.map_err(|e| ApiError::internal(&request_id, e))?,
        Err(_) => {
            stop.set();
            return Err(ApiError::new(
                ErrorCode::Timeout,
                format!("the check took longer than {timeout:?} and was stopped"),
            ));
        }
    };
    let mut report = report
        .map_err(|e| ApiError::new(ErrorCode::LimitExceeded, format!("too large to check: {e}")))?
        .ok_or_else(|| ApiError::internal(&request_id, "the check stopped before its end"))?;
    report.findings.sanitize_links();
    let json = to_json(&request_id, &report)?;
    let elapsed = started.elapsed().as_secs_f64();
    state.metrics().record_check(&report, elapsed);
    if state.audit().audits_checks() {
        let question = req.question.as_deref().filter(|q| !q.trim().is_empty());
        let mut record = check_record(
            &request_id,
            question,
            &req.passages,
            &req.answer,
            &report,
            json.clone(),
            elapsed * 1000.0,
        );
        record.client_request_id = client_request_id;
        state
            .audit()
            .record_and_wait(record)
            .await
            .map_err(|why| audit::unavailable(why, &request_id))?;
    }
    Ok(json_bytes(StatusCode::OK, json.bytes()))
}

/// A flag set when it is dropped (or by [`StopOnDrop::set`]): held by a
/// handler whose work runs elsewhere, so that the work stops when the
/// handler's future is dropped (client gone, outer timeout).
#[derive(Default)]
struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

/// The work's side of [`StopOnDrop`].
struct StopFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl StopOnDrop {
    fn flag(&self) -> StopFlag {
        StopFlag(self.0.clone())
    }

    fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.set();
    }
}

impl StopFlag {
    fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

// ---------------------------------------------------------------- /v1/prompt

/// The body of `POST /v1/prompt`: a question and its ranked passages.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptRequest {
    /// The question the prompt asks; not empty or white space.
    #[schema(min_length = 1)]
    pub question: String,
    /// Ranked; assembly trims them to the budget, then numbers them. A
    /// passage may be a string (its text) or leave out `id` (`p1`, `p2`, ...).
    #[serde(deserialize_with = "groundcite_core::passage::deserialize_list")]
    pub passages: Vec<Passage>,
}

/// Render the contract and the numbered context for a question.
#[utoipa::path(
    post, path = "/v1/prompt", operation_id = "prompt",
    security(("bearer" = []), ()),
    request_body = PromptRequest,
    responses(
        (status = 200, description = "The rendered prompt.", body = groundcite_engine::PromptOutput),
        (status = 400, description = "`malformed_json`, `invalid_body`, `empty_question`.", body = Envelope),
        (status = 401, description = "`missing_api_key`, `invalid_api_key`.", body = Envelope),
        (status = 413, description = "`payload_too_large`.", body = Envelope),
        (status = 415, description = "`unsupported_media_type`.", body = Envelope),
        (status = 422, description = "Over a check limit (`limit_exceeded`).", body = Envelope),
        (status = 500, description = "`internal`.", body = Envelope),
    )
)]
pub async fn prompt(
    State(state): State<AppState>,
    ReqId(request_id): ReqId,
    ApiJson(req): ApiJson<PromptRequest>,
) -> Result<Response, ApiError> {
    if req.question.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyQuestion,
            "the question is empty",
        ));
    }
    // On the blocking pool, as checks: assembly reads every passage.
    let st = state.clone();
    let prompt = tokio::task::spawn_blocking(move || {
        st.metrics().blocking_work("/v1/prompt");
        st.checker().admit(&req.passages, "")?;
        let mut prompt = st.checker().prompt(&req.question, &req.passages);
        for p in &mut prompt.passages {
            groundcite_core::link::sanitize(&mut p.source_url);
        }
        Ok(prompt)
    })
    .await
    .map_err(|e| ApiError::internal(&request_id, e))?
    .map_err(|e: groundcite_core::limits::LimitExceeded| {
        ApiError::new(ErrorCode::LimitExceeded, format!("too large: {e}"))
    })?;
    let json = to_json(&request_id, &prompt)?;
    Ok(json_bytes(StatusCode::OK, json.bytes()))
}

// ---------------------------------------------------------------- /v1/search

/// The query string of `GET /v1/search`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// The query.
    #[param(min_length = 1)]
    pub q: String,
    /// How many hits (default 5).
    #[serde(default)]
    #[param(minimum = 1, maximum = 50)]
    pub k: Option<usize>,
}

/// `GET /v1/search`: the hits, best first.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct SearchResponse<'a> {
    /// The query, as sent in `q`.
    pub query: &'a str,
    /// How many hits were asked for (`k`, default 5).
    pub k: usize,
    /// The hits, best first; at most `k`.
    pub hits: Vec<crate::answerer::SearchHit>,
}

/// Search the index.
#[utoipa::path(
    get, path = "/v1/search", operation_id = "search",
    security(("bearer" = []), ()),
    params(SearchQuery),
    responses(
        (status = 200, description = "Hits, best first.", body = SearchResponse),
        (status = 400, description = "`invalid_query`, `empty_query`, `invalid_parameter`.", body = Envelope),
        (status = 401, description = "`missing_api_key`, `invalid_api_key`.", body = Envelope),
        (status = 500, description = "`internal`.", body = Envelope),
        (status = 503, description = "No index (`not_ready`).", body = Envelope),
        (status = 504, description = "`timeout`.", body = Envelope),
    )
)]
pub async fn search(
    State(state): State<AppState>,
    ReqId(request_id): ReqId,
    query: Result<Query<SearchQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|r| ApiError::new(ErrorCode::InvalidQuery, r.body_text()))?;
    let q = query.q.trim();
    if q.is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyQuery,
            "the query `q` is empty",
        ));
    }
    let k = query.k.unwrap_or(5);
    check_k("k", k)?;
    let answerer = state
        .answerer()
        .ok_or_else(|| ApiError::new(ErrorCode::NotReady, "this server has no index"))?
        .clone();
    if !answerer.readiness().index {
        return Err(ApiError::new(ErrorCode::NotReady, "the index is not open"));
    }
    let mut hits = tokio::time::timeout(state.config().timeout, answerer.search(q, k))
        .await
        .unwrap_or_else(|_| {
            Err(AnswerError::new(
                AnswerErrorKind::Timeout,
                "timeout",
                "search timed out",
            ))
        })
        .map_err(|e| e.into_api(&request_id))?;
    // Only safe links leave the API, whatever an older index holds.
    for hit in &mut hits {
        groundcite_core::link::sanitize(&mut hit.source_url);
    }
    let json = to_json(&request_id, &SearchResponse { query: q, k, hits })?;
    Ok(json_bytes(StatusCode::OK, json.bytes()))
}

// ---------------------------------------------------------------- health

/// `GET /healthz`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: &'static str,
    /// The server's version.
    pub version: &'static str,
}

/// `GET /readyz` when ready.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Ready {
    /// Always `ready`.
    pub status: &'static str,
    /// The index is open.
    pub index: bool,
    /// The generator's name (`extractive`, `openai`, ...).
    pub generator: Option<String>,
    /// Passages in the index, when known.
    pub passages: Option<u64>,
    /// The audit log is on.
    pub audit: bool,
}

/// The process is up.
#[utoipa::path(
    get, path = "/healthz", operation_id = "healthz",
    responses((status = 200, description = "Up.", body = Health))
)]
pub async fn healthz() -> Response {
    json_value(
        &serde_json::to_value(Health {
            status: "ok",
            version: env!("CARGO_PKG_VERSION"),
        })
        .unwrap_or_default(),
    )
}

/// The index is open and a generator is configured.
#[utoipa::path(
    get, path = "/readyz", operation_id = "readyz",
    responses(
        (status = 200, description = "Ready.", body = Ready),
        (status = 503, description = "Not ready (`not_ready`).", body = Envelope),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let answerer = state.answerer().ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotReady,
            "no index or generator configured: only /v1/check and /v1/prompt are served",
        )
    })?;
    let readiness = answerer.readiness();
    if !readiness.is_ready() {
        let why = if !readiness.index {
            "the index is not open or is empty: run `groundcite ingest`"
        } else {
            "no generator is configured"
        };
        return Err(ApiError::new(ErrorCode::NotReady, why));
    }
    let ready = Ready {
        status: "ready",
        index: readiness.index,
        generator: readiness.generator,
        passages: readiness.passages,
        audit: state.audit().is_enabled(),
    };
    Ok(json_value(&serde_json::to_value(ready).unwrap_or_default()))
}

/// Prometheus metrics: answers by status, refusals by cause, invalid-id
/// answers, regenerations, sentences by verdict, coverage, stage
/// latencies, audit writes, HTTP requests by route and status, request
/// durations, build info.
#[utoipa::path(
    get, path = "/metrics", operation_id = "metrics",
    security(("bearer" = []), ()),
    responses(
        (status = 200, description = "Prometheus text format 0.0.4.", content_type = "text/plain", body = String),
        (status = 401, description = "`missing_api_key`, `invalid_api_key`.", body = Envelope),
    )
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut response = state.metrics().render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// The fallback for a path no route serves: 404 `not_found`.
pub async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such route; see GET /openapi.json")
}

/// The answer to a route called with a method it does not accept: 405
/// `method_not_allowed`.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "this route does not accept this method; see GET /openapi.json",
    )
}
