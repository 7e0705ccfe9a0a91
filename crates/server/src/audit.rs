//! The audit log: every answer, in SQLite or PostgreSQL, written off the
//! request path.
//!
//! Each answer (and, unless turned off, each `POST /v1/check` report)
//! becomes one row: the question, the ids of the passages sent, the raw
//! model output of every attempt, the full report, the status, the timings,
//! the request id and a timestamp.
//!
//! **Architecture invariant**: auditing never blocks or fails an answer.
//! Handlers hand an [`AuditEntry`] to a bounded queue with `try_send`; one
//! writer thread drains it in batches (one transaction per batch). A full
//! queue, a database that cannot be opened, or a failed write is logged
//! (tracing) and counted (`groundcite_audit_write_failures_total{reason}`),
//! and the answer is served regardless. The writer retries opening the
//! database at most every [`REOPEN_INTERVAL`].
//!
//! ## Sinks
//!
//! The configured location selects the sink, as for the index: a
//! `postgres://` (or `postgresql://`) URL writes to the `audit` table of
//! PostgreSQL (migration `0003_audit` of `groundcite-pg`, schema
//! `groundcite`: run `groundcite db migrate` first), anything else is a
//! SQLite file. The writer thread, the queue, the batching and the failure
//! accounting are the same for both (the private `Sink` enum); only "open" and "write a
//! batch" differ. The PostgreSQL table has a unique `request_id` and batches
//! are inserted with `ON CONFLICT (request_id) DO NOTHING`, retried on
//! transient errors, so a retried batch never duplicates a record.
//!
//! ## Durability and the commit wait
//!
//! Records wait in memory until their batch commits: a process killed with
//! SIGKILL loses what is queued (at most [`AuditConfig::queue_capacity`]
//! records, in practice the few milliseconds of traffic since the last
//! commit). With [`AuditConfig::commit_wait_ms`] (the default for
//! PostgreSQL: [`DEFAULT_PG_COMMIT_WAIT_MS`]) an answer is sent only once its
//! record has committed *or* the wait has run out, whichever comes first:
//! the writer does not linger while someone waits, and every batch commits
//! what queued while the previous one was in flight (group commit), so the
//! wait costs about one commit (~1–3 ms on loopback) and a SIGKILL loses
//! only records of answers not yet sent (plus answers whose wait timed out,
//! logged). A database that is slow or down delays answers by at most the
//! wait, then they are served regardless: auditing never fails an answer.
//!
//! The read side ([`list_incidents`], [`export_jsonl`]) is what
//! `groundcite audit [--unverified] [--unsupported] [--export FILE.jsonl]`
//! calls.
//!
//! ## Schema
//!
//! PostgreSQL: `crates/pg/migrations/0003_audit.sql` (the same columns;
//! `bigint` identity `id`, unique `request_id`, `timestamptz`, `boolean`,
//! `jsonb` id lists, `json` documents kept verbatim). SQLite
//! (`PRAGMA user_version = 1`):
//!
//! ```sql
//! CREATE TABLE audit (
//!   id INTEGER PRIMARY KEY,      -- insertion order
//!   request_id TEXT NOT NULL,    -- the x-request-id of the HTTP request
//!   ts TEXT NOT NULL,            -- RFC 3339, UTC, milliseconds
//!   kind TEXT NOT NULL,          -- ask | check
//!   question TEXT,
//!   status TEXT NOT NULL,        -- ok | unverified | no_evidence
//!   grounded INTEGER NOT NULL,
//!   refusal TEXT,                -- refusal cause (gate | sentinel | validation), or the refusal form for checks
//!   regenerated INTEGER NOT NULL,
//!   contradicted INTEGER NOT NULL, unsupported INTEGER NOT NULL, uncited INTEGER NOT NULL,
//!   bad_ids TEXT NOT NULL,       -- JSON: ids never sent, cited by any attempt
//!   passage_ids TEXT NOT NULL,   -- JSON: ids of the passages sent, in order ([k] is k-1)
//!   attempts TEXT NOT NULL,      -- JSON: [{raw, bad_ids, error}] per generation attempt
//!   timings TEXT NOT NULL,       -- JSON: {retrieve_ms, generate_ms, check_ms, total_ms}
//!   report TEXT NOT NULL         -- JSON: the full answer object (ask) or check report (check)
//! );
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rusqlite::{Connection, OpenFlags, params};
use serde::{Deserialize, Serialize};

use crate::metrics::Metrics;

pub use groundcite_pg::is_postgres_url;

/// Where the audit database lives unless configured.
pub const DEFAULT_AUDIT_PATH: &str = "./.groundcite/audit.sqlite";
/// The writer retries opening a database that failed to open at most this often.
pub const REOPEN_INTERVAL: Duration = Duration::from_secs(5);
/// How long an answer waits for its record to commit, by default, when the
/// audit log is in PostgreSQL.
pub const DEFAULT_PG_COMMIT_WAIT_MS: u64 = 250;

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
    /// served anyway, in milliseconds; 0 never waits (fire and forget).
    /// Default (`None`): [`DEFAULT_PG_COMMIT_WAIT_MS`] for PostgreSQL, 0 for
    /// SQLite. See the module docs on durability.
    pub commit_wait_ms: Option<u64>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: Some(PathBuf::from(DEFAULT_AUDIT_PATH)),
            queue_capacity: 8192,
            batch: 1024,
            linger_ms: 20,
            checks: true,
            commit_wait_ms: None,
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
            Some(p) => Duration::from_millis(self.commit_wait_ms.unwrap_or(
                if is_postgres_url(&p.to_string_lossy()) {
                    DEFAULT_PG_COMMIT_WAIT_MS
                } else {
                    0
                },
            )),
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

/// Errors of the read side.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("audit database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("audit database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("audit record {id}: {source}")]
    Json { id: i64, source: serde_json::Error },
    #[error("writing the export: {0}")]
    Io(#[from] std::io::Error),
    #[error("audit database: {0}")]
    Postgres(#[from] groundcite_pg::Error),
}

pub type Result<T, E = AuditError> = std::result::Result<T, E>;

/// One record to write. Built by the handlers from the answer object or the
/// check report; the JSON columns are serialized on the request path once
/// (the report shares the response body's bytes).
#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub request_id: String,
    pub ts: String,
    pub kind: &'static str,
    pub question: Option<String>,
    pub status: String,
    pub grounded: bool,
    pub refusal: Option<String>,
    pub regenerated: bool,
    pub contradicted: u32,
    pub unsupported: u32,
    pub uncited: u32,
    pub bad_ids: Vec<u64>,
    pub passage_ids: Vec<String>,
    /// JSON array.
    pub attempts: String,
    /// JSON object.
    pub timings: String,
    /// JSON: the answer object or report, exactly as served.
    pub report: Bytes,
}

impl AuditEntry {
    /// From an answer object (`AskResult` JSON) and its serialized bytes.
    pub fn from_answer(request_id: &str, answer: &serde_json::Value, report: Bytes) -> AuditEntry {
        let str_of = |p: &str| {
            answer
                .pointer(p)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let count = |k: &str| {
            answer
                .pointer(&format!("/counts/{k}"))
                .and_then(|v| v.as_u64())
                .unwrap_or(0) as u32
        };
        let attempts = answer
            .get("attempts")
            .cloned()
            .unwrap_or(serde_json::Value::Array(Vec::new()));
        let mut bad_ids: Vec<u64> = attempts
            .as_array()
            .into_iter()
            .flatten()
            .chain(std::iter::once(answer))
            .filter_map(|a| a.get("bad_ids").and_then(|b| b.as_array()))
            .flatten()
            .filter_map(|id| id.as_u64())
            .collect();
        bad_ids.sort_unstable();
        bad_ids.dedup();
        AuditEntry {
            request_id: request_id.to_string(),
            ts: crate::util::now_rfc3339(),
            kind: "ask",
            question: str_of("/question"),
            status: str_of("/status").unwrap_or_else(|| "ok".into()),
            grounded: answer.get("grounded").and_then(|g| g.as_bool()) == Some(true),
            refusal: str_of("/refusal/reason"),
            regenerated: answer.get("regenerated").and_then(|g| g.as_bool()) == Some(true),
            contradicted: count("contradicted"),
            unsupported: count("unsupported"),
            uncited: count("uncited"),
            bad_ids,
            passage_ids: answer
                .get("passages")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("id").and_then(|i| i.as_str()).map(str::to_string))
                .collect(),
            attempts: attempts.to_string(),
            timings: answer
                .get("timings")
                .map_or_else(|| "{}".to_string(), |t| t.to_string()),
            report,
        }
    }

    /// From a `POST /v1/check` request and its report. The checked answer
    /// is the one attempt.
    pub fn from_check(
        request_id: &str,
        question: Option<&str>,
        passages: &[groundcite_core::Passage],
        answer: &str,
        report: &groundcite_core::CheckOutput,
        report_bytes: Bytes,
        check_ms: f64,
    ) -> AuditEntry {
        AuditEntry {
            request_id: request_id.to_string(),
            ts: crate::util::now_rfc3339(),
            kind: "check",
            question: question.map(str::to_string),
            status: report.status.as_str().to_string(),
            grounded: report.grounded,
            refusal: report.refusal.as_ref().map(|r| match r.form {
                groundcite_core::RefusalForm::Sentence => "sentence".to_string(),
                groundcite_core::RefusalForm::Sentinel => "sentinel".to_string(),
            }),
            regenerated: false,
            contradicted: report.counts.contradicted as u32,
            unsupported: report.counts.unsupported as u32,
            uncited: report.counts.uncited as u32,
            bad_ids: report.bad_ids.clone(),
            passage_ids: passages.iter().map(|p| p.id.clone()).collect(),
            attempts:
                serde_json::json!([{"raw": answer, "bad_ids": report.bad_ids, "error": null}])
                    .to_string(),
            timings: serde_json::json!({"check_ms": check_ms}).to_string(),
            report: report_bytes,
        }
    }
}

/// Resolves when a record's batch is written (`true`) or failed (`false`);
/// dropped unresolved when the record was dropped.
pub type Receipt = tokio::sync::oneshot::Receiver<bool>;

enum Msg {
    Record(Box<AuditEntry>, Option<tokio::sync::oneshot::Sender<bool>>),
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
        let writer = std::thread::Builder::new()
            .name("groundcite-audit".into())
            .spawn(move || writer_loop(&location, rx, batch, linger, &thread_metrics));
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
    pub fn record(&self, entry: AuditEntry) {
        self.send(entry, None);
    }

    /// How long a handler waits for its record to commit (zero: it does
    /// not wait). See [`AuditConfig::commit_wait_ms`].
    pub fn commit_wait(&self) -> Duration {
        self.commit_wait
    }

    /// Queues one record like [`AuditLog::record`] and, when a commit wait
    /// is configured, waits (at most that long) for its batch to be
    /// written. Never fails: a timeout or a failed write is logged (the
    /// failure is counted by the writer) and the caller goes on.
    pub async fn record_and_wait(&self, entry: AuditEntry) {
        if self.commit_wait.is_zero() {
            return self.record(entry);
        }
        let (ack_tx, ack_rx) = tokio::sync::oneshot::channel();
        let request_id = entry.request_id.clone();
        if !self.send(entry, Some(ack_tx)) {
            return;
        }
        match tokio::time::timeout(self.commit_wait, ack_rx).await {
            Ok(Ok(true)) => {}
            Ok(_) => {}
            Err(_) => {
                self.metrics.audit_late();
                tracing::warn!(
                    request_id,
                    wait_ms = self.commit_wait.as_millis() as u64,
                    "audit record not committed within the wait; answering anyway"
                );
            }
        }
    }

    fn send(&self, entry: AuditEntry, ack: Option<tokio::sync::oneshot::Sender<bool>>) -> bool {
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

    fn open(&self) -> Result<Sink> {
        Ok(match self {
            Location::Sqlite(path) => Sink::Sqlite(open_for_writing(path)?),
            Location::Postgres(url) => {
                Sink::Postgres(Box::new(groundcite_pg::PgAuditStore::connect(
                    url,
                    groundcite_pg::PgOptions {
                        // One writer thread: one connection, plus one for a retry.
                        pool_size: 2,
                        ..groundcite_pg::PgOptions::default()
                    },
                )?))
            }
        })
    }
}

/// The seam between the writer thread and a database: open once (retried),
/// then write batches. Each batch is one transaction.
enum Sink {
    Sqlite(Connection),
    Postgres(Box<groundcite_pg::PgAuditStore>),
}

impl Sink {
    /// Writes a batch; returns how many of its records were rejected (the
    /// others are stored). An error means none was stored and the sink
    /// should be reopened.
    fn write(&mut self, entries: &[AuditEntry]) -> Result<u64> {
        match self {
            Sink::Sqlite(conn) => write_batch(conn, entries).map(|()| 0),
            Sink::Postgres(store) => {
                let rows: Vec<groundcite_pg::AuditRow> = entries.iter().map(to_pg_row).collect();
                match store.insert(&rows) {
                    Ok(inserted) => {
                        if inserted < rows.len() as u64 {
                            tracing::debug!(
                                skipped = rows.len() as u64 - inserted,
                                "audit records already stored (a retried batch): skipped"
                            );
                        }
                        Ok(0)
                    }
                    // The database refused the statement (not the
                    // connection): one bad record must not take the batch
                    // with it, so write them one by one.
                    Err(groundcite_pg::Error::Db(message)) if rows.len() > 1 => {
                        tracing::warn!(error = %message, records = rows.len(), "audit batch refused: writing its records one by one");
                        let mut rejected = 0;
                        for row in &rows {
                            if let Err(err) = store.insert(std::slice::from_ref(row)) {
                                tracing::error!(request_id = %row.request_id, error = %err, "audit record refused");
                                rejected += 1;
                            }
                        }
                        Ok(rejected)
                    }
                    Err(err) => Err(err.into()),
                }
            }
        }
    }
}

fn to_pg_row(e: &AuditEntry) -> groundcite_pg::AuditRow {
    groundcite_pg::AuditRow {
        request_id: e.request_id.clone(),
        ts: e.ts.clone(),
        kind: e.kind.to_string(),
        question: e.question.clone(),
        status: e.status.clone(),
        grounded: e.grounded,
        refusal: e.refusal.clone(),
        regenerated: e.regenerated,
        contradicted: e.contradicted as i32,
        unsupported: e.unsupported as i32,
        uncited: e.uncited as i32,
        bad_ids: serde_json::to_string(&e.bad_ids).unwrap_or_else(|_| "[]".into()),
        passage_ids: serde_json::to_string(&e.passage_ids).unwrap_or_else(|_| "[]".into()),
        attempts: e.attempts.clone(),
        timings: e.timings.clone(),
        report: String::from_utf8_lossy(&e.report).into_owned(),
    }
}

type Ack = tokio::sync::oneshot::Sender<bool>;

fn writer_loop(
    location: &Location,
    rx: Receiver<Msg>,
    batch: usize,
    linger: Duration,
    metrics: &Metrics,
) {
    let mut sink: Option<Sink> = None;
    let mut last_attempt: Option<Instant> = None;
    let mut pending: Vec<AuditEntry> = Vec::with_capacity(batch);
    let mut waiters: Vec<Ack> = Vec::new();
    let mut acks: Vec<SyncSender<()>> = Vec::new();
    loop {
        // Block only when idle; under load the queue is never empty here,
        // so senders never have to wake the writer.
        let Ok(first) = rx.recv() else { break };
        let mut stop = false;
        take(first, &mut pending, &mut waiters, &mut acks, &mut stop);
        drain(&rx, batch, &mut pending, &mut waiters, &mut acks, &mut stop);
        // Linger so that one transaction carries many records: small
        // transactions cost several times more per record. Not when an
        // answer waits for its commit: then the batch is whatever queued
        // while the previous one was being written (group commit).
        if pending.len() < batch
            && acks.is_empty()
            && waiters.is_empty()
            && !stop
            && !linger.is_zero()
        {
            std::thread::sleep(linger);
            drain(&rx, batch, &mut pending, &mut waiters, &mut acks, &mut stop);
        }
        let mut ok = false;
        if !pending.is_empty() {
            if sink.is_none() && last_attempt.is_none_or(|t| t.elapsed() >= REOPEN_INTERVAL) {
                last_attempt = Some(Instant::now());
                match location.open() {
                    Ok(s) => sink = Some(s),
                    Err(err) => {
                        tracing::error!(location = %location.display(), error = %err, "cannot open the audit database");
                    }
                }
            }
            let n = pending.len() as u64;
            match sink.as_mut() {
                None => metrics.audit_failure("open", n),
                Some(s) => match s.write(&pending) {
                    Ok(rejected) => {
                        metrics.audit_written(n - rejected);
                        if rejected > 0 {
                            metrics.audit_failure("write", rejected);
                        }
                        ok = true;
                    }
                    Err(err) => {
                        tracing::error!(location = %location.display(), error = %err, records = n, "audit write failed");
                        metrics.audit_failure("write", n);
                        // Reopen on the next batch: the file may have gone.
                        sink = None;
                        last_attempt = None;
                    }
                },
            }
            pending.clear();
        }
        for w in waiters.drain(..) {
            let _ = w.send(ok);
        }
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
        if stop {
            break;
        }
    }
}

fn take(
    msg: Msg,
    pending: &mut Vec<AuditEntry>,
    waiters: &mut Vec<Ack>,
    acks: &mut Vec<SyncSender<()>>,
    stop: &mut bool,
) {
    match msg {
        Msg::Record(e, waiter) => {
            pending.push(*e);
            waiters.extend(waiter);
        }
        Msg::Flush(ack) => acks.push(ack),
        Msg::Shutdown => *stop = true,
    }
}

fn drain(
    rx: &Receiver<Msg>,
    batch: usize,
    pending: &mut Vec<AuditEntry>,
    waiters: &mut Vec<Ack>,
    acks: &mut Vec<SyncSender<()>>,
    stop: &mut bool,
) {
    while pending.len() < batch && !*stop {
        match rx.try_recv() {
            Ok(msg) => take(msg, pending, waiters, acks, stop),
            Err(_) => break,
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY,
  request_id TEXT NOT NULL,
  ts TEXT NOT NULL,
  kind TEXT NOT NULL,
  question TEXT,
  status TEXT NOT NULL,
  grounded INTEGER NOT NULL,
  refusal TEXT,
  regenerated INTEGER NOT NULL,
  contradicted INTEGER NOT NULL,
  unsupported INTEGER NOT NULL,
  uncited INTEGER NOT NULL,
  bad_ids TEXT NOT NULL,
  passage_ids TEXT NOT NULL,
  attempts TEXT NOT NULL,
  timings TEXT NOT NULL,
  report TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_status ON audit(status);
CREATE INDEX IF NOT EXISTS audit_flagged ON audit(contradicted, unsupported);
PRAGMA user_version = 1;
";

fn open_for_writing(path: &Path) -> Result<Connection> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let conn = Connection::open(path).map_err(|source| AuditError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // 16 KiB pages hold a typical record (2-4 KB of JSON) without overflow
    // chains, and checkpoints every 64 MiB of WAL keep fsyncs rare: together
    // about 4x cheaper per record than the defaults on this workload. The
    // page size only applies to a new database.
    conn.pragma_update(None, "page_size", 16384)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 4096)?;
    conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

fn write_batch(conn: &mut Connection, entries: &[AuditEntry]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO audit (request_id, ts, kind, question, status, grounded, refusal, regenerated,
               contradicted, unsupported, uncited, bad_ids, passage_ids, attempts, timings, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        )?;
        for e in entries {
            let report = String::from_utf8_lossy(&e.report);
            stmt.execute(params![
                e.request_id,
                e.ts,
                e.kind,
                e.question,
                e.status,
                e.grounded,
                e.refusal,
                e.regenerated,
                e.contradicted,
                e.unsupported,
                e.uncited,
                serde_json::to_string(&e.bad_ids).unwrap_or_else(|_| "[]".into()),
                serde_json::to_string(&e.passage_ids).unwrap_or_else(|_| "[]".into()),
                e.attempts,
                e.timings,
                report.as_ref(),
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// One audited answer, as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub id: i64,
    pub request_id: String,
    pub ts: String,
    /// `ask` or `check`.
    pub kind: String,
    pub question: Option<String>,
    pub status: String,
    pub grounded: bool,
    pub refusal: Option<String>,
    pub regenerated: bool,
    pub contradicted: u32,
    pub unsupported: u32,
    pub uncited: u32,
    pub bad_ids: Vec<u64>,
    pub passage_ids: Vec<String>,
    pub attempts: serde_json::Value,
    pub timings: serde_json::Value,
    pub report: serde_json::Value,
}

impl AuditRecord {
    /// Markers that did not resolve, in the served answer or any attempt,
    /// or a refusal because they kept failing.
    pub fn is_unverified(&self) -> bool {
        self.status == "unverified"
            || !self.bad_ids.is_empty()
            || self.refusal.as_deref() == Some("validation")
    }

    /// A contradicted or unsupported sentence.
    pub fn is_unsupported(&self) -> bool {
        self.contradicted + self.unsupported > 0
    }
}

/// Which incidents to list. Neither flag: every incident (either kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncidentFilter {
    /// Answers whose markers did not all resolve (status `unverified`, a
    /// regenerated attempt that cited ids never sent, or a refusal for that
    /// reason).
    pub unverified: bool,
    /// Answers with a contradicted or unsupported sentence.
    pub unsupported: bool,
    /// Only `ask` or `check` records.
    pub kind: Option<String>,
    /// At most this many, newest first; all when `None`.
    pub limit: Option<usize>,
}

const UNVERIFIED_SQL: &str = "(status = 'unverified' OR bad_ids != '[]' OR refusal = 'validation')";
const UNSUPPORTED_SQL: &str = "(contradicted + unsupported > 0)";
const COLUMNS: &str = "id, request_id, ts, kind, question, status, grounded, refusal, regenerated,
    contradicted, unsupported, uncited, bad_ids, passage_ids, attempts, timings, report";

/// Opens an audit database for reading.
pub fn open_read_only(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| AuditError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
}

/// The PostgreSQL audit store at `path` when it is a `postgres://` URL.
fn pg_store(path: &Path) -> Result<Option<groundcite_pg::PgAuditStore>> {
    let text = path.to_string_lossy();
    if !is_postgres_url(&text) {
        return Ok(None);
    }
    let opts = groundcite_pg::PgOptions {
        pool_size: 1,
        ..groundcite_pg::PgOptions::default()
    };
    Ok(Some(groundcite_pg::PgAuditStore::connect(&text, opts)?))
}

/// Rows read back from PostgreSQL become the same records as SQLite's.
fn from_pg_row(stored: groundcite_pg::StoredAuditRow) -> Result<AuditRecord> {
    let id = stored.id;
    let r = stored.row;
    let json = |text: &str| -> Result<serde_json::Value> {
        serde_json::from_str(text).map_err(|source| AuditError::Json { id, source })
    };
    let bad_ids: Vec<u64> =
        serde_json::from_str(&r.bad_ids).map_err(|source| AuditError::Json { id, source })?;
    let passage_ids: Vec<String> =
        serde_json::from_str(&r.passage_ids).map_err(|source| AuditError::Json { id, source })?;
    Ok(AuditRecord {
        id,
        attempts: json(&r.attempts)?,
        timings: json(&r.timings)?,
        report: json(&r.report)?,
        request_id: r.request_id,
        ts: r.ts,
        kind: r.kind,
        question: r.question,
        status: r.status,
        grounded: r.grounded,
        refusal: r.refusal,
        regenerated: r.regenerated,
        contradicted: r.contradicted.max(0) as u32,
        unsupported: r.unsupported.max(0) as u32,
        uncited: r.uncited.max(0) as u32,
        bad_ids,
        passage_ids,
    })
}

/// Rows read from PostgreSQL per round trip when exporting everything.
const PG_PAGE: usize = 1000;

/// Every record of a PostgreSQL audit log, oldest first, page by page.
fn pg_each(
    store: &groundcite_pg::PgAuditStore,
    mut f: impl FnMut(AuditRecord) -> Result<()>,
) -> Result<usize> {
    let mut after = None;
    let mut n = 0;
    loop {
        let page = store.list(&groundcite_pg::AuditQuery {
            after_id: after,
            limit: Some(PG_PAGE),
            ..groundcite_pg::AuditQuery::default()
        })?;
        let len = page.len();
        for row in page {
            after = Some(row.id);
            f(from_pg_row(row)?)?;
            n += 1;
        }
        if len < PG_PAGE {
            return Ok(n);
        }
    }
}

/// The incident log: unverified and/or unsupported answers, newest first.
/// `path` is a SQLite file or a `postgres://` URL.
pub fn list_incidents(path: &Path, filter: &IncidentFilter) -> Result<Vec<AuditRecord>> {
    if let Some(store) = pg_store(path)? {
        let rows = store.list(&groundcite_pg::AuditQuery {
            incidents: true,
            unverified: filter.unverified,
            unsupported: filter.unsupported,
            kind: filter.kind.clone(),
            after_id: None,
            newest_first: true,
            limit: filter.limit,
        })?;
        return rows.into_iter().map(from_pg_row).collect();
    }
    let conn = open_read_only(path)?;
    let which = match (filter.unverified, filter.unsupported) {
        (true, false) => UNVERIFIED_SQL.to_string(),
        (false, true) => UNSUPPORTED_SQL.to_string(),
        _ => format!("({UNVERIFIED_SQL} OR {UNSUPPORTED_SQL})"),
    };
    let kind = if filter.kind.is_some() {
        " AND kind = ?1"
    } else {
        ""
    };
    let limit = filter
        .limit
        .map_or_else(String::new, |n| format!(" LIMIT {n}"));
    let sql = format!("SELECT {COLUMNS} FROM audit WHERE {which}{kind} ORDER BY id DESC{limit}");
    let mut stmt = conn.prepare(&sql)?;
    let rows = match &filter.kind {
        Some(k) => stmt.query(params![k])?,
        None => stmt.query([])?,
    };
    collect(rows)
}

/// Every record, oldest first.
pub fn list_all(path: &Path) -> Result<Vec<AuditRecord>> {
    if let Some(store) = pg_store(path)? {
        let mut out = Vec::new();
        pg_each(&store, |r| {
            out.push(r);
            Ok(())
        })?;
        return Ok(out);
    }
    let conn = open_read_only(path)?;
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY id"))?;
    let rows = stmt.query([])?;
    collect(rows)
}

/// Writes every record as JSON lines, oldest first; returns how many.
pub fn export_jsonl(path: &Path, writer: impl Write) -> Result<usize> {
    if let Some(store) = pg_store(path)? {
        let mut out = std::io::BufWriter::new(writer);
        let n = pg_each(&store, |record| {
            serde_json::to_writer(&mut out, &record).map_err(|source| AuditError::Json {
                id: record.id,
                source,
            })?;
            out.write_all(b"\n")?;
            Ok(())
        })?;
        out.flush()?;
        return Ok(n);
    }
    let conn = open_read_only(path)?;
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY id"))?;
    let mut rows = stmt.query([])?;
    let mut out = std::io::BufWriter::new(writer);
    let mut n = 0;
    while let Some(row) = rows.next()? {
        let record = from_row(row)?;
        serde_json::to_writer(&mut out, &record).map_err(|source| AuditError::Json {
            id: record.id,
            source,
        })?;
        out.write_all(b"\n")?;
        n += 1;
    }
    out.flush()?;
    Ok(n)
}

/// Writes the incidents matching `filter` as JSON lines, newest first.
pub fn export_incidents_jsonl(
    path: &Path,
    filter: &IncidentFilter,
    writer: impl Write,
) -> Result<usize> {
    let records = list_incidents(path, filter)?;
    let mut out = std::io::BufWriter::new(writer);
    for record in &records {
        serde_json::to_writer(&mut out, record).map_err(|source| AuditError::Json {
            id: record.id,
            source,
        })?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(records.len())
}

fn collect(mut rows: rusqlite::Rows<'_>) -> Result<Vec<AuditRecord>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(from_row(row)?);
    }
    Ok(out)
}

fn from_row(row: &rusqlite::Row<'_>) -> Result<AuditRecord> {
    let id: i64 = row.get(0)?;
    let json = |i: usize| -> Result<serde_json::Value> {
        let text: String = row.get(i)?;
        serde_json::from_str(&text).map_err(|source| AuditError::Json { id, source })
    };
    let bad_ids: Vec<u64> =
        serde_json::from_value(json(12)?).map_err(|source| AuditError::Json { id, source })?;
    let passage_ids: Vec<String> =
        serde_json::from_value(json(13)?).map_err(|source| AuditError::Json { id, source })?;
    Ok(AuditRecord {
        id,
        request_id: row.get(1)?,
        ts: row.get(2)?,
        kind: row.get(3)?,
        question: row.get(4)?,
        status: row.get(5)?,
        grounded: row.get(6)?,
        refusal: row.get(7)?,
        regenerated: row.get(8)?,
        contradicted: row.get(9)?,
        unsupported: row.get(10)?,
        uncited: row.get(11)?,
        bad_ids,
        passage_ids,
        attempts: json(14)?,
        timings: json(15)?,
        report: json(16)?,
    })
}
