//! # groundcite-server: the HTTP service
//!
//! One [`app`] builds the whole service from an [`AppState`]; `main` (the
//! CLI's `groundcite serve`) and the in-process tests use the same router.
//!
//! ```no_run
//! use std::sync::Arc;
//! use groundcite_engine::{Engine, Settings};
//! use groundcite_server::{AppState, ServerConfig};
//!
//! # async fn run() -> anyhow::Result<()> {
//! let config = ServerConfig::from_env()?;                  // defaults + GROUNDCITE_* variables
//! let engine = Engine::from_settings(Settings::default())?;  // the index and the generator
//! let state = AppState::new(config, Some(Arc::new(engine)));
//! groundcite_server::serve(state, "127.0.0.1:8080".parse()?).await
//! # }
//! ```
//!
//! ## Routes
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the web page |
//! | `POST /v1/ask` | `{question, top_k?, stream?}` → the answer object, or SSE (`sentence`*, then `final` or `error`) |
//! | `POST /v1/check` | `{question?, passages, answer}` → the check report |
//! | `POST /v1/prompt` | `{question, passages}` → `{system, user, passages}` |
//! | `GET /v1/search?q=&k=` | `{query, k, hits}` |
//! | `GET /healthz` | the process is up |
//! | `GET /readyz` | the index is open and a generator configured (else 503) |
//! | `GET /metrics` | Prometheus text |
//! | `GET /openapi.json` | OpenAPI 3.1, derived from the handlers and types ([`openapi`]) |
//!
//! Ingest is a CLI step (`groundcite ingest`: one index writer); there is no
//! ingest route.
//!
//! `/v1/*` and `/metrics` need `Authorization: Bearer $GROUNDCITE_API_KEY`
//! when that variable is set. Every error has the one shape of [`error`].
//!
//! ## Code map
//!
//! - [`error`]: the error table (code, status, type).
//! - [`answerer`]: the seam to the pipeline ([`Answerer`]), in the engine's
//!   own types (`AskResult`); [`engine`] implements it for
//!   `groundcite_engine::Engine`; `fake` (feature `test-support`) has a static
//!   implementation for tests and demos. `/v1/check` and `/v1/prompt` run the engine's
//!   `Checker` ([`AppState::checker`]), also on a server with no answerer.
//! - [`routes`](mod@routes): the handlers; [`page`]: the web page; [`openapi`].
//! - [`metrics`]: per-state Prometheus recorder.
//! - [`audit`]: the audit log's HTTP side (503 `audit_unavailable` when a
//!   record did not commit); the records are built by
//!   `groundcite_engine::audit`, and the queue, the writer thread and the
//!   stores are `groundcite-audit`'s, the metrics its observer.

#![recursion_limit = "256"]

pub mod answerer;
pub mod audit;
mod conn;
pub mod engine;
pub mod error;
#[cfg(any(test, feature = "test-support"))]
pub mod fake;
pub mod metrics;
pub mod openapi;
pub mod page;
pub mod routes;
pub mod state;
mod util;

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::PropagateRequestIdLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use answerer::{
    AnswerError, AnswerErrorKind, AnswerEvent, Answerer, AskParams, Readiness, RetractEvent,
    SearchHit, SentenceEvent,
};
pub use error::{ApiError, ErrorCode, ErrorType};
pub use groundcite_audit::{
    AuditConfig, AuditError, AuditLog, AuditRecord, IncidentFilter, export_jsonl,
};
pub use metrics::Metrics;
pub use state::{AppState, ServerConfig};
pub use util::{new_request_id, rfc3339};

/// The routes that need the API key when one is set, each registered with
/// its OpenAPI operation (`routes!`): the router and the document cannot
/// list different routes.
fn protected_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(routes::ask))
        .routes(routes!(routes::check))
        .routes(routes!(routes::prompt))
        .routes(routes!(routes::search))
        .routes(routes!(routes::metrics))
}

/// The routes anyone may call.
fn public_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(page::index))
        .routes(routes!(openapi::handler))
        .routes(routes!(routes::healthz))
        .routes(routes!(routes::readyz))
}

/// Every route of the service with its operation: what [`app`] serves and
/// what [`openapi::document`] lists.
pub fn api_routes() -> OpenApiRouter<AppState> {
    protected_routes().merge(public_routes())
}

/// The service.
pub fn app(state: AppState) -> Router {
    let config = state.config().clone();
    let protected =
        protected_routes().route_layer(middleware::from_fn_with_state(state.clone(), require_key));
    let (routes, _) = protected.merge(public_routes()).split_for_parts();
    let router = routes
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.body_limit))
        .layer(middleware::from_fn(limit_uri))
        // The handlers' own deadline fires first, with a better message.
        .layer(TimeoutLayer::with_status_code(
            StatusCode::GATEWAY_TIMEOUT,
            config.timeout + Duration::from_secs(1),
        ))
        .layer(middleware::map_response_with_state(
            state.clone(),
            shape_errors,
        ))
        // Outside the layers above: it counts the status the client gets.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            count_requests,
        ));
    let router = match cors(&config.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    };
    router
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let id = req
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            // Info: every line logged inside a request carries its id.
            tracing::info_span!("request", method = %req.method(), uri = %req.uri().path(), request_id = id)
        })
        .on_response(tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO)))
        .layer(middleware::map_request(util::assign_request_id))
        .with_state(state)
}

fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o).ok())
                .collect::<Vec<_>>(),
        )
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
            .expose_headers([header::HeaderName::from_static("x-request-id")])
            .max_age(Duration::from_secs(600)),
    )
}

/// Bearer-token check for `/v1/*` and `/metrics`, when a key is configured.
/// The scheme is case-insensitive (RFC 9110 §11.1), the token is compared
/// in constant time, and a request with more than one `Authorization`
/// header is refused (a proxy and the server must not judge different
/// headers).
async fn require_key(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if let Some(key) = &state.config().api_key {
        let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
        let value = values.next().ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingApiKey,
                "this server requires an API key: send `Authorization: Bearer <key>`",
            )
        })?;
        if values.next().is_some() {
            return Err(ApiError::new(
                ErrorCode::InvalidApiKey,
                "send exactly one Authorization header",
            ));
        }
        let given = value.to_str().ok().and_then(bearer_token).unwrap_or("");
        if !constant_time_eq(given.as_bytes(), key.as_bytes()) {
            return Err(ApiError::new(
                ErrorCode::InvalidApiKey,
                "the bearer token is not the configured API key",
            ));
        }
    }
    Ok(next.run(request).await)
}

/// The token of a `Bearer` credential, the scheme in any case.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Compares SHA-256 digests, byte by byte without an early exit: the time
/// depends on neither the key's length nor where the token differs.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// The longest request target (path and query) served, in bytes.
///
/// Longer ones get 414 `uri_too_long` in the error shape. (Past 64 KiB
/// hyper refuses the request line itself, with a bare 414 before any
/// middleware runs.)
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// 414 in the error shape for a request target over [`MAX_URI_BYTES`].
async fn limit_uri(request: Request, next: Next) -> Result<Response, ApiError> {
    let len = request
        .uri()
        .path_and_query()
        .map_or(0, |pq| pq.as_str().len());
    if len > MAX_URI_BYTES {
        return Err(ApiError::new(
            ErrorCode::UriTooLong,
            format!("the request target is {len} bytes, over the limit of {MAX_URI_BYTES}"),
        ));
    }
    Ok(next.run(request).await)
}

/// Counts every request by its matched route template (never the raw
/// path) and status, and times it to its response head.
async fn count_requests(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string());
    let response = next.run(request).await;
    state.metrics().http_request(
        route.as_deref().unwrap_or(metrics::UNMATCHED_ROUTE),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// Counts every error response, and gives the one error shape to the
/// bare-status responses of layers (timeout).
async fn shape_errors(State(state): State<AppState>, response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    if let Some(code) = response.extensions().get::<ErrorCode>() {
        state.metrics().http_error(*code);
        return response;
    }
    let code = ErrorCode::for_status(status);
    state.metrics().http_error(code);
    let summary = ErrorCode::TABLE
        .iter()
        .find(|r| r.code == code)
        .map_or("error", |r| r.summary);
    ApiError::new(code, summary).into_response()
}

/// Serves `app(state)` on `addr` until Ctrl-C or SIGTERM, then drains the
/// audit queue. At most `max_connections` connections are served at once,
/// and a request's head must come within `header_timeout` (see `conn`).
pub async fn serve(state: AppState, addr: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    serve_on(state, listener, shutdown_signal()).await
}

/// Serves on a bound listener until `shutdown` resolves (tests pass their
/// own future).
pub async fn serve_on(
    state: AppState,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let local = listener.local_addr()?;
    tracing::info!(addr = %local, "groundcite serving");
    conn::serve(&state, listener, app(state.clone()), shutdown).await;
    let audit = state.audit().clone();
    tokio::task::spawn_blocking(move || audit.shutdown())
        .await
        .context("audit shutdown")?;
    tracing::info!("groundcite stopped");
    Ok(())
}

/// Resolves on Ctrl-C, or SIGTERM on Unix.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown signal received");
}
