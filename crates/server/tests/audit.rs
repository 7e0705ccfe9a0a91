//! The audit log: one record per answer, written off the request path,
//! read back as the incident log; failures are counted, never blocking.

mod common;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use common::*;
use groundcite_audit::{AuditPolicy, export_incidents_jsonl, export_jsonl, incidents};
use groundcite_engine::audit::open_reader;
use groundcite_server::fake::StaticAnswerer;
use groundcite_server::{AuditConfig, IncidentFilter, ServerConfig};
use serde_json::json;

fn audited(path: &std::path::Path, checks: bool) -> groundcite_server::AppState {
    let config = ServerConfig {
        audit: AuditConfig {
            checks,
            ..AuditConfig::at(path)
        },
        ..config()
    };
    state_with(config, Some(StaticAnswerer::demo()))
}

#[tokio::test]
async fn every_answer_is_one_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/audit.sqlite");
    let state = audited(&path, true);

    let mut ids = Vec::new();
    for q in [
        "How long does reimbursement take?",
        "When must claims be filed?",
        "Is furniture covered?",
    ] {
        let r = send(&state, post_json("/v1/ask", &json!({"question": q}))).await;
        assert_eq!(r.status, StatusCode::OK);
        ids.push(r.header("x-request-id").unwrap().to_string());
    }
    // A streamed answer is audited once, at its final event.
    let r = send(
        &state,
        post_json("/v1/ask", &json!({"question": "Streamed?", "stream": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    ids.push(r.header("x-request-id").unwrap().to_string());
    // Failed requests are not answers.
    let r = send(&state, post_json("/v1/ask", &json!({"question": ""}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    state.audit().flush();

    let records = audit_records(&path);
    assert_eq!(records.len(), 4, "{records:#?}");
    let first = &records[0];
    assert_eq!(first.kind, "ask");
    assert_eq!(first.request_id, ids[0]);
    assert_eq!(
        first.question.as_deref(),
        Some("How long does reimbursement take?")
    );
    assert_eq!(first.status, "ok");
    assert!(!first.grounded);
    assert!(first.regenerated);
    assert_eq!(first.contradicted, 1);
    assert_eq!(first.unsupported, 1);
    assert_eq!(first.uncited, 1);
    // Served after a regeneration that fixed its ids, it is not
    // recorded as unverified; the first attempt's [4] stays in `attempts`.
    assert!(first.bad_ids.is_empty(), "{:?}", first.bad_ids);
    assert!(!first.is_unverified());
    assert_eq!(
        first.passage_ids,
        ["expenses.md#L9-L14", "expenses.md#L3-L8", "help.md#L1-L6"]
    );
    let attempts = first.attempts.parse().unwrap();
    assert_eq!(attempts.as_array().unwrap().len(), 2);
    assert!(attempts[0]["raw"].as_str().unwrap().contains("[4]"));
    assert_eq!(attempts[0]["bad_ids"], json!([4]));
    assert!(first.timings.parse().unwrap()["total_ms"].is_number());
    let report = first.report.parse().unwrap();
    assert_eq!(report["question"], "How long does reimbursement take?");
    assert_eq!(report["sentences"].as_array().unwrap().len(), 5);
    assert!(
        first.ts.ends_with('Z') && first.ts.len() == 24,
        "{}",
        first.ts
    );

    let refusal = &records[2];
    assert_eq!(refusal.status, "no_evidence");
    assert_eq!(refusal.refusal.as_deref(), Some("gate"));
    assert!(refusal.passage_ids.is_empty());
    assert_eq!(records[3].request_id, ids[3]);
    assert_eq!(records[3].question.as_deref(), Some("Streamed?"));

    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(metric(&text, "groundcite_audit_records_total"), Some(4.0));
    state.audit().shutdown();
}

#[tokio::test]
async fn checks_are_audited_unless_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let on = dir.path().join("on.sqlite");
    let state = audited(&on, true);
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
    state.audit().flush();
    let records = audit_records(&on);
    assert_eq!(records.len(), 1);
    let rec = &records[0];
    assert_eq!(rec.kind, "check");
    assert_eq!(rec.contradicted, 1);
    assert_eq!(rec.passage_ids, ["hr-1", "hr-2", "hr-3"]);
    assert_eq!(
        rec.attempts.parse().unwrap()[0]["raw"],
        "Reimbursements settle in 14 days [2]."
    );
    assert_eq!(
        rec.report.as_str(),
        r.text(),
        "the report is stored exactly as served"
    );

    let off = dir.path().join("off.sqlite");
    let state = audited(&off, false);
    send(&state, post_json("/v1/check", &contradicted_check())).await;
    send(&state, post_json("/v1/ask", &json!({"question": "q"}))).await;
    state.audit().flush();
    let records = audit_records(&off);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].kind, "ask");
}

/// A large check (the most the limits let through, ~250 KB) is served in
/// full and stored as a summary under the record cap: its flags and
/// passages are kept, the report and the answer are not copied. With a
/// retention, the writer prunes what is over it.
#[tokio::test]
async fn a_large_record_is_stored_as_a_summary_and_the_log_is_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let first = ServerConfig {
        audit: AuditConfig {
            policy: AuditPolicy {
                max_age_days: None,
                max_bytes: Some(10_000),
                max_record_bytes: 64 * 1024,
            },
            ..AuditConfig::at(&path)
        },
        ..config()
    };
    let state = state_with(first, Some(StaticAnswerer::demo()));
    let mut body = contradicted_check();
    body["answer"] = json!("Reimbursements settle in 14 days [2]. ".repeat(4_000));
    let r = send(&state, post_json("/v1/check", &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.text().len() > 500_000,
        "served in full: {}",
        r.text().len()
    );
    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 1);
    let rec = &records[0];
    assert_eq!((rec.contradicted, rec.passage_ids.len()), (4_000, 3));
    let report = rec.report.parse().unwrap();
    assert_eq!(report["capped"]["report_bytes"], r.text().len());
    assert!(rec.stored_bytes() < 8 * 1024, "{}", rec.stored_bytes());
    // A writer prunes after its first write, then at most once a minute:
    // a second service, whose retention keeps one record's worth, removes
    // the older record on its first write. One record's worth, give or
    // take the digits of its measured timings (the same check can take
    // 9.8 ms or 10.2 ms); two records are twice that.
    drop(state);
    let second = ServerConfig {
        audit: AuditConfig {
            policy: AuditPolicy {
                max_age_days: None,
                max_bytes: Some(rec.stored_bytes() + 64),
                max_record_bytes: 64 * 1024,
            },
            ..AuditConfig::at(&path)
        },
        ..config()
    };
    let state = state_with(second, Some(StaticAnswerer::demo()));
    send(&state, post_json("/v1/check", &body)).await;
    state.audit().flush();
    let records = audit_records(&path);
    assert_eq!(records.len(), 1, "the older record went");
    assert!(records[0].id > rec.id);
}

#[tokio::test]
async fn the_incident_log_lists_unverified_and_unsupported_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = audited(&path, true);
    let clean = {
        let mut b = contradicted_check();
        b["answer"] = json!("Reimbursements settle within 30 days of approval [2].");
        b
    };
    let bad_ids = {
        let mut b = contradicted_check();
        b["answer"] = json!("Reimbursements settle within 30 days of approval [7].");
        b
    };
    for body in [&clean, &contradicted_check(), &bad_ids, &clean] {
        assert_eq!(
            send(&state, post_json("/v1/check", body)).await.status,
            StatusCode::OK
        );
    }
    state.audit().flush();
    let store = open_reader(&path).unwrap();
    let store = store.as_ref();

    let unverified = incidents(
        store,
        &IncidentFilter {
            unverified: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(unverified.len(), 1);
    assert_eq!(unverified[0].status, "unverified");
    assert_eq!(unverified[0].bad_ids, [7]);
    assert!(unverified[0].is_unverified());

    let unsupported = incidents(
        store,
        &IncidentFilter {
            unsupported: true,
            ..Default::default()
        },
    )
    .unwrap();
    // The contradicted check (14 days against 30), and the sentence whose only citation is
    // [7] (nothing valid supports it).
    assert_eq!(unsupported.len(), 2);
    assert_eq!(unsupported[0].unsupported, 1);
    assert_eq!(unsupported[1].contradicted, 1);
    assert!(unsupported.iter().all(|r| r.is_unsupported()));

    let all = incidents(store, &IncidentFilter::default()).unwrap();
    assert_eq!(all.len(), 2, "both kinds, newest first");
    assert!(all[0].id > all[1].id);
    let limited = incidents(
        store,
        &IncidentFilter {
            limit: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(limited.len(), 1);
    let asks = incidents(
        store,
        &IncidentFilter {
            kind: Some("ask".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(asks.is_empty());

    let mut out = Vec::new();
    let n = export_jsonl(store, &mut out).unwrap();
    assert_eq!(n, 4);
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["contradicted"], 1);
    assert_eq!(lines[0]["report"]["grounded"], true);

    let mut out = Vec::new();
    let n = export_incidents_jsonl(
        store,
        &IncidentFilter {
            unverified: true,
            ..Default::default()
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn an_answer_whose_record_cannot_be_written_is_refused_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the parent directory should be.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let path = blocker.join("audit.sqlite");
    let state = audited(&path, true);

    let started = Instant::now();
    for _ in 0..5 {
        let r = send(
            &state,
            post_json(
                "/v1/ask",
                &json!({"question": "How long does reimbursement take?"}),
            ),
        )
        .await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text());
        assert_eq!(r.error_code(), "audit_unavailable");
        assert_eq!(r.header("retry-after"), Some("1"));
        let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text());
        assert_eq!(r.error_code(), "audit_unavailable");
    }
    // Refused at once or within the wait each, never hanging.
    assert!(started.elapsed() < Duration::from_secs(5));
    state.audit().flush();
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(
        metric(
            &text,
            "groundcite_audit_write_failures_total{reason=\"open\"}"
        ),
        Some(10.0),
        "{text}"
    );
    assert_eq!(metric(&text, "groundcite_audit_refused_total"), Some(10.0));
    assert_eq!(metric(&text, "groundcite_audit_records_total"), Some(0.0));
    assert!(open_reader(&path).is_err());
}

/// A streamed answer whose record cannot commit ends with an `error`
/// event, never `final`.
#[tokio::test]
async fn a_streamed_answer_whose_record_cannot_be_written_ends_in_an_error_event() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let state = audited(&blocker.join("audit.sqlite"), true);
    let r = send(
        &state,
        post_json(
            "/v1/ask",
            &json!({"question": "How long does reimbursement take?", "stream": true}),
        ),
    )
    .await;
    let text = r.text();
    assert!(!text.contains("event: final"), "{text}");
    assert!(text.contains("event: error"), "{text}");
    assert!(text.contains("audit_unavailable"), "{text}");
}

#[tokio::test]
async fn without_a_commit_wait_answers_are_served_and_lost_records_counted() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let config = ServerConfig {
        audit: AuditConfig {
            commit_wait_ms: Some(0),
            ..AuditConfig::at(blocker.join("audit.sqlite"))
        },
        ..config()
    };
    let state = state_with(config, Some(StaticAnswerer::demo()));
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
    state.audit().flush();
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(
        metric(
            &text,
            "groundcite_audit_write_failures_total{reason=\"open\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(metric(&text, "groundcite_audit_refused_total"), Some(0.0));
}

/// A record withdrawn by a handler whose wait ran out is never written
/// afterwards: the log holds no record of an answer that was refused.
#[tokio::test]
async fn a_record_whose_wait_ran_out_is_withdrawn_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let config = ServerConfig {
        audit: AuditConfig {
            commit_wait_ms: Some(50),
            ..AuditConfig::at(&path)
        },
        ..config()
    };
    let state = state_with(config, Some(StaticAnswerer::demo()));
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK);
    // Hold the database's write lock: the writer is stuck on the first
    // record's batch (claimed, so that answer waits for its outcome) while
    // the second record queues and its wait runs out.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE;").unwrap();
    let st = state.clone();
    let first =
        tokio::spawn(async move { send(&st, post_json("/v1/check", &contradicted_check())).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text());
    assert_eq!(r.error_code(), "audit_unavailable");
    let refused_id = r.header("x-request-id").unwrap().to_string();
    conn.execute_batch("COMMIT;").unwrap();
    drop(conn);
    // The first was being written when its wait ran out: its write decides.
    let r = first.await.unwrap();
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let served_id = r.header("x-request-id").unwrap().to_string();
    state.audit().shutdown();
    let ids: Vec<String> = audit_records(&path)
        .into_iter()
        .map(|r| r.request_id)
        .collect();
    assert!(ids.contains(&served_id), "{ids:?}");
    assert!(!ids.contains(&refused_id), "{ids:?}");
}

#[tokio::test]
async fn a_write_failure_is_counted_and_the_writer_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = audited(&path, true);
    send(&state, post_json("/v1/check", &contradicted_check())).await;
    state.audit().flush();
    // Break the table under the writer: the next batch fails, is counted,
    // and the writer reopens (recreating the table) for the one after.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("DROP TABLE audit;").unwrap();
    }
    // The failed write refuses its answer; the next one is served.
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text());
    state.audit().flush();
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    state.audit().flush();
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(
        metric(
            &text,
            "groundcite_audit_write_failures_total{reason=\"write\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(audit_records(&path).len(), 1);
}

/// Audit evasion: the audit id is the server's, never
/// the client's `x-request-id`, and cannot be guessed from another
/// response; a replayed or pre-claimed client id never costs a record.
#[tokio::test]
async fn a_client_request_id_never_becomes_the_audit_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = audited(&path, true);
    let with_id = |mut request: axum::http::Request<axum::body::Body>, id: &str| {
        request
            .headers_mut()
            .insert("x-request-id", id.parse().unwrap());
        request
    };
    let mut served = Vec::new();
    for _ in 0..3 {
        let ask = post_json("/v1/ask", &json!({"question": "Is furniture covered?"}));
        let r = send(&state, with_id(ask, "replayed")).await;
        assert_eq!(r.status, StatusCode::OK);
        served.push(r.header("x-request-id").unwrap().to_string());
    }
    // An id "pre-claimed" from the shape of the ids seen so far: the first
    // one with another last digit (never that id itself).
    let (head, last) = served[0].split_at(served[0].len() - 1);
    let claimed = format!("{head}{}", if last == "0" { "1" } else { "0" });
    let r = send(
        &state,
        with_id(post_json("/v1/check", &contradicted_check()), &claimed),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    served.push(r.header("x-request-id").unwrap().to_string());
    let r = send(&state, post_json("/v1/check", &contradicted_check())).await;
    served.push(r.header("x-request-id").unwrap().to_string());
    state.audit().flush();

    for id in &served {
        assert!(id != "replayed" && id != &claimed, "{served:?}");
        assert!(
            id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "32 hex digits (48-bit time, 80 random bits): {id}"
        );
    }
    let records = audit_records(&path);
    let ids: Vec<&str> = records.iter().map(|r| r.request_id.as_str()).collect();
    assert_eq!(ids, served.iter().map(String::as_str).collect::<Vec<_>>());
    let clients: Vec<Option<&str>> = records
        .iter()
        .map(|r| r.client_request_id.as_deref())
        .collect();
    assert_eq!(
        clients,
        [
            Some("replayed"),
            Some("replayed"),
            Some("replayed"),
            Some(claimed.as_str()),
            None
        ]
    );
    let text = send(&state, get("/metrics")).await.text();
    assert_eq!(metric(&text, "groundcite_audit_records_total"), Some(5.0));
    state.audit().shutdown();
}
