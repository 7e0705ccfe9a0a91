//! The audit log's records of answers, and its stores by location.
//!
//! Each answer (and each check report the service audits) becomes one
//! [`AuditRecord`] of `groundcite-audit`: this module builds them from the
//! typed answers ([`answer_record`], [`check_record`], [`failure_record`]),
//! so the service and `groundcite ask` record an answer the same way.
//!
//! The configured location selects the store, as for the index: a
//! `postgres://` (or `postgresql://`) URL is the `audit` table of
//! PostgreSQL (`groundcite_pg::PgAuditStore`; migration `0003_audit`,
//! schema `groundcite`: run `groundcite db migrate` first), anything else
//! a SQLite file ([`SqliteAuditStore`]). [`Stores`] is the writer's opener
//! for both ([`start`] starts an [`AuditLog`] with it); [`open_reader`]
//! and [`open_writer`] open a log outside the writer, for
//! `groundcite audit`.

use std::path::Path;
use std::sync::Arc;

use groundcite_audit::{
    AuditConfig, AuditError, AuditLog, AuditObserver, AuditRecord, AuditStore, JsonText, Result,
    SqliteAuditStore, StoreOpener,
};
use groundcite_core::check::Counts;
use groundcite_core::{CheckOutput, Passage, RefusalForm};
use serde::Serialize;

use crate::{AskResult, Attempt};

/// The stores an audit location can name: PostgreSQL for a `postgres://`
/// URL, a SQLite file otherwise. The writer's [`StoreOpener`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Stores;

impl StoreOpener for Stores {
    fn open(&self, location: &Path) -> Result<Box<dyn AuditStore>> {
        Location::of(location).open()
    }

    fn display(&self, location: &Path) -> String {
        Location::of(location).display()
    }
}

/// Starts the audit log of `config` over [`Stores`] (off when
/// `config.path` is `None`), reporting to `observer`.
pub fn start(config: &AuditConfig, observer: Arc<dyn AuditObserver>) -> AuditLog {
    AuditLog::start(config, Stores, observer)
}

/// Where records go, from the configured location.
#[derive(Debug, Clone)]
enum Location {
    Sqlite(std::path::PathBuf),
    Postgres(String),
}

impl Location {
    fn of(path: &Path) -> Location {
        let text = path.to_string_lossy();
        if groundcite_pg::is_postgres_url(&text) {
            Location::Postgres(text.trim().to_string())
        } else {
            Location::Sqlite(path.to_path_buf())
        }
    }

    /// For logs: never a password.
    fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => groundcite_pg::redact_url(url),
        }
    }

    /// The store, for writing: a SQLite file is created when missing.
    fn open(&self) -> Result<Box<dyn AuditStore>> {
        Ok(match self {
            Location::Sqlite(path) => Box::new(SqliteAuditStore::open(path)?),
            // One writer thread: one connection, plus one for a retry.
            Location::Postgres(url) => pg_store(url, 2)?,
        })
    }
}

fn pg_store(url: &str, pool_size: usize) -> Result<Box<dyn AuditStore>> {
    let opts = groundcite_pg::PgOptions {
        pool_size,
        ..groundcite_pg::PgOptions::default()
    };
    Ok(Box::new(groundcite_pg::PgAuditStore::connect(url, opts)?))
}

/// The audit log at `path` (a SQLite file or a `postgres://` URL), for
/// reading: what `groundcite audit` lists and exports through.
pub fn open_reader(path: &Path) -> Result<Box<dyn AuditStore>> {
    Ok(match Location::of(path) {
        Location::Sqlite(path) => Box::new(SqliteAuditStore::open_read_only(&path)?),
        Location::Postgres(url) => pg_store(&url, 1)?,
    })
}

/// The audit log at `path`, for writing outside the service: what
/// `groundcite audit prune` removes records through. A SQLite file must
/// exist already.
pub fn open_writer(path: &Path) -> Result<Box<dyn AuditStore>> {
    match Location::of(path) {
        Location::Sqlite(file) if !file.exists() => Err(AuditError::Backend(
            format!(
                "no audit log at {} (it is written by `groundcite serve`)",
                file.display()
            )
            .into(),
        )),
        location => location.open(),
    }
}

/// The record of an answer, from the answer and its serialized bytes (the
/// response body, shared).
///
/// `bad_ids` are those of what was served; a refusal records the ids its
/// attempts cited. An answer served after a regeneration that fixed its
/// ids is not unverified: the first attempt's ids stay in
/// `attempts`, and `regenerated` says it happened.
pub fn answer_record(request_id: &str, answer: &AskResult, report: JsonText) -> AuditRecord {
    let mut bad_ids: Vec<u64> = if answer.refusal.is_some() {
        answer
            .attempts
            .iter()
            .flat_map(|a| &a.bad_ids)
            .copied()
            .collect()
    } else {
        answer.bad_ids.clone()
    };
    bad_ids.sort_unstable();
    bad_ids.dedup();
    AuditRecord {
        question: Some(answer.question.clone()),
        status: answer.status.as_str().to_string(),
        grounded: answer.grounded,
        refusal: answer
            .refusal
            .as_ref()
            .map(|r| r.reason.as_str().to_string()),
        regenerated: answer.regenerated,
        bad_ids,
        passage_ids: answer.passages.iter().map(|p| p.id.clone()).collect(),
        attempts: json_text(&answer.attempts),
        timings: json_text(&answer.timings),
        report,
        ..new_record(request_id, "ask", &answer.counts)
    }
}

/// The record of a checked answer (the service's `POST /v1/check`): the
/// checked answer is the one attempt.
pub fn check_record(
    request_id: &str,
    question: Option<&str>,
    passages: &[Passage],
    answer: &str,
    report: &CheckOutput,
    report_json: JsonText,
    check_ms: f64,
) -> AuditRecord {
    let attempt = Attempt {
        raw: answer.to_string(),
        bad_ids: report.bad_ids.clone(),
        error: None,
        finish_reason: None,
    };
    AuditRecord {
        question: question.map(str::to_string),
        status: report.status.as_str().to_string(),
        grounded: report.grounded,
        refusal: report.refusal.as_ref().map(|r| match r.form {
            RefusalForm::Sentence => "sentence".to_string(),
            RefusalForm::Sentinel => "sentinel".to_string(),
        }),
        bad_ids: report.bad_ids.clone(),
        passage_ids: passages.iter().map(|p| p.id.clone()).collect(),
        attempts: json_text(&[attempt]),
        timings: json_text(&serde_json::json!({"check_ms": check_ms})),
        report: report_json,
        ..new_record(request_id, "check", &report.counts)
    }
}

/// The record of a question whose model call failed or timed out: status
/// `error`, the error (`code`, the answerer's own stable code, and
/// `message`) in its one attempt and in `report`.
pub fn failure_record(request_id: &str, question: &str, code: &str, message: &str) -> AuditRecord {
    let attempt = Attempt {
        raw: String::new(),
        bad_ids: Vec::new(),
        error: Some(message.to_string()),
        finish_reason: None,
    };
    let report = serde_json::json!({
        "error": {"code": code, "message": message}
    });
    AuditRecord {
        question: Some(question.to_string()),
        status: "error".into(),
        attempts: json_text(&[attempt]),
        report: json_text(&report),
        ..new_record(request_id, "ask", &Counts::default())
    }
}

/// A record of `kind` for the request `request_id`, stamped now, with the
/// sentence counts of `counts` and nothing else recorded: no question,
/// status or passages, not grounded, no refusal or regeneration, no bad
/// ids, no attempts (`[]`), timings `{}` and report `{}`. The record
/// builders fill in the rest.
fn new_record(request_id: &str, kind: &str, counts: &Counts) -> AuditRecord {
    AuditRecord {
        id: 0,
        request_id: request_id.to_string(),
        client_request_id: None,
        ts: groundcite_audit::rfc3339(std::time::SystemTime::now()),
        kind: kind.to_string(),
        question: None,
        status: String::new(),
        grounded: false,
        refusal: None,
        regenerated: false,
        contradicted: counts.contradicted as u32,
        unsupported: counts.unsupported as u32,
        uncited: counts.uncited as u32,
        bad_ids: Vec::new(),
        passage_ids: Vec::new(),
        attempts: JsonText::new("[]"),
        timings: JsonText::new("{}"),
        report: JsonText::new("{}"),
    }
}

/// `value` as a record's JSON document. Plain data always serializes; an
/// empty object if it ever did not.
pub fn json_text<T: Serialize + ?Sized>(value: &T) -> JsonText {
    JsonText::to_json(value).unwrap_or_else(|_| JsonText::new("{}"))
}
