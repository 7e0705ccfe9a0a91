//! The audit log: every answer, in SQLite or PostgreSQL, written off the
//! request path.
//!
//! Each answer (and, unless turned off, each `POST /v1/check` report)
//! becomes one [`AuditRecord`] (crate `groundcite-audit`: the record, the
//! [`AuditStore`] trait, the SQLite store, the readers and the contract
//! suite): the question, the ids of the passages sent, the raw model
//! output of every attempt, the full report, the status, the timings, the
//! request id and a timestamp. This module builds the records from the
//! typed answers ([`answer_record`], [`check_record`]) and owns the queue
//! and the writer thread.
//!
//! **Architecture invariant: no answer is served without its record.**
//! With a commit wait ([`AuditConfig::commit_wait_ms`], the default for
//! both stores) a handler hands its record to a bounded queue with
//! `try_send` and sends the answer only once the writer acknowledges the
//! record's commit; when the record is not committed within the wait (a
//! full queue, a database that is down or slow, a failed write) the
//! answer is refused with 503 `audit_unavailable` and `Retry-After`, and
//! the record is withdrawn so that it is never written later (see
//! [`AuditLog::record_and_wait`]). One writer thread drains the queue in
//! batches (one transaction per batch); a failure is logged (tracing) and
//! counted (`groundcite_audit_write_failures_total{reason}`, and
//! `groundcite_audit_refused_total` for the answers refused). The writer
//! retries opening the database at most every [`REOPEN_INTERVAL`]. With
//! `commit_wait_ms = 0` (fire and forget, an explicit choice) answers never
//! wait and a lost record is only counted.
//!
//! ## Stores
//!
//! The configured location selects the store, as for the index: a
//! `postgres://` (or `postgresql://`) URL writes to the `audit` table of
//! PostgreSQL (`groundcite_pg::PgAuditStore`; migration `0003_audit`,
//! schema `groundcite`: run `groundcite db migrate` first), anything else
//! is a SQLite file (`groundcite_audit::SqliteAuditStore`). The writer
//! thread, the queue, the batching and the failure accounting are the same
//! for both: they see only the trait.
//!
//! ## Audit ids
//!
//! A record's `request_id` is the server's id of the request (a 48-bit
//! millisecond time and 80 random bits, [`crate::util::new_request_id`], the response's `x-request-id`):
//! the client's own `x-request-id` is kept in `client_request_id`, never
//! used as an id, so a client cannot replay or pre-claim an id to make
//! records vanish. Both stores keep `request_id` unique: a batch sent again
//! never duplicates a record, and a record that meets another one under
//! its id (a conflict) is logged at error level and counted as
//! `groundcite_audit_write_failures_total{reason="conflict"}`.
//!
//! ## Durability and the commit wait
//!
//! Records wait in memory until their batch commits: a process killed with
//! SIGKILL loses what is queued, which with the commit wait is only records
//! of answers not yet sent. With [`AuditConfig::commit_wait_ms`]
//! ([`DEFAULT_COMMIT_WAIT_MS`] unless set) an answer is sent only once its
//! record has committed: the writer does not linger while someone waits,
//! and every batch commits what queued while the previous one was in
//! flight (group commit), so the wait costs about one commit (~1–3 ms on
//! loopback). When the wait runs out first, the handler withdraws its
//! record (a shared state the writer checks before it writes: queued,
//! writing, withdrawn) and answers 503 `audit_unavailable` with
//! `Retry-After`; a record the writer is already writing cannot be
//! withdrawn, and its handler waits for that write's outcome (bounded by
//! the store's own retries and connect timeout). A write that fails tells
//! its handlers at once, so a database that is down costs a refusal, not
//! the wait. So every answer served has exactly one committed record; the
//! log can hold the record of a refused request only when a write failed
//! in doubt (the connection lost after the commit was sent, and every
//! retry failed) or a batch lost another record (a rejected or conflicting
//! one: its whole batch is then refused).
//!
//! The read side is [`open_reader`] and the readers of `groundcite-audit`
//! (re-exported here), which `groundcite audit [--unverified]
//! [--unsupported] [--export FILE.jsonl]` calls.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use groundcite_core::check::Counts;
use groundcite_core::{CheckOutput, Passage, RefusalForm};
use groundcite_engine::{AskResult, Attempt};
use serde::{Deserialize, Serialize};

use crate::answerer::AnswerError;
use crate::metrics::Metrics;

pub use groundcite_audit::{
    AuditError, AuditPolicy, AuditQuery, AuditRecord, AuditStore, IncidentFilter, JsonText, Pruned,
    Result, Retention, SqliteAuditStore, each_incident, export_incidents_jsonl, export_jsonl,
    incidents, list_all, write_incidents_json,
};
pub use groundcite_pg::is_postgres_url;

/// Where the audit database lives unless configured.
pub const DEFAULT_AUDIT_PATH: &str = "./.groundcite/audit.sqlite";
/// The writer retries opening a database that failed to open at most this
/// often (while it cannot, answers waiting for a commit are refused at once).
pub const REOPEN_INTERVAL: Duration = Duration::from_secs(1);
/// How long an answer waits for its record to commit, by default.
pub const DEFAULT_COMMIT_WAIT_MS: u64 = 250;
/// The `Retry-After` of an answer refused because its record did not
/// commit, in seconds: about when the writer next tries the database.
pub const RETRY_AFTER_SECS: &str = "1";

/// Audit configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditConfig {
    /// The SQLite file, or a `postgres://` URL; `None` turns auditing off.
    /// Default [`DEFAULT_AUDIT_PATH`]. The parent directory of a file is
    /// created.
    pub path: Option<PathBuf>,
    /// Records waiting to be written; beyond, records are dropped and
    /// counted. Default 8192.
    pub queue_capacity: usize,
    /// Most records written per transaction. Default 1024.
    pub batch: usize,
    /// How long the writer waits for more records before writing a batch,
    /// in milliseconds: records reach the database at most this much later,
    /// and one transaction carries many records. Default 20.
    pub linger_ms: u64,
    /// Audit `POST /v1/check` reports too (kind `check`). Default true.
    pub checks: bool,
    /// How long an answer waits for its record to commit before it is
    /// refused (503 `audit_unavailable`), in milliseconds; 0 never waits
    /// (fire and forget: answers are served whatever becomes of their
    /// records). Default (`None`): [`DEFAULT_COMMIT_WAIT_MS`]. See the module
    /// docs on durability.
    pub commit_wait_ms: Option<u64>,
    /// The per-record cap and the retention (`[audit]` in groundcite.toml):
    /// records over `max_record_bytes` are stored as summaries, and the
    /// writer applies `max_age_days` / `max_bytes` after a write, at most
    /// once every [`PRUNE_INTERVAL`].
    pub policy: AuditPolicy,
}

/// How often the writer applies the retention (only after writing: a log
/// that is not written does not grow).
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(60);

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: Some(PathBuf::from(DEFAULT_AUDIT_PATH)),
            queue_capacity: 8192,
            batch: 1024,
            linger_ms: 20,
            checks: true,
            commit_wait_ms: None,
            policy: AuditPolicy::default(),
        }
    }
}

impl AuditConfig {
    /// No audit log.
    pub fn off() -> AuditConfig {
        AuditConfig {
            path: None,
            ..AuditConfig::default()
        }
    }

    /// The commit wait in effect for this location (see
    /// [`AuditConfig::commit_wait_ms`]); zero when auditing is off.
    pub fn commit_wait(&self) -> Duration {
        match &self.path {
            None => Duration::ZERO,
            Some(_) => Duration::from_millis(self.commit_wait_ms.unwrap_or(DEFAULT_COMMIT_WAIT_MS)),
        }
    }

    /// An audit log at `path`, defaults otherwise.
    pub fn at(path: impl Into<PathBuf>) -> AuditConfig {
        AuditConfig {
            path: Some(path.into()),
            ..AuditConfig::default()
        }
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

/// The record of a `POST /v1/check`: the checked answer is the one attempt.
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

/// The record of an `/v1/ask` whose model call failed or timed out: status
/// `error`, the error in its one attempt and in `report`.
pub fn failure_record(request_id: &str, question: &str, error: &AnswerError) -> AuditRecord {
    let attempt = Attempt {
        raw: String::new(),
        bad_ids: Vec::new(),
        error: Some(error.message.clone()),
        finish_reason: None,
    };
    let report = serde_json::json!({
        "error": {"code": error.source_code, "message": error.message}
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
        ts: crate::util::now_rfc3339(),
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

/// Plain data always serializes; an empty object if it ever did not.
fn json_text<T: Serialize + ?Sized>(value: &T) -> JsonText {
    JsonText::to_json(value).unwrap_or_else(|_| JsonText::new("{}"))
}

/// Why an answer was not served: its record did not commit within the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrecorded {
    /// The queue was full or the writer stopped.
    Queue,
    /// The write failed (or the database could not be opened).
    Failed,
    /// The wait ran out; the record was withdrawn.
    Late,
}

impl Unrecorded {
    /// The 503 the client gets.
    pub fn into_api(self, request_id: &str) -> crate::ApiError {
        let why = match self {
            Unrecorded::Queue => "the audit queue is full",
            Unrecorded::Failed => "the audit database cannot be written",
            Unrecorded::Late => "the audit database did not commit in time",
        };
        crate::ApiError::new(
            crate::ErrorCode::AuditUnavailable,
            format!(
                "{why}: the answer was not served, because every answer served is recorded first (request id {request_id}); retry later"
            ),
        )
    }
}

/// A waited-for record's state, shared by its handler and the writer: the
/// writer moves it from queued to writing just before a write, and the
/// handler whose wait ran out from queued to withdrawn; whichever comes
/// first decides whether the record is written.
const QUEUED: u8 = 0;
const WRITING: u8 = 1;
const WITHDRAWN: u8 = 2;

/// The handler's side of a record it waits for.
struct Waiter {
    state: Arc<AtomicU8>,
    ack: tokio::sync::oneshot::Sender<bool>,
}

impl Waiter {
    /// Claims the record for a write; false when its handler withdrew it.
    fn claim(&self) -> bool {
        self.state
            .compare_exchange(QUEUED, WRITING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

enum Msg {
    Record(Box<AuditRecord>, Option<Waiter>),
    Flush(SyncSender<()>),
    Shutdown,
}

/// The write side: a handle to the writer thread. Cheap to clone.
#[derive(Clone)]
pub struct AuditLog {
    tx: Option<SyncSender<Msg>>,
    checks: bool,
    commit_wait: Duration,
    metrics: Metrics,
    writer: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("enabled", &self.tx.is_some())
            .field("checks", &self.checks)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// No auditing: records are discarded (and not counted as failures).
    pub fn disabled(metrics: Metrics) -> AuditLog {
        AuditLog {
            tx: None,
            checks: false,
            commit_wait: Duration::ZERO,
            metrics,
            writer: Arc::default(),
        }
    }

    /// Starts the writer thread. Never fails: a database that cannot be
    /// opened is logged and counted, and retried.
    pub fn start(config: &AuditConfig, metrics: Metrics) -> AuditLog {
        let Some(path) = config.path.clone() else {
            return AuditLog::disabled(metrics);
        };
        let location = Location::of(&path);
        let (tx, rx) = mpsc::sync_channel(config.queue_capacity.max(1));
        let batch = config.batch.max(1);
        let linger = Duration::from_millis(config.linger_ms);
        let thread_metrics = metrics.clone();
        let policy = config.policy.clone();
        let writer = std::thread::Builder::new()
            .name("groundcite-audit".into())
            .spawn(move || writer_loop(&location, rx, batch, linger, &policy, &thread_metrics));
        match writer {
            Ok(handle) => AuditLog {
                tx: Some(tx),
                checks: config.checks,
                commit_wait: config.commit_wait(),
                metrics,
                writer: Arc::new(Mutex::new(Some(handle))),
            },
            Err(err) => {
                tracing::error!(error = %err, "cannot start the audit writer thread; auditing is off");
                metrics.audit_failure("open", 1);
                AuditLog::disabled(metrics)
            }
        }
    }

    /// Is a writer running?
    pub fn is_enabled(&self) -> bool {
        self.tx.is_some()
    }

    /// Are check reports audited?
    pub fn audits_checks(&self) -> bool {
        self.tx.is_some() && self.checks
    }

    /// Queues one record. Never blocks: a full queue drops the record
    /// (logged, counted).
    pub fn record(&self, entry: AuditRecord) {
        self.send(entry, None);
    }

    /// How long a handler waits for its record to commit (zero: it does
    /// not wait). See [`AuditConfig::commit_wait_ms`].
    pub fn commit_wait(&self) -> Duration {
        self.commit_wait
    }

    /// Queues one record like [`AuditLog::record`] and, when a commit wait
    /// is configured, waits for its batch to commit: `Ok` once it has, and
    /// the caller may serve the answer; `Err` when it has not within the
    /// wait (the record is then withdrawn, never written later) or its
    /// write failed: the caller must not serve the answer (503, see
    /// [`Unrecorded::into_api`]). A record the writer is already writing
    /// when the wait runs out cannot be withdrawn: its outcome decides.
    /// Without a commit wait (or without an audit log) it never waits and
    /// is always `Ok`.
    pub async fn record_and_wait(&self, entry: AuditRecord) -> Result<(), Unrecorded> {
        if self.commit_wait.is_zero() || self.tx.is_none() {
            self.record(entry);
            return Ok(());
        }
        let (ack, mut ack_rx) = tokio::sync::oneshot::channel();
        let state = Arc::new(AtomicU8::new(QUEUED));
        let request_id = entry.request_id.clone();
        let waiter = Waiter {
            state: state.clone(),
            ack,
        };
        let outcome = if !self.send(entry, Some(waiter)) {
            Err(Unrecorded::Queue)
        } else {
            match tokio::time::timeout(self.commit_wait, &mut ack_rx).await {
                Ok(Ok(true)) => Ok(()),
                Ok(_) => Err(Unrecorded::Failed),
                Err(_) => {
                    self.metrics.audit_late();
                    let withdrawn = state
                        .compare_exchange(QUEUED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok();
                    if withdrawn {
                        Err(Unrecorded::Late)
                    } else {
                        // Being written: that write decides.
                        match ack_rx.await {
                            Ok(true) => Ok(()),
                            _ => Err(Unrecorded::Failed),
                        }
                    }
                }
            }
        };
        if let Err(why) = outcome {
            self.metrics.audit_refused();
            tracing::warn!(
                request_id,
                wait_ms = self.commit_wait.as_millis() as u64,
                reason = ?why,
                "audit record not committed: the answer is refused"
            );
        }
        outcome
    }

    fn send(&self, entry: AuditRecord, ack: Option<Waiter>) -> bool {
        let Some(tx) = &self.tx else { return false };
        match tx.try_send(Msg::Record(Box::new(entry), ack)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.metrics.audit_failure("queue_full", 1);
                tracing::warn!("audit queue full: record dropped");
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.metrics.audit_failure("write", 1);
                tracing::warn!("audit writer stopped: record dropped");
                false
            }
        }
    }

    /// Blocks until every record queued before the call is written (or
    /// counted as failed). For tests and shutdown; never on a request path.
    pub fn flush(&self) {
        let Some(tx) = &self.tx else { return };
        let (ack_tx, ack_rx) = mpsc::sync_channel(1);
        if tx.send(Msg::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.recv();
        }
    }

    /// Writes what is queued and stops the writer. Later records are
    /// dropped (counted). Idempotent.
    pub fn shutdown(&self) {
        let Some(tx) = &self.tx else { return };
        let handle = self.writer.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle {
            let _ = tx.send(Msg::Shutdown);
            let _ = handle.join();
        }
    }
}

/// Where records go, from the configured location.
#[derive(Debug, Clone)]
enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    fn of(path: &Path) -> Location {
        let text = path.to_string_lossy();
        if is_postgres_url(&text) {
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

fn writer_loop(
    location: &Location,
    rx: Receiver<Msg>,
    batch: usize,
    linger: Duration,
    policy: &AuditPolicy,
    metrics: &Metrics,
) {
    let mut store: Option<Box<dyn AuditStore>> = None;
    let mut last_attempt: Option<Instant> = None;
    let mut last_prune: Option<Instant> = None;
    let mut taken = Taken::new(batch, policy.max_record_bytes);
    loop {
        // Block only when idle; under load the queue is never empty here,
        // so senders never have to wake the writer.
        let Ok(first) = rx.recv() else { break };
        taken.take(first);
        taken.drain(&rx);
        // Linger so that one transaction carries many records: small
        // transactions cost several times more per record. Not when an
        // answer waits for its commit: then the batch is whatever queued
        // while the previous one was being written (group commit).
        if taken.records.len() < batch && !taken.awaited() && !taken.stop && !linger.is_zero() {
            std::thread::sleep(linger);
            taken.drain(&rx);
        }
        let mut ok = false;
        if !taken.records.is_empty() {
            if store.is_none() && last_attempt.is_none_or(|t| t.elapsed() >= REOPEN_INTERVAL) {
                last_attempt = Some(Instant::now());
                match location.open() {
                    Ok(s) => store = Some(s),
                    Err(err) => {
                        tracing::error!(location = %location.display(), error = %err, "cannot open the audit database");
                    }
                }
            }
            taken.claim();
        }
        if !taken.records.is_empty() {
            let n = taken.records.len() as u64;
            match store.as_mut() {
                None => metrics.audit_failure("open", n),
                Some(s) => match s.write(&taken.records) {
                    Ok(written) => {
                        metrics.audit_written(n - written.lost());
                        // A lost record cannot be told from the others of
                        // its batch: none of their answers is served.
                        ok = written.lost() == 0;
                        if written.rejected > 0 {
                            metrics.audit_failure("write", written.rejected);
                        }
                        if written.conflicts > 0 {
                            // Ids are the server's, 80 random bits each: a
                            // conflict means a broken generator or a forged
                            // record. Alert (the counter), never drop silently.
                            tracing::error!(
                                location = %location.display(),
                                records = written.conflicts,
                                "audit request id conflict: records not stored"
                            );
                            metrics.audit_failure("conflict", written.conflicts);
                        }
                        if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_INTERVAL) {
                            last_prune = Some(Instant::now());
                            prune(s.as_mut(), policy, location);
                        }
                    }
                    Err(err) => {
                        tracing::error!(location = %location.display(), error = %err, records = n, "audit write failed");
                        metrics.audit_failure("write", n);
                        // Reopen on the next batch: the file may have gone.
                        store = None;
                        last_attempt = None;
                    }
                },
            }
            taken.records.clear();
        }
        taken.acknowledge(ok);
        if taken.stop {
            break;
        }
    }
}

/// Applies the retention, if any; a failure is logged (the records stay,
/// and the next write tries again after the interval).
fn prune(store: &mut dyn AuditStore, policy: &AuditPolicy, location: &Location) {
    let Some(retention) = policy.retention(std::time::SystemTime::now()) else {
        return;
    };
    match store.prune(&retention) {
        Ok(p) if p.by_age + p.by_size > 0 => {
            tracing::info!(location = %location.display(), by_age = p.by_age, by_size = p.by_size, "audit records pruned");
        }
        Ok(_) => {}
        Err(err) => {
            tracing::error!(location = %location.display(), error = %err, "audit prune failed");
        }
    }
}

/// What the writer has taken from the queue for its next batch.
struct Taken {
    /// The records, each capped to `cap` bytes ([`AuditRecord::capped`]).
    records: Vec<AuditRecord>,
    /// Aligned with `records`: the handler waiting for each record, if any.
    waiters: Vec<Option<Waiter>>,
    /// The flushes waiting for the batch.
    acks: Vec<SyncSender<()>>,
    /// A shutdown was asked for: the batch is the last.
    stop: bool,
    /// Most records in a batch.
    batch: usize,
    /// The per-record cap ([`AuditPolicy::max_record_bytes`]).
    cap: usize,
}

impl Taken {
    fn new(batch: usize, cap: usize) -> Taken {
        Taken {
            records: Vec::with_capacity(batch),
            waiters: Vec::with_capacity(batch),
            acks: Vec::new(),
            stop: false,
            batch,
            cap,
        }
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Record(e, waiter) => {
                self.records.push(e.capped(self.cap));
                self.waiters.push(waiter);
            }
            Msg::Flush(ack) => self.acks.push(ack),
            Msg::Shutdown => self.stop = true,
        }
    }

    /// Takes what is queued, without waiting, until the batch is full or a
    /// shutdown is asked for.
    fn drain(&mut self, rx: &Receiver<Msg>) {
        while self.records.len() < self.batch && !self.stop {
            match rx.try_recv() {
                Ok(msg) => self.take(msg),
                Err(_) => break,
            }
        }
    }

    /// Does anyone wait for the batch (a handler or a flush)?
    fn awaited(&self) -> bool {
        !self.acks.is_empty() || self.waiters.iter().any(Option::is_some)
    }

    /// Claims every waited-for record for the write and leaves out those
    /// their handlers withdrew: from here a waited-for record is written
    /// (or failed), never withdrawn; a record withdrawn before is not
    /// written at all.
    fn claim(&mut self) {
        let mut kept = 0;
        for i in 0..self.records.len() {
            if self.waiters[i].as_ref().is_none_or(Waiter::claim) {
                self.records.swap(kept, i);
                self.waiters.swap(kept, i);
                kept += 1;
            }
        }
        self.records.truncate(kept);
        self.waiters.truncate(kept);
    }

    /// Tells every handler whether its record committed, and every flush
    /// that the batch is done.
    fn acknowledge(&mut self, committed: bool) {
        for w in self.waiters.drain(..).flatten() {
            let _ = w.ack.send(committed);
        }
        for ack in self.acks.drain(..) {
            let _ = ack.send(());
        }
    }
}
