//! Helpers of the in-process tests: build a state, send one request with
//! `tower::ServiceExt::oneshot`, read the body.
#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use groundcite_server::fake::StaticAnswerer;
use groundcite_server::{AppState, AuditConfig, ServerConfig, app};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// A config with auditing off (tests that audit set a path).
pub fn config() -> ServerConfig {
    ServerConfig {
        audit: AuditConfig::off(),
        ..ServerConfig::default()
    }
}

pub fn state_with(config: ServerConfig, answerer: Option<StaticAnswerer>) -> AppState {
    AppState::new(
        config,
        answerer.map(|a| Arc::new(a) as Arc<dyn groundcite_server::Answerer>),
    )
}

pub fn demo_state() -> AppState {
    state_with(config(), Some(StaticAnswerer::demo()))
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts the one error shape and returns the code.
    pub fn error_code(&self) -> String {
        let v = self.json();
        let e = v
            .get("error")
            .unwrap_or_else(|| panic!("no `error` in {v}"));
        let obj = e.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["code", "message", "type"], "{v}");
        assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
        let code = e["code"].as_str().unwrap().to_string();
        let row = groundcite_server::ErrorCode::TABLE
            .iter()
            .find(|r| r.name == code)
            .unwrap_or_else(|| panic!("code {code} is not in the table"));
        assert_eq!(row.status, self.status, "status of {code}");
        assert_eq!(e["type"], row.kind.as_str());
        assert_eq!(
            self.headers.get("content-type").unwrap(),
            "application/json"
        );
        code
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub async fn send(state: &AppState, request: Request<Body>) -> Reply {
    let response: Response<Body> = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

pub fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

pub fn post_json(uri: &str, body: &serde_json::Value) -> Request<Body> {
    Request::post(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

pub fn post_raw(uri: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::post(uri);
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(body.into()).unwrap()
}

/// A check whose one sentence is contradicted: "Reimbursements settle in 14
/// days [2]." against a passage that says 30 days.
pub fn contradicted_check() -> serde_json::Value {
    serde_json::json!({
        "question": "How long does reimbursement take?",
        "passages": [
            {"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense.", "source_url": "https://hr.example/policy", "section": "Filing"},
            {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.", "source_url": "https://hr.example/policy", "section": "Reimbursement"},
            {"id": "hr-3", "text": "Questions about reimbursement go to the finance help desk.", "source_url": "https://hr.example/faq", "section": "Help"}
        ],
        "answer": "Reimbursements settle in 14 days [2]."
    })
}

/// A metric's value in the Prometheus text (`name{labels} value`).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .and_then(|v| v.trim().parse().ok())
}

/// Every record of the audit log at `path` (a SQLite file or a
/// `postgres://` URL), oldest first, read as `groundcite audit` reads it.
pub fn audit_records(path: impl AsRef<std::path::Path>) -> Vec<groundcite_server::AuditRecord> {
    let store = groundcite_engine::audit::open_reader(path.as_ref()).expect("open the audit log");
    groundcite_audit::list_all(store.as_ref()).expect("read the audit log")
}
