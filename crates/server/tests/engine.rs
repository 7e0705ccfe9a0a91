//! The real engine behind the service: a scripted generator over a fixed
//! retriever, through `app()`.

mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::*;
use groundcite_engine::{Engine, Retriever, Settings};
use groundcite_index::{Chunk, Hit};
use groundcite_llm::{LlmError, ScriptedGenerator};
use groundcite_server::{AppState, AuditConfig, ServerConfig};
use serde_json::json;

struct Fixed(Vec<Hit>);

impl Retriever for Fixed {
    fn search(&self, _: &str, k: usize) -> groundcite_index::Result<Vec<Hit>> {
        Ok(self.0.iter().take(k).cloned().collect())
    }
}

fn hit(id: &str, text: &str, section: &str, score: f32) -> Hit {
    Hit {
        chunk: Chunk {
            id: id.into(),
            path: id.split('#').next().unwrap().into(),
            title: "Expenses".into(),
            section: section.into(),
            source_url: format!("https://handbook.example/{id}"),
            text: text.into(),
            start: 0,
            end: text.len(),
            metadata: serde_json::Value::Null,
        },
        score,
        raw_score: score * 10.0,
        units: None,
    }
}

fn handbook(score: f32) -> Arc<dyn Retriever> {
    Arc::new(Fixed(vec![
        hit(
            "expenses.md#L9-L14",
            "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
            "Reimbursement",
            score,
        ),
        hit(
            "expenses.md#L3-L8",
            "Expense claims must be filed within 60 days of the expense.",
            "Filing",
            score * 0.9,
        ),
    ]))
}

fn state(engine: Engine, audit_path: Option<&std::path::Path>) -> AppState {
    let config = ServerConfig {
        audit: audit_path.map_or_else(AuditConfig::off, AuditConfig::at),
        ..config()
    };
    AppState::new(config, Some(Arc::new(engine)))
}

fn engine(retriever: Arc<dyn Retriever>, outputs: Vec<Result<String, LlmError>>) -> Engine {
    Engine::new(
        Settings::default(),
        retriever,
        Arc::new(ScriptedGenerator::from_results(outputs)),
    )
}

#[tokio::test]
async fn ids_never_sent_are_regenerated_once_audited_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let engine = engine(
        handbook(0.9),
        vec![
            Ok("Reimbursements settle within 30 days of approval [7].".into()),
            Ok("Reimbursements settle within 30 days of approval [1]. Claims are filed within 90 days of the expense [2].".into()),
        ],
    );
    let state = state(engine, Some(&path));
    assert_eq!(
        send(&state, get("/readyz")).await.json()["generator"],
        "scripted"
    );

    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["regenerated"], true, "{v:#}");
    assert_eq!(v["status"], "ok");
    assert_eq!(v["sentences"][0]["verdict"], "supported");
    assert_eq!(v["sentences"][1]["verdict"], "contradicted");
    assert_eq!(v["attempts"].as_array().unwrap().len(), 2);

    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(metric(&text, "groundcite_regenerations_total"), Some(1.0));
    assert_eq!(
        metric(&text, "groundcite_invalid_id_answers_total"),
        Some(1.0)
    );
    assert_eq!(
        metric(
            &text,
            "groundcite_sentences_total{verdict=\"contradicted\",endpoint=\"ask\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        metric(&text, "groundcite_stage_seconds_count{stage=\"generate\"}"),
        Some(1.0)
    );

    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 1);
    // Served `ok` after the regeneration: not an unverified incident; the
    // first attempt's [7] stays in its attempt.
    assert!(records[0].bad_ids.is_empty(), "{:?}", records[0].bad_ids);
    assert!(records[0].regenerated && !records[0].is_unverified());
    assert_eq!(
        records[0].attempts.parse().unwrap()[0]["bad_ids"],
        json!([7])
    );
    assert_eq!(
        records[0].passage_ids,
        ["expenses.md#L9-L14", "expenses.md#L3-L8"]
    );
    assert!(
        records[0].attempts.parse().unwrap()[0]["raw"]
            .as_str()
            .unwrap()
            .ends_with("[7].")
    );
    assert_eq!(records[0].request_id, r.header("x-request-id").unwrap());
}

#[tokio::test]
async fn a_weak_retrieval_is_refused_at_the_gate() {
    let state = state(
        engine(handbook(0.01), vec![Ok("never called [1].".into())]),
        None,
    );
    let v = send(
        &state,
        post_json("/v1/ask", &json!({"question": "Is furniture covered?"})),
    )
    .await
    .json();
    assert_eq!(v["status"], "no_evidence");
    assert_eq!(v["refusal"]["reason"], "gate");
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(
        metric(&text, "groundcite_refusals_total{cause=\"gate\"}"),
        Some(1.0)
    );
}

#[tokio::test]
async fn the_engine_streams_sentences_then_the_result() {
    let state = state(
        engine(handbook(0.9), vec![Ok("Reimbursements settle within 30 days of approval [1]. Per diem claims follow the same schedule [1].".into())]),
        None,
    );
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?", "stream": true}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let body = r.text();
    let events: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.last(), Some(&"final"), "{body}");
    assert!(
        events.iter().filter(|e| **e == "sentence").count() >= 1,
        "{body}"
    );
}

#[tokio::test]
async fn a_generator_failure_is_502_and_search_goes_through_the_retriever() {
    let state = state(
        engine(handbook(0.9), vec![Err(LlmError::EmptyContent)]),
        None,
    );
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_GATEWAY, "{}", r.text());
    assert_eq!(r.error_code(), "upstream_error");

    let r = send(&state, get("/v1/search?q=reimbursement&k=1")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["hits"][0]["id"], "expenses.md#L9-L14");
    assert_eq!(r.json()["hits"].as_array().unwrap().len(), 1);
}

/// A corrective call answered with no text (as a real llama.cpp server
/// did) is not a 502 with nothing audited: the first attempt already cited
/// ids never sent, so it is a refusal (`validation`), audited.
#[tokio::test]
async fn an_empty_regeneration_is_an_audited_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = state(
        engine(
            handbook(0.9),
            vec![
                Ok("Reimbursements settle in 30 days [6][7].".into()),
                Err(LlmError::EmptyContent),
            ],
        ),
        Some(&path),
    );
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["refusal"]["reason"], "validation");
    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].refusal.as_deref(), Some("validation"));
}

/// Sentences of a rejected first attempt do not stay on screen: the
/// stream withdraws them with a `retract` event before `final`.
#[tokio::test]
async fn a_rejected_first_attempt_is_retracted_over_sse() {
    let state = state(
        engine(
            handbook(0.9),
            vec![
                Ok(
                    "Claims are filed within 60 days of the expense [2]. Refunds take 14 days [7]."
                        .into(),
                ),
                Ok("Reimbursements settle within 30 days of approval [1].".into()),
            ],
        ),
        None,
    );
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?", "stream": true}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let body = r.text();
    let events: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events, ["sentence", "retract", "final"], "{body}");
    assert!(
        body.contains(r#"data: {"count":1,"reason":"regenerated"}"#),
        "{body}"
    );
}

/// A failed model call leaves an audit record.
#[tokio::test]
async fn a_failed_model_call_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = state(
        engine(
            handbook(0.9),
            vec![
                Err(LlmError::Http {
                    status: 500,
                    message: "boom".into(),
                }),
                Err(LlmError::Http {
                    status: 500,
                    message: "boom".into(),
                }),
            ],
        ),
        Some(&path),
    );
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_GATEWAY, "{}", r.text());
    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0].status, "error");
    assert_eq!(
        records[0].question.as_deref(),
        Some("How long does reimbursement take?")
    );
    let attempts = records[0].attempts.parse().unwrap();
    assert!(
        attempts[0]["error"].as_str().unwrap().contains("500"),
        "{attempts}"
    );

    // The same failure while streaming: an `error` event, and a record.
    let r = send(
        &state,
        post_json("/v1/ask", &json!({"question": "Streamed?", "stream": true})),
    )
    .await;
    assert!(r.text().contains("event: error"), "{}", r.text());
    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 2, "{records:#?}");
    assert_eq!(records[1].status, "error");
    assert_eq!(records[1].question.as_deref(), Some("Streamed?"));
}

/// An engine over an empty index (a shared index not yet ingested, or
/// emptied) is not ready.
#[tokio::test]
async fn an_empty_index_is_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    let empty = groundcite_index::Index::open_or_create(&dir.path().join("idx")).unwrap();
    let r = send(
        &state(engine(Arc::new(empty), vec![]), None),
        get("/readyz"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.text().contains("empty"), "{}", r.text());
    let r = send(&state(engine(handbook(0.9), vec![]), None), get("/readyz")).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "a retriever that cannot count is ready"
    );
}
