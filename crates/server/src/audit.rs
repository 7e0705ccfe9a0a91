//! The service's audit log: every answer, in SQLite or PostgreSQL, written
//! off the request path.
//!
//! Each answer (and, unless turned off, each `POST /v1/check` report)
//! becomes one `AuditRecord`: the question, the ids of the passages sent,
//! the raw model output of every attempt, the full report, the status, the
//! timings, the request id and a timestamp. The parts live below the
//! service: `groundcite_engine::audit` builds the records from the typed
//! answers (`answer_record`, `check_record`, `failure_record`) and opens
//! the store the location names (`Stores`: a `postgres://` URL or a SQLite
//! file); `groundcite-audit` has the record, the stores, the readers and
//! the [`AuditLog`](groundcite_audit::AuditLog): the bounded queue, the writer thread, the batching,
//! the commit wait and the failure accounting. [`crate::AppState`] starts
//! the log with its [`Metrics`](crate::Metrics) as the writer's observer
//! (`groundcite_audit_write_failures_total{reason}`,
//! `groundcite_audit_records_total`, `groundcite_audit_late_total`,
//! `groundcite_audit_refused_total`). This module is what is HTTP about it.
//!
//! **Architecture invariant: no answer is served without its record.**
//! With a commit wait ([`AuditConfig::commit_wait_ms`](groundcite_audit::AuditConfig::commit_wait_ms), the default for
//! both stores) a handler hands its record to the queue and sends the
//! answer only once the writer acknowledges the record's commit
//! ([`AuditLog::record_and_wait`](groundcite_audit::AuditLog::record_and_wait)); when the record is not committed
//! within the wait (a full queue, a database that is down or slow, a
//! failed write) the answer is refused with 503 `audit_unavailable` and
//! `Retry-After` ([`unavailable`], [`RETRY_AFTER_SECS`]), and the record
//! is withdrawn so that it is never written later. With
//! `commit_wait_ms = 0` (fire and forget, an explicit choice) answers never
//! wait and a lost record is only counted.
//!
//! ## Audit ids
//!
//! A record's `request_id` is the server's id of the request (a 48-bit
//! millisecond time and 80 random bits, `groundcite_audit::new_request_id`,
//! the response's `x-request-id`): the client's own `x-request-id` is kept
//! in `client_request_id`, never used as an id, so a client cannot replay
//! or pre-claim an id to make records vanish. Both stores keep
//! `request_id` unique: a batch sent again never duplicates a record, and a
//! record that meets another one under its id (a conflict) is logged at
//! error level and counted as
//! `groundcite_audit_write_failures_total{reason="conflict"}`.
//!
//! The read side is `groundcite_engine::audit::open_reader` and the readers
//! of `groundcite-audit`, which `groundcite audit [--unverified]
//! [--unsupported] [--export FILE.jsonl]` calls.

use groundcite_audit::Unrecorded;

use crate::{ApiError, ErrorCode};

/// The `Retry-After` of an answer refused because its record did not
/// commit, in seconds: about when the writer next tries the database
/// (`groundcite_audit::REOPEN_INTERVAL`).
pub const RETRY_AFTER_SECS: &str = "1";

/// The 503 the client gets when its answer's record did not commit.
pub fn unavailable(why: Unrecorded, request_id: &str) -> ApiError {
    let why = match why {
        Unrecorded::Queue => "the audit queue is full",
        Unrecorded::Failed => "the audit database cannot be written",
        Unrecorded::Late => "the audit database did not commit in time",
    };
    ApiError::new(
        ErrorCode::AuditUnavailable,
        format!(
            "{why}: the answer was not served, because every answer served is recorded first (request id {request_id}); retry later"
        ),
    )
}
