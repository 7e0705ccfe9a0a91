//! Configuration and shared state.

use std::sync::Arc;
use std::time::Duration;

use groundcite_audit::{AuditConfig, AuditLog};
use groundcite_core::CheckConfig;
use groundcite_engine::{Checker, PageSettings};
use serde::{Deserialize, Serialize};

use crate::answerer::Answerer;
use crate::metrics::Metrics;

/// The environment variable holding the API key. Unset or empty: no auth.
pub const API_KEY_ENV: &str = "GROUNDCITE_API_KEY";
/// Comma-separated allowed CORS origins (`*` for any). Unset: CORS off.
pub const CORS_ENV: &str = "GROUNDCITE_CORS_ORIGINS";
/// Body limit in bytes.
pub const BODY_LIMIT_ENV: &str = "GROUNDCITE_BODY_LIMIT";
/// Request timeout in seconds.
pub const TIMEOUT_ENV: &str = "GROUNDCITE_TIMEOUT_SECS";
/// Audit database path; `off` turns auditing off.
pub const AUDIT_PATH_ENV: &str = "GROUNDCITE_AUDIT_PATH";
/// How long an answer waits for its audit record to commit, in ms.
pub const AUDIT_WAIT_ENV: &str = "GROUNDCITE_AUDIT_WAIT_MS";
/// Most connections served at once.
pub const MAX_CONNECTIONS_ENV: &str = "GROUNDCITE_MAX_CONNECTIONS";
/// Longest wait for a request's head (and on an idle kept-alive connection), in seconds.
pub const HEADER_TIMEOUT_ENV: &str = "GROUNDCITE_HEADER_TIMEOUT_SECS";

/// Service options. Defaults are documented per field; [`ServerConfig::from_env`]
/// overrides them from the environment, and the CLI's flags override both.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerConfig {
    /// Largest accepted request body, in bytes. Default 1 MiB.
    pub body_limit: usize,
    /// Longest time to produce a response (for streams: the whole stream).
    /// Default 60 s.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Most connections served at once. At the cap, new connections wait
    /// in the listen queue until one closes. Default 512 (each takes a
    /// file: keep it well under `ulimit -n`).
    pub max_connections: usize,
    /// Longest wait for a request's head (request line and headers), from
    /// when the connection is ready for it: a new connection, or a
    /// kept-alive one after its last response (so it is also how long an
    /// idle connection stays open). The connection is closed when it runs
    /// out. Default 10 s.
    #[serde(with = "secs")]
    pub header_timeout: Duration,
    /// Bearer token required on `/v1/*` and `/metrics`. Default: none (no
    /// auth); from `GROUNDCITE_API_KEY`.
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    /// Allowed CORS origins; empty (default) sends no CORS headers; `*`
    /// allows any origin.
    pub cors_origins: Vec<String>,
    /// The audit log. Default `./.groundcite/audit.sqlite`, checks audited.
    pub audit: AuditConfig,
    /// The checks of `POST /v1/check` (and the refusal form of `POST /v1/prompt`).
    pub check: CheckConfig,
    /// The web page's title, corpus name, placeholder and example
    /// questions, defaults filled (`Settings::page`). Default: the plain
    /// words, no corpus named, no examples.
    pub page: PageSettings,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("body_limit", &self.body_limit)
            .field("timeout", &self.timeout)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("cors_origins", &self.cors_origins)
            .field("audit", &self.audit)
            .finish_non_exhaustive()
    }
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            body_limit: 1024 * 1024,
            timeout: Duration::from_secs(60),
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            api_key: None,
            cors_origins: Vec::new(),
            audit: AuditConfig::default(),
            check: CheckConfig::default(),
            page: PageSettings::plain(),
        }
    }
}

impl ServerConfig {
    /// Defaults, overridden by `GROUNDCITE_API_KEY`, `GROUNDCITE_CORS_ORIGINS`,
    /// `GROUNDCITE_BODY_LIMIT`, `GROUNDCITE_TIMEOUT_SECS`, `GROUNDCITE_AUDIT_PATH`,
    /// `GROUNDCITE_MAX_CONNECTIONS`, `GROUNDCITE_HEADER_TIMEOUT_SECS`.
    pub fn from_env() -> anyhow::Result<ServerConfig> {
        ServerConfig::default().with_env(|k| std::env::var(k).ok())
    }

    /// Applies environment overrides read through `get` (testable).
    pub fn with_env(
        mut self,
        get: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<ServerConfig> {
        use anyhow::Context;
        if let Some(key) = get(API_KEY_ENV).filter(|k| !k.trim().is_empty()) {
            self.api_key = Some(key.trim().to_string());
        }
        if let Some(origins) = get(CORS_ENV) {
            self.cors_origins = origins
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(limit) = get(BODY_LIMIT_ENV) {
            self.body_limit = limit
                .trim()
                .parse()
                .with_context(|| format!("{BODY_LIMIT_ENV}={limit:?} is not a byte count"))?;
        }
        if let Some(t) = get(TIMEOUT_ENV) {
            let secs: f64 = t
                .trim()
                .parse()
                .with_context(|| format!("{TIMEOUT_ENV}={t:?} is not a number of seconds"))?;
            self.timeout = Duration::try_from_secs_f64(secs)
                .with_context(|| format!("{TIMEOUT_ENV}={t:?} is not a duration"))?;
        }
        if let Some(n) = get(MAX_CONNECTIONS_ENV) {
            self.max_connections = n
                .trim()
                .parse()
                .ok()
                .filter(|&n: &usize| n > 0)
                .with_context(|| {
                    format!(
                        "{MAX_CONNECTIONS_ENV}={n:?} is not a number of connections (1 or more)"
                    )
                })?;
        }
        if let Some(t) = get(HEADER_TIMEOUT_ENV) {
            self.header_timeout = t
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
                .filter(|d| !d.is_zero())
                .with_context(|| {
                    format!("{HEADER_TIMEOUT_ENV}={t:?} is not a number of seconds (above 0)")
                })?;
        }
        if let Some(path) = get(AUDIT_PATH_ENV) {
            let path = path.trim();
            self.audit.path = match path {
                "" | "off" | "none" => None,
                p => Some(p.into()),
            };
        }
        if let Some(ms) = get(AUDIT_WAIT_ENV) {
            self.audit.commit_wait_ms = Some(ms.trim().parse().with_context(|| {
                format!("{AUDIT_WAIT_ENV}={ms:?} is not a number of milliseconds")
            })?);
        }
        Ok(self)
    }
}

/// Everything a handler needs. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServerConfig,
    answerer: Option<Arc<dyn Answerer>>,
    metrics: Metrics,
    audit: AuditLog,
    checker: Checker,
    /// The web page, rendered once from `config.page`.
    page: axum::body::Bytes,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.inner.config)
            .field("answerer", &self.inner.answerer.is_some())
            .field("audit", &self.inner.audit)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// A state with its own metrics registry, and the audit writer started
    /// when `config.audit.path` is set. `answerer: None` serves only the
    /// routes that need no index (`/v1/check`, `/v1/prompt`); the others
    /// answer 503 `not_ready`.
    pub fn new(config: ServerConfig, answerer: Option<Arc<dyn Answerer>>) -> AppState {
        let metrics = Metrics::new();
        let audit = groundcite_engine::audit::start(&config.audit, Arc::new(metrics.clone()));
        let checker = Checker::new(config.check.clone());
        let page = crate::page::render(&config.page).into();
        AppState {
            inner: Arc::new(Inner {
                config,
                answerer,
                metrics,
                audit,
                checker,
                page,
            }),
        }
    }

    /// The same state checking `/v1/check` with `checker` (the engine's,
    /// so that a configured semantic verifier serves both routes). Call it
    /// before the state is shared.
    pub fn with_checker(self, checker: Checker) -> AppState {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(shared) => Inner {
                config: shared.config.clone(),
                answerer: shared.answerer.clone(),
                metrics: shared.metrics.clone(),
                audit: shared.audit.clone(),
                checker: shared.checker.clone(),
                page: shared.page.clone(),
            },
        };
        AppState {
            inner: Arc::new(Inner { checker, ..inner }),
        }
    }

    /// The service options it was built with.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The answerer behind `/v1/ask` and `/v1/search`; `None` when the
    /// server has no index (those routes answer 503 `not_ready`).
    pub fn answerer(&self) -> Option<&Arc<dyn Answerer>> {
        self.inner.answerer.as_ref()
    }

    /// The service's metrics, served at `/metrics`.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The audit log's write side (off when no audit path is set).
    pub fn audit(&self) -> &AuditLog {
        &self.inner.audit
    }

    /// The web page, rendered from `config.page`.
    pub fn page(&self) -> &axum::body::Bytes {
        &self.inner.page
    }

    /// The engine's checks under `config.check`: what `POST /v1/check`
    /// and `POST /v1/prompt` run (with or without an answerer).
    pub fn checker(&self) -> &Checker {
        &self.inner.checker
    }
}
