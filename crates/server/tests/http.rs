//! Every route, in process (`tower::ServiceExt::oneshot`, no socket):
//! status codes, bodies, the one error shape, limits, auth, CORS.

mod common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use groundcite_server::fake::StaticAnswerer;
use groundcite_server::{AnswerError, AnswerErrorKind, ServerConfig};
use serde_json::json;

// ------------------------------------------------------------ health

#[tokio::test]
async fn healthz_is_up_even_without_an_index() {
    let state = state_with(config(), None);
    let r = send(&state, get("/healthz")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["status"], "ok");
    assert!(r.header("x-request-id").is_some_and(|id| !id.is_empty()));
}

#[tokio::test]
async fn readyz_needs_an_open_index_and_a_generator() {
    let r = send(&state_with(config(), None), get("/readyz")).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.error_code(), "not_ready");

    let mut closed = StaticAnswerer::demo();
    closed.readiness.index = false;
    let r = send(&state_with(config(), Some(closed)), get("/readyz")).await;
    assert_eq!(r.error_code(), "not_ready");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("index")
    );

    let mut no_generator = StaticAnswerer::demo();
    no_generator.readiness.generator = None;
    let r = send(&state_with(config(), Some(no_generator)), get("/readyz")).await;
    assert_eq!(r.error_code(), "not_ready");

    let r = send(&demo_state(), get("/readyz")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["status"], "ready");
    assert_eq!(r.json()["generator"], "scripted");
}

// ------------------------------------------------------------ unknown routes, methods

#[tokio::test]
async fn unknown_route_is_404_in_the_error_shape() {
    let r = send(&demo_state(), get("/v1/nope")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "not_found");
    let r = send(&demo_state(), post_json("/nope", &json!({}))).await;
    assert_eq!(r.error_code(), "not_found");
}

#[tokio::test]
async fn wrong_method_is_405_in_the_error_shape() {
    for (uri, req) in [
        ("/v1/check", get("/v1/check")),
        ("/healthz", post_json("/healthz", &json!({}))),
        ("/v1/search", post_json("/v1/search", &json!({}))),
    ] {
        let r = send(&demo_state(), req).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
        assert_eq!(r.error_code(), "method_not_allowed", "{uri}");
    }
}

// ------------------------------------------------------------ /v1/check

#[tokio::test]
async fn check_reports_a_number_the_passage_contradicts() {
    let r = send(&demo_state(), post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["grounded"], false);
    assert_eq!(v["cited"], json!([2]));
    assert_eq!(v["sentences"][0]["verdict"], "contradicted");
    assert_eq!(
        v["sentences"][0]["reasons"][0],
        "number_mismatch: \"14 days\" vs \"30 days\""
    );
    assert_eq!(v["sources"][0]["url"], "https://hr.example/policy");
    assert!(r.header("x-request-id").is_some());
}

#[tokio::test]
async fn check_reports_ids_never_sent_and_the_refusal() {
    let mut body = contradicted_check();
    body["answer"] = json!("Refunds take 14 days [7]. Reimbursements settle in 14 days.");
    let v = send(&demo_state(), post_json("/v1/check", &body))
        .await
        .json();
    assert_eq!(v["status"], "unverified");
    assert_eq!(v["bad_ids"], json!([7]));
    assert_eq!(
        v["unmarked"][0]["text"],
        "Reimbursements settle in 14 days."
    );

    body["answer"] = json!("Not covered by the provided documents.");
    let v = send(&demo_state(), post_json("/v1/check", &body))
        .await
        .json();
    assert_eq!(v["status"], "no_evidence");
    assert_eq!(v["refusal"]["form"], "sentence");
}

/// Passages written as the CLI's files accept them: a bare string, or an
/// object without `id`, numbered `p{n}` by their place in the list.
#[tokio::test]
async fn check_and_prompt_read_passages_without_ids_or_as_strings() {
    let body = json!({
        "passages": [
            "Refunds are processed within 30 days.",
            {"text": "Reimbursements settle in 14 days.", "label": "Travel"},
            {"id": "mine", "text": "Receipts are kept for a year."}
        ],
        "answer": "Refunds take 30 days [1]. Reimbursements settle in 14 days [2]."
    });
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["cited"], json!([1, 2]), "{v}");
    assert_eq!(v["sentences"][1]["verdict"], "supported", "{v}");

    let prompt = json!({"question": "How long do refunds take?", "passages": body["passages"]});
    let r = send(&demo_state(), post_json("/v1/prompt", &prompt)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    let ids: Vec<&str> = v["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["p1", "p2", "mine"]);

    // A passage of the wrong type is a 400 that says what a passage is.
    let bad = json!({"passages": [5], "answer": "x [1]."});
    let r = send(&demo_state(), post_json("/v1/check", &bad)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.text().contains("a passage: an object with `text`"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn check_is_served_without_an_index() {
    let r = send(
        &state_with(config(), None),
        post_json("/v1/check", &contradicted_check()),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn check_of_a_large_answer_runs_off_the_async_threads() {
    let mut body = contradicted_check();
    body["answer"] = json!("Reimbursements settle within 30 days of approval [2]. ".repeat(2000));
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["counts"]["supported"], 2000);
}

/// 900 KB of markers in one sentence (300,000 markers, under the 1 MiB
/// body limit) is refused as over a limit, naming it; at the
/// limit the check runs (each step is linear in its input: this took 61 s
/// and a 504 when marker handling was quadratic).
#[tokio::test]
async fn an_answer_over_a_check_limit_is_422_naming_the_limit() {
    let mut body = contradicted_check();
    body["answer"] = json!(format!(
        "Reimbursements settle within 30 days {}.",
        "[2]".repeat(300_000)
    ));
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.error_code(), "limit_exceeded");
    assert!(
        r.text()
            .contains("answer bytes: 900038 (the limit is 262144)"),
        "{}",
        r.text()
    );
    body["answer"] = json!(format!(
        "Reimbursements settle within 30 days {}.",
        "[2]".repeat(5000)
    ));
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert!(
        r.text()
            .contains("citation markers: 5000 (the limit is 4096)"),
        "{}",
        r.text()
    );
    body["answer"] = json!(format!(
        "Reimbursements settle within 30 days {}.",
        "[2]".repeat(4096)
    ));
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["counts"]["supported"], 1);
    assert_eq!(
        r.json()["sources"][0]["markers"].as_array().unwrap().len(),
        4096
    );
    // Passages count too, on /v1/prompt as on /v1/check.
    let mut body = json!({"question": "q", "passages": []});
    body["passages"] = json!(vec![contradicted_check()["passages"][0].clone(); 101]);
    let r = send(&demo_state(), post_json("/v1/prompt", &body)).await;
    assert_eq!(r.error_code(), "limit_exceeded");
    assert!(r.text().contains("passages: 101"), "{}", r.text());
}

#[tokio::test]
async fn bad_json_is_400_malformed_json() {
    let r = send(
        &demo_state(),
        post_raw("/v1/check", Some("application/json"), "{\"answer\": "),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "malformed_json");
    let r = send(
        &demo_state(),
        post_raw("/v1/check", Some("application/json"), ""),
    )
    .await;
    assert_eq!(r.error_code(), "malformed_json");
}

#[tokio::test]
async fn missing_field_and_wrong_type_are_400_invalid_body() {
    let r = send(
        &demo_state(),
        post_json("/v1/check", &json!({"passages": []})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "invalid_body");
    assert!(r.text().contains("answer"), "{}", r.text());

    let r = send(
        &demo_state(),
        post_json(
            "/v1/check",
            &json!({"answer": "x [1].", "passages": [{"id": "p1", "label": "no text"}]}),
        ),
    )
    .await;
    assert_eq!(r.error_code(), "invalid_body");
    assert!(r.text().contains("text"), "{}", r.text());

    let r = send(&demo_state(), post_json("/v1/ask", &json!({"question": 3}))).await;
    assert_eq!(r.error_code(), "invalid_body");
}

#[tokio::test]
async fn empty_answer_is_400_empty_answer() {
    let mut body = contradicted_check();
    body["answer"] = json!("  \n ");
    let r = send(&demo_state(), post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "empty_answer");
}

#[tokio::test]
async fn a_non_json_content_type_is_415() {
    let r = send(
        &demo_state(),
        post_raw(
            "/v1/check",
            Some("text/plain"),
            contradicted_check().to_string(),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(r.error_code(), "unsupported_media_type");
    let r = send(
        &demo_state(),
        post_raw(
            "/v1/check",
            Some("application/json; charset=utf-8"),
            contradicted_check().to_string(),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

/// A page on another origin can POST a body without a Content-Type (a
/// `Blob` with no type, `mode: "no-cors"`) and no preflight: every JSON
/// route refuses it before any work, and it leaves no audit record.
#[tokio::test]
async fn a_body_without_a_content_type_is_415_and_never_audited() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = state_with(
        ServerConfig {
            audit: groundcite_server::AuditConfig::at(&path),
            ..config()
        },
        Some(StaticAnswerer::demo()),
    );
    let bodies = [
        (
            "/v1/ask",
            json!({"question": "How long does reimbursement take?"}),
        ),
        ("/v1/check", contradicted_check()),
        (
            "/v1/prompt",
            json!({"question": "q", "passages": [{"id": "a", "text": "t"}]}),
        ),
    ];
    for (route, body) in &bodies {
        for content_type in [None, Some("text/plain"), Some("text/plain+json")] {
            let r = send(&state, post_raw(route, content_type, body.to_string())).await;
            assert_eq!(
                r.status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{route} {content_type:?}: {}",
                r.text()
            );
            assert_eq!(r.error_code(), "unsupported_media_type");
        }
    }
    state.audit().flush();
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(metric(&text, "groundcite_audit_records_total"), Some(0.0));
    // The same bodies as JSON are served (and audited).
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
    state.audit().shutdown();
    assert_eq!(audit_records(&path).len(), 1);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let state = state_with(
        ServerConfig {
            body_limit: 1024,
            ..config()
        },
        Some(StaticAnswerer::demo()),
    );
    let mut body = contradicted_check();
    body["answer"] = json!("x".repeat(2000));
    let r = send(&state, post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(r.error_code(), "payload_too_large");
    assert!(r.text().contains("1024"));
    // Without a content-length (chunked), the limit still holds.
    let chunks = futures::stream::iter(
        (0..4).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b' '; 600]))),
    );
    let req = Request::post("/v1/check")
        .header("content-type", "application/json")
        .body(Body::from_stream(chunks))
        .unwrap();
    let r = send(&state, req).await;
    assert_eq!(r.error_code(), "payload_too_large");
    // Under the limit is fine.
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
}

// ------------------------------------------------------------ /v1/prompt

#[tokio::test]
async fn prompt_renders_the_contract_and_numbered_passages() {
    let body = json!({"question": "How long does reimbursement take?", "passages": contradicted_check()["passages"]});
    let r = send(&demo_state(), post_json("/v1/prompt", &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    let v = r.json();
    let system = v["system"].as_str().unwrap();
    assert!(system.starts_with("You answer ONLY from the numbered passages below."));
    assert!(system.contains("[2] Reimbursements settle within 30 days of approval."));
    assert_eq!(v["user"], "How long does reimbursement take?");
    assert_eq!(
        v["passages"][1],
        json!({"n": 2, "id": "hr-2", "source_url": "https://hr.example/policy", "section": "Reimbursement",
               "text": "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.", "trimmed": false})
    );
}

#[tokio::test]
async fn prompt_needs_a_question() {
    let body = json!({"question": " ", "passages": []});
    let r = send(&demo_state(), post_json("/v1/prompt", &body)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "empty_question");
    let r = send(
        &demo_state(),
        post_json("/v1/prompt", &json!({"question": "q"})),
    )
    .await;
    assert_eq!(r.error_code(), "invalid_body");
}

// ------------------------------------------------------------ /v1/ask

#[tokio::test]
async fn ask_returns_the_answer_object_and_counts_it() {
    let state = demo_state();
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?", "top_k": 3}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["question"], "How long does reimbursement take?");
    assert_eq!(v["regenerated"], true);
    assert_eq!(v["passages"][2]["id"], "help.md#L1-L6");
    assert_eq!(v["counts"]["contradicted"], 1);
    assert_eq!(v["counts"]["unsupported"], 1);

    let refused = send(
        &state,
        post_json("/v1/ask", &json!({"question": "Is furniture covered?"})),
    )
    .await
    .json();
    assert_eq!(refused["status"], "no_evidence");
    assert_eq!(refused["refusal"]["reason"], "gate");

    let m = send(&state, get("/metrics")).await;
    assert_eq!(m.status, StatusCode::OK);
    assert!(m.header("content-type").unwrap().starts_with("text/plain"));
    let text = m.text();
    let val = |s: &str| metric(&text, s).unwrap_or_else(|| panic!("no {s} in\n{text}"));
    assert_eq!(val("groundcite_answers_total{status=\"ok\"}"), 1.0);
    assert_eq!(val("groundcite_answers_total{status=\"no_evidence\"}"), 1.0);
    assert_eq!(val("groundcite_refusals_total{cause=\"gate\"}"), 1.0);
    assert_eq!(val("groundcite_refusals_total{cause=\"validation\"}"), 0.0);
    assert_eq!(val("groundcite_regenerations_total"), 1.0);
    assert_eq!(val("groundcite_invalid_id_answers_total"), 1.0);
    assert_eq!(
        val("groundcite_sentences_total{verdict=\"contradicted\",endpoint=\"ask\"}"),
        1.0
    );
    assert_eq!(
        val("groundcite_sentences_total{verdict=\"unsupported\",endpoint=\"ask\"}"),
        1.0
    );
    assert_eq!(val("groundcite_coverage_count"), 1.0);
    assert_eq!(val("groundcite_coverage_bucket{le=\"0.8\"}"), 1.0);
    assert_eq!(val("groundcite_stage_seconds_count{stage=\"total\"}"), 2.0);
    assert!(text.contains("groundcite_stage_seconds_bucket{stage=\"generate\",le=\"0.0025\"}"));
    assert_eq!(
        val("groundcite_audit_write_failures_total{reason=\"open\"}"),
        0.0
    );
}

#[tokio::test]
async fn ask_validates_the_question_and_top_k() {
    let r = send(
        &demo_state(),
        post_json("/v1/ask", &json!({"question": ""})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "empty_question");
    for k in [0, 51] {
        let r = send(
            &demo_state(),
            post_json("/v1/ask", &json!({"question": "q", "top_k": k})),
        )
        .await;
        assert_eq!(r.error_code(), "invalid_parameter", "top_k {k}");
    }
    let r = send(&demo_state(), post_json("/v1/ask", &json!({"top_k": 3}))).await;
    assert_eq!(r.error_code(), "invalid_body");
}

#[tokio::test]
async fn ask_without_an_index_is_503() {
    let r = send(
        &state_with(config(), None),
        post_json("/v1/ask", &json!({"question": "q"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.error_code(), "not_ready");
}

#[tokio::test]
async fn upstream_failure_is_502_and_internal_failure_is_500_with_details_hidden() {
    let mut failing = StaticAnswerer::demo();
    failing.failure = Some(AnswerError::new(
        AnswerErrorKind::Upstream,
        "generation",
        "openai: HTTP 500 from http://10.0.0.7:8000 key sk-secret",
    ));
    let r = send(
        &state_with(config(), Some(failing)),
        post_json("/v1/ask", &json!({"question": "q"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_GATEWAY);
    assert_eq!(r.error_code(), "upstream_error");
    assert!(!r.text().contains("sk-secret") && !r.text().contains("10.0.0.7"));

    let mut broken = StaticAnswerer::demo();
    broken.failure = Some(AnswerError::new(
        AnswerErrorKind::Internal,
        "internal",
        "index segment /var/lib/x corrupt",
    ));
    let r = send(
        &state_with(config(), Some(broken)),
        post_json("/v1/ask", &json!({"question": "q"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(r.error_code(), "internal");
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(!message.contains("/var/lib"), "{message}");
    let id = r.header("x-request-id").unwrap();
    assert!(
        message.contains(id),
        "the message names the request id: {message}"
    );

    let mut bad = StaticAnswerer::demo();
    bad.failure = Some(AnswerError::new(
        AnswerErrorKind::BadRequest,
        "bad_request",
        "question too long",
    ));
    let r = send(
        &state_with(config(), Some(bad)),
        post_json("/v1/ask", &json!({"question": "q"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text().contains("question too long"));
}

#[tokio::test]
async fn a_slow_answer_is_504_timeout() {
    let mut slow = StaticAnswerer::demo();
    slow.answer_delay = Duration::from_secs(5);
    let state = state_with(
        ServerConfig {
            timeout: Duration::from_millis(100),
            ..config()
        },
        Some(slow),
    );
    let started = std::time::Instant::now();
    let r = send(&state, post_json("/v1/ask", &json!({"question": "q"}))).await;
    assert_eq!(r.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(r.error_code(), "timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
    // A local model with one regeneration can outlast the default:
    // the error says which setting to raise.
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("GROUNDCITE_TIMEOUT_SECS"), "{message}");
}

/// Splits an SSE body into (event, data) pairs.
fn sse_events(body: &str) -> Vec<(String, serde_json::Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = Some(e.trim().to_string());
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            Some((event?, serde_json::from_str(&data).ok()?))
        })
        .collect()
}

#[tokio::test]
async fn ask_stream_sends_sentences_then_the_final_report() {
    let state = demo_state();
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?", "stream": true}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = sse_events(&r.text());
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        names,
        [
            "sentence", "sentence", "sentence", "sentence", "sentence", "final"
        ]
    );
    assert_eq!(events[1].1["verdict"], "contradicted");
    assert_eq!(events[1].1["citations"], json!([2]));
    assert_eq!(events[5].1["status"], "ok");
    assert_eq!(events[5].1["counts"]["sentences"], 5);
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(
        metric(&text, "groundcite_answers_total{status=\"ok\"}"),
        Some(1.0)
    );
}

#[tokio::test]
async fn ask_stream_failures_end_with_an_error_event() {
    let mut failing = StaticAnswerer::demo();
    failing.failure = Some(AnswerError::new(
        AnswerErrorKind::Upstream,
        "generation",
        "boom",
    ));
    let r = send(
        &state_with(config(), Some(failing)),
        post_json("/v1/ask", &json!({"question": "q", "stream": true})),
    )
    .await;
    let events = sse_events(&r.text());
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "error");
    assert_eq!(events[0].1["error"]["code"], "upstream_error");
    assert_eq!(events[0].1["error"]["type"], "upstream");

    let mut slow = StaticAnswerer::demo();
    slow.sentence_delay = Duration::from_millis(80);
    let state = state_with(
        ServerConfig {
            timeout: Duration::from_millis(200),
            ..config()
        },
        Some(slow),
    );
    let r = send(
        &state,
        post_json("/v1/ask", &json!({"question": "q", "stream": true})),
    )
    .await;
    let events = sse_events(&r.text());
    let (last, data) = events.last().unwrap();
    assert_eq!(last, "error");
    assert_eq!(data["error"]["code"], "timeout");
    assert!(
        events.len() >= 2,
        "some sentences arrived first: {events:?}"
    );
}

// ------------------------------------------------------------ /v1/search

#[tokio::test]
async fn search_returns_hits_and_validates_its_query() {
    let state = demo_state();
    let r = send(&state, get("/v1/search?q=reimbursement%20days&k=2")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["k"], 2);
    assert_eq!(v["hits"].as_array().unwrap().len(), 2);
    assert_eq!(v["hits"][0]["id"], "expenses.md#L9-L14");

    assert_eq!(
        send(&state, get("/v1/search")).await.error_code(),
        "invalid_query"
    );
    assert_eq!(
        send(&state, get("/v1/search?q=x&k=abc")).await.error_code(),
        "invalid_query"
    );
    assert_eq!(
        send(&state, get("/v1/search?q=%20")).await.error_code(),
        "empty_query"
    );
    assert_eq!(
        send(&state, get("/v1/search?q=x&k=0")).await.error_code(),
        "invalid_parameter"
    );
    let r = send(&state_with(config(), None), get("/v1/search?q=x")).await;
    assert_eq!(r.error_code(), "not_ready");
}

// ------------------------------------------------------------ /v1/ingest

/// Ingest is a CLI step (a single index writer): there is no route for it,
/// and the document does not list one.
#[tokio::test]
async fn there_is_no_ingest_route() {
    let r = send(
        &demo_state(),
        post_json("/v1/ingest", &json!({"path": "docs"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "not_found");
}

// ------------------------------------------------------------ auth

fn keyed() -> groundcite_server::AppState {
    let config = ServerConfig::default()
        .with_env(|k| match k {
            "GROUNDCITE_API_KEY" => Some("s3cret-key".into()),
            "GROUNDCITE_AUDIT_PATH" => Some("off".into()),
            _ => None,
        })
        .unwrap();
    state_with(config, Some(StaticAnswerer::demo()))
}

fn with_auth(mut req: Request<Body>, value: &str) -> Request<Body> {
    req.headers_mut()
        .insert("authorization", value.parse().unwrap());
    req
}

#[tokio::test]
async fn without_a_key_configured_no_auth_is_needed() {
    let r = send(&demo_state(), post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = send(&demo_state(), get("/metrics")).await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn with_a_key_v1_and_metrics_need_the_bearer_token() {
    let state = keyed();
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.error_code(), "missing_api_key");
    assert!(r.header("www-authenticate").unwrap().starts_with("Bearer"));

    for wrong in [
        "Bearer nope",
        "Bearer s3cret-ke",
        "Basic czNjcmV0LWtleQ==",
        "s3cret-key",
    ] {
        let r = send(
            &state,
            with_auth(post_json("/v1/check", &contradicted_check()), wrong),
        )
        .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{wrong}");
        assert_eq!(r.error_code(), "invalid_api_key", "{wrong}");
    }
    let r = send(
        &state,
        with_auth(
            post_json("/v1/check", &contradicted_check()),
            "Bearer s3cret-key",
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);

    for uri in ["/metrics", "/v1/search?q=x"] {
        assert_eq!(
            send(&state, get(uri)).await.error_code(),
            "missing_api_key",
            "{uri}"
        );
    }
    let r = send(&state, with_auth(get("/metrics"), "Bearer s3cret-key")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        metric(
            &r.text(),
            "groundcite_http_errors_total{code=\"missing_api_key\"}"
        )
        .unwrap()
            >= 3.0
    );
    assert!(
        metric(
            &r.text(),
            "groundcite_http_errors_total{code=\"invalid_api_key\"}"
        )
        .unwrap()
            >= 4.0
    );

    // The page, health and the API description stay open.
    for uri in ["/", "/healthz", "/readyz", "/openapi.json"] {
        assert_eq!(send(&state, get(uri)).await.status, StatusCode::OK, "{uri}");
    }
}

// ------------------------------------------------------------ CORS

#[tokio::test]
async fn cors_is_off_by_default_and_follows_the_allowed_origins() {
    let preflight = || {
        Request::builder()
            .method("OPTIONS")
            .uri("/v1/check")
            .header("origin", "https://app.example")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type,authorization",
            )
            .body(Body::empty())
            .unwrap()
    };
    let r = send(&demo_state(), preflight()).await;
    assert!(r.header("access-control-allow-origin").is_none());

    let state = state_with(
        ServerConfig {
            cors_origins: vec!["https://app.example".into()],
            ..config()
        },
        Some(StaticAnswerer::demo()),
    );
    let r = send(&state, preflight()).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let mut req = post_json("/v1/check", &contradicted_check());
    req.headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    let r = send(&state, req).await;
    assert!(r.header("access-control-allow-origin").is_none());
}

// ------------------------------------------------------------ page, OpenAPI

#[tokio::test]
async fn the_page_is_served_with_a_strict_policy() {
    let r = send(&demo_state(), get("/")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'sha256-"),
        "{csp}"
    );
    let html = r.text();
    assert!(html.contains("aria-live=\"polite\""));
    assert!(
        !html.contains(".innerHTML"),
        "the page never uses innerHTML"
    );
    assert!(
        !html.contains("id=\"corpus\""),
        "no corpus configured, none named"
    );
}

/// The configured words (`[page]`) reach the page: title,
/// corpus, placeholder, example questions; the script's hash still holds.
#[tokio::test]
async fn the_page_shows_the_configured_corpus_and_example_questions() {
    let mut config = config();
    config.page = groundcite_engine::PageSettings {
        title: "TTS handbook".into(),
        corpus: "18F/TTS handbook".into(),
        placeholder: "Ask about leave, travel or hiring".into(),
        examples: vec![
            "How do I request leave?".into(),
            "Who approves travel?".into(),
        ],
    };
    let state = state_with(config, Some(StaticAnswerer::demo()));
    let r = send(&state, get("/")).await;
    let html = r.text();
    assert!(html.contains("<title>TTS handbook</title>"));
    assert!(html.contains("Searching <strong>18F/TTS handbook</strong>"));
    assert!(html.contains("placeholder=\"Ask about leave, travel or hiring\""));
    assert!(
        html.contains("<button type=\"button\" class=\"example\">Who approves travel?</button>")
    );
    assert_eq!(
        r.header("content-security-policy").unwrap(),
        send(&demo_state(), get("/"))
            .await
            .header("content-security-policy")
            .unwrap(),
        "the words are not in the script: one hash"
    );
}

fn resolve_refs(doc: &serde_json::Value, node: &serde_json::Value, missing: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(|r| r.as_str())
                && doc.pointer(r.trim_start_matches('#')).is_none()
            {
                missing.push(r.to_string());
            }
            map.values().for_each(|v| resolve_refs(doc, v, missing));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| resolve_refs(doc, v, missing)),
        _ => {}
    }
}

/// Every (path, method) the document lists, from the served document.
fn documented_operations(doc: &serde_json::Value) -> Vec<(String, String)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if METHODS.contains(&method.as_str()) {
                ops.push((path.clone(), method.clone()));
            }
        }
    }
    ops.sort();
    ops
}

const METHODS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];

fn request(method: &str, path: &str) -> Request<Body> {
    let mut req = if method == "post" {
        post_json(path, &json!({}))
    } else {
        get(path)
    };
    *req.method_mut() = method.to_uppercase().parse().unwrap();
    req
}

/// The document is derived from the handlers: `app()` and the document
/// are both built from `groundcite_server::api_routes()`, so a route is
/// added with its operation or not at all. This checks the result against
/// the router as served: every operation listed answers (not the
/// fallback's 404, not a 405), every other method on a listed path is 405
/// (the router has no operation the document lacks there), and the routes
/// that were dropped (`/v1/ingest`) are gone from both.
#[tokio::test]
async fn openapi_lists_exactly_the_routes_the_router_serves() {
    let r = send(&demo_state(), get("/openapi.json")).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.json();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let ops = documented_operations(&doc);
    let expected: Vec<(String, String)> = [
        ("/", "get"),
        ("/healthz", "get"),
        ("/metrics", "get"),
        ("/openapi.json", "get"),
        ("/readyz", "get"),
        ("/v1/ask", "post"),
        ("/v1/check", "post"),
        ("/v1/prompt", "post"),
        ("/v1/search", "get"),
    ]
    .iter()
    .map(|(p, m)| (p.to_string(), m.to_string()))
    .collect();
    assert_eq!(ops, expected);
    for (path, method) in &ops {
        let op = &doc["paths"][path][method];
        assert!(op["operationId"].is_string(), "{method} {path}");
        assert!(
            op["responses"].as_object().is_some_and(|r| !r.is_empty()),
            "{method} {path}"
        );
        let r = send(&demo_state(), request(method, path)).await;
        assert_ne!(
            r.status,
            StatusCode::NOT_FOUND,
            "{method} {path} is not served"
        );
        assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        for other in ["get", "post", "put", "delete", "patch"] {
            if ops.iter().any(|(p, m)| p == path && m == other) {
                continue;
            }
            let r = send(&demo_state(), request(other, path)).await;
            assert_eq!(
                r.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{other} {path} is served but not documented"
            );
        }
    }
    for gone in ["/v1/ingest", "/v1", "/v1/", "/openapi.yaml"] {
        let r = send(&demo_state(), request("post", gone)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{gone}");
        let r = send(&demo_state(), get(gone)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{gone}");
    }
    // The protected operations say so.
    for path in [
        "/v1/ask",
        "/v1/check",
        "/v1/prompt",
        "/v1/search",
        "/metrics",
    ] {
        let item = doc["paths"][path].as_object().unwrap();
        let op = item.values().next().unwrap();
        assert!(op["security"].is_array(), "{path}");
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );

    let mut missing = Vec::new();
    resolve_refs(&doc, &doc, &mut missing);
    assert!(missing.is_empty(), "unresolved $refs: {missing:?}");
    let codes: Vec<&str> = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", doc["components"]["schemas"]))
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for row in groundcite_server::ErrorCode::TABLE {
        assert!(codes.contains(&row.name), "{} not in the schema", row.name);
        assert!(
            doc["info"]["description"]
                .as_str()
                .unwrap()
                .contains(&format!("`{}`", row.name))
        );
    }
    assert!(!codes.contains(&"ingest_not_supported"));
}

/// The schemas are the serialized types: the fields of a served answer
/// and of its sentences are the properties the document lists.
#[tokio::test]
async fn openapi_schemas_match_the_json_served() {
    let state = demo_state();
    let doc = send(&state, get("/openapi.json")).await.json();
    let schemas = &doc["components"]["schemas"];
    // All the properties of a schema, through `allOf` (flattened fields).
    fn properties(schemas: &serde_json::Value, schema: &serde_json::Value, out: &mut Vec<String>) {
        if let Some(r) = schema["$ref"].as_str() {
            let name = r.rsplit('/').next().unwrap();
            return properties(schemas, &schemas[name], out);
        }
        if let Some(props) = schema["properties"].as_object() {
            out.extend(props.keys().cloned());
        }
        for part in schema["allOf"].as_array().into_iter().flatten() {
            properties(schemas, part, out);
        }
    }
    let answer = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?"}),
        ),
    )
    .await
    .json();
    let mut listed = Vec::new();
    properties(schemas, &schemas["AskResult"], &mut listed);
    for key in answer.as_object().unwrap().keys() {
        assert!(listed.contains(key), "AskResult lacks {key}: {listed:?}");
    }
    let mut listed = Vec::new();
    properties(schemas, &schemas["SentenceOut"], &mut listed);
    for sentence in answer["sentences"].as_array().unwrap() {
        for key in sentence.as_object().unwrap().keys() {
            assert!(listed.contains(key), "SentenceOut lacks {key}");
        }
    }
    assert!(listed.contains(&"markers".to_string()));
    let check = send(&state, post_json("/v1/check", &contradicted_check()))
        .await
        .json();
    let mut listed = Vec::new();
    properties(schemas, &schemas["CheckOutput"], &mut listed);
    for key in check.as_object().unwrap().keys() {
        assert!(listed.contains(key), "CheckOutput lacks {key}");
    }
}

// ------------------------------------------------------------ metrics

/// Requests are counted by matched route template (never the raw path) and
/// status, their duration, and the build.
#[tokio::test]
async fn metrics_count_requests_by_route_template_and_status() {
    let state = demo_state();
    assert_eq!(
        send(&state, post_json("/v1/check", &contradicted_check()))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        send(&state, get("/v1/search?q=")).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        send(&state, get("/v1/search?q=%20")).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        send(&state, get("/no/such/page-42")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&state, get("/v1/check")).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    send(&state, get("/healthz")).await;
    let text = send(&state, get("/metrics")).await.text();
    for line in [
        "groundcite_http_requests_total{route=\"/v1/check\",status=\"200\"} 1",
        "groundcite_http_requests_total{route=\"/v1/search\",status=\"400\"} 2",
        "groundcite_http_requests_total{route=\"unmatched\",status=\"404\"} 1",
        "groundcite_http_requests_total{route=\"/v1/check\",status=\"405\"} 1",
        "groundcite_http_requests_total{route=\"/healthz\",status=\"200\"} 1",
        "groundcite_http_request_duration_seconds_count{route=\"/v1/check\"} 2",
        "groundcite_http_request_duration_seconds_count{route=\"/v1/search\"} 2",
        "# TYPE groundcite_http_request_duration_seconds histogram",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(!text.contains("page-42"), "a raw path became a label");
    assert!(
        text.contains(
            "groundcite_http_request_duration_seconds_bucket{route=\"/v1/check\",le=\"0.0001\"}"
        ),
        "explicit buckets: {text}"
    );
    let build = format!(
        "groundcite_build_info{{version=\"{}\",profile=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    assert!(text.contains(&build), "{build} in\n{text}");
}

/// A `javascript:` source url sent to /v1/check never
/// comes back as a link.
#[tokio::test]
async fn unsafe_source_urls_never_leave_the_api() {
    let state = demo_state();
    let mut body = contradicted_check();
    for p in body["passages"].as_array_mut().unwrap() {
        p["source_url"] = json!("javascript:alert(document.cookie)");
    }
    let r = send(&state, post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    let sources = r.json()["sources"].clone();
    assert!(!sources.as_array().unwrap().is_empty(), "{sources}");
    assert!(!sources.to_string().contains("javascript"), "{sources}");
}

/// Bearer auth: the scheme is case-insensitive (RFC
/// 9110), and a request with two `Authorization` headers is refused, not
/// judged by the first.
#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_and_duplicate_headers_are_refused() {
    let state = keyed();
    for ok in [
        "Bearer s3cret-key",
        "bearer s3cret-key",
        "BEARER s3cret-key",
        "bEaReR   s3cret-key",
    ] {
        let r = send(
            &state,
            with_auth(post_json("/v1/check", &contradicted_check()), ok),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{ok}");
    }
    let mut req = post_json("/v1/check", &contradicted_check());
    req.headers_mut()
        .append("authorization", "Bearer s3cret-key".parse().unwrap());
    req.headers_mut()
        .append("authorization", "Bearer something-else".parse().unwrap());
    let r = send(&state, req).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.error_code(), "invalid_api_key");
    assert!(
        r.text().contains("one Authorization header"),
        "{}",
        r.text()
    );
}

/// Passages whose urls are not safe links (`javascript:`, `data:`, other
/// schemes): the sources, the passages sent and the hits of every route
/// carry an empty url instead; safe urls pass unchanged.
#[tokio::test]
async fn every_route_empties_source_urls_that_are_not_safe_links() {
    use groundcite_core::Passage;
    let unsafe_urls = [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
    ];
    let passages: Vec<Passage> = unsafe_urls
        .iter()
        .enumerate()
        .map(|(i, url)| Passage {
            id: format!("p{i}"),
            text: format!("Reimbursements settle within {} days of approval.", 30 + i),
            source_url: url.to_string(),
            section: format!("Section {i}"),
            score: Some(0.9),
        })
        .chain(std::iter::once(Passage {
            id: "safe".into(),
            text: "Claims are filed within 60 days of the expense.".into(),
            source_url: "https://handbook.example/claims".into(),
            section: "Claims".into(),
            score: Some(0.8),
        }))
        .collect();
    let answer = "Reimbursements settle within 30 days of approval [1]. \
                  Reimbursements settle within 31 days of approval [2]. \
                  Reimbursements settle within 32 days of approval [3]. \
                  Claims are filed within 60 days of the expense [4].";
    let state = state_with(
        config(),
        Some(StaticAnswerer::new(passages.clone(), answer)),
    );
    let no_unsafe_url = |route: &str, body: &str| {
        for url in unsafe_urls {
            assert!(!body.contains(url), "{route} serves {url}: {body}");
        }
        assert!(
            body.contains("https://handbook.example/claims"),
            "{route} drops a safe url: {body}"
        );
    };

    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long do reimbursements take?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["passages"][0]["source_url"], "");
    assert!(!v["sources"].as_array().unwrap().is_empty());
    no_unsafe_url("/v1/ask", &r.text());

    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long do reimbursements take?", "stream": true}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    no_unsafe_url("/v1/ask (stream)", &r.text());

    let check = json!({"question": "q", "passages": passages, "answer": answer});
    let r = send(&state, post_json("/v1/check", &check)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert!(!v["sources"].as_array().unwrap().is_empty());
    no_unsafe_url("/v1/check", &r.text());

    let prompt = json!({"question": "How long?", "passages": passages});
    let r = send(&state, post_json("/v1/prompt", &prompt)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let v = r.json();
    assert_eq!(v["passages"][0]["source_url"], "");
    no_unsafe_url("/v1/prompt", &r.text());

    let r = send(&state, get("/v1/search?q=reimbursements+claims&k=10")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["hits"].as_array().unwrap().len(), 4);
    no_unsafe_url("/v1/search", &r.text());
}

/// A misspelt field is an error naming it, never silently ignored.
#[tokio::test]
async fn an_unknown_field_is_400_naming_it() {
    let state = demo_state();
    let bodies = [
        (
            "/v1/ask",
            json!({"question": "How long?", "topk": 3}),
            "topk",
        ),
        (
            "/v1/check",
            json!({"answer": "x [1].", "passages": [{"id": "a", "text": "t"}], "strict": true}),
            "strict",
        ),
        (
            "/v1/prompt",
            json!({"question": "q", "passages": [], "refusal": "x"}),
            "refusal",
        ),
    ];
    for (route, body, field) in bodies {
        let r = send(&state, post_json(route, &body)).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{route}: {}", r.text());
        assert_eq!(r.error_code(), "invalid_body");
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(
            message.contains(&format!("unknown field `{field}`")),
            "{message}"
        );
    }
    // Passages may carry a retriever's own fields.
    let check = json!({
        "answer": "Reimbursements settle within 30 days [1].",
        "passages": [{"id": "a", "text": "Reimbursements settle within 30 days.", "metadata": {"page": 3}}]
    });
    let r = send(&state, post_json("/v1/check", &check)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

/// An over-long request target gets the JSON error envelope, not a bare
/// status.
#[tokio::test]
async fn an_over_long_url_is_414_in_the_error_shape() {
    let state = demo_state();
    let q = "a".repeat(groundcite_server::MAX_URI_BYTES);
    for uri in [format!("/v1/search?q={q}"), format!("/{q}")] {
        let r = send(&state, get(&uri)).await;
        assert_eq!(r.status, StatusCode::URI_TOO_LONG);
        assert_eq!(r.error_code(), "uri_too_long");
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    let q = "a".repeat(groundcite_server::MAX_URI_BYTES - 100);
    let r = send(&state, get(&format!("/v1/search?q={q}"))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}
