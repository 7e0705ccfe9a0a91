//! The write side: a bounded queue and one writer thread that drains it
//! into an [`AuditStore`], a batch per transaction.
//!
//! [`AuditLog::start`] starts the thread with a [`StoreOpener`], which
//! turns the configured location ([`AuditConfig::path`]) into a store: for
//! the first write, and again after a failure, at most every
//! [`REOPEN_INTERVAL`]. This crate opens SQLite files ([`SqliteFiles`]);
//! `groundcite-engine` hands an opener that also knows PostgreSQL
//! (`groundcite_engine::audit::Stores`: a `postgres://` URL). The queue,
//! the batching, the commit wait and the failure accounting are the same
//! for every store: the writer sees only the trait. What it does is
//! counted through an [`AuditObserver`] (the service's Prometheus metrics;
//! [`NoObserver`] counts nothing) and logged (tracing).
//!
//! ## The commit wait
//!
//! **No answer is served without its record.** With a commit wait
//! ([`AuditConfig::commit_wait_ms`], [`DEFAULT_COMMIT_WAIT_MS`] unless
//! set) a caller hands its record to the queue with `try_send` and serves
//! the answer only once the writer acknowledges the record's commit
//! ([`AuditLog::record_and_wait`]); when the record is not committed
//! within the wait (a full queue, a database that is down or slow, a
//! failed write) the caller gets an [`Unrecorded`] and must not serve the
//! answer (the service answers 503 `audit_unavailable`), and the record is
//! withdrawn so that it is never written later.
//!
//! Records wait in memory until their batch commits: a process killed with
//! SIGKILL loses what is queued, which with the commit wait is only records
//! of answers not yet sent. The writer does not linger while someone waits,
//! and every batch commits what queued while the previous one was in
//! flight (group commit), so the wait costs about one commit (~1–3 ms on
//! loopback). When the wait runs out first, the caller withdraws its
//! record (a shared state the writer checks before it writes: queued,
//! writing, withdrawn); a record the writer is already writing cannot be
//! withdrawn, and its caller waits for that write's outcome (bounded by
//! the store's own retries and connect timeout). A write that fails tells
//! its callers at once, so a database that is down costs a refusal, not
//! the wait. So every answer served has exactly one committed record; the
//! log can hold the record of a refused request only when a write failed
//! in doubt (the connection lost after the commit was sent, and every
//! retry failed) or a batch lost another record (a rejected or conflicting
//! one: its whole batch is then refused).
//!
//! With `commit_wait_ms = 0` (fire and forget, an explicit choice) answers
//! never wait, and a lost record is only counted
//! ([`AuditObserver::lost`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{AuditPolicy, AuditRecord, AuditStore, Result, SqliteAuditStore};

/// Where the audit database lives unless configured.
pub const DEFAULT_AUDIT_PATH: &str = "./.groundcite/audit.sqlite";
/// The writer retries opening a database that failed to open at most this
/// often (while it cannot, answers waiting for a commit are refused at once).
pub const REOPEN_INTERVAL: Duration = Duration::from_secs(1);
/// How long an answer waits for its record to commit, by default.
pub const DEFAULT_COMMIT_WAIT_MS: u64 = 250;
/// How often the writer applies the retention (only after writing: a log
/// that is not written does not grow).
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(60);

/// Audit configuration: where the log is, and how the writer queues,
/// batches, waits and prunes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditConfig {
    /// The log's location, which the [`StoreOpener`] opens: a SQLite file,
    /// or a `postgres://` URL for an opener that knows PostgreSQL; `None`
    /// turns auditing off. Default [`DEFAULT_AUDIT_PATH`]. The parent
    /// directory of a file is created.
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
    /// Audit check reports too (kind `check`: the service's
    /// `POST /v1/check`). Default true.
    pub checks: bool,
    /// How long an answer waits for its record to commit before it is
    /// refused (the service answers 503 `audit_unavailable`), in
    /// milliseconds; 0 never waits (fire and forget: answers are served
    /// whatever becomes of their records). Default (`None`):
    /// [`DEFAULT_COMMIT_WAIT_MS`]. See the module docs on the commit wait.
    pub commit_wait_ms: Option<u64>,
    /// The per-record cap and the retention (`[audit]` in groundcite.toml):
    /// records over `max_record_bytes` are stored as summaries, and the
    /// writer applies `max_age_days` / `max_bytes` after a write, at most
    /// once every [`PRUNE_INTERVAL`].
    pub policy: AuditPolicy,
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

/// Opens the store at a configured location ([`AuditConfig::path`]) for
/// the writer: for its first write, and again after a failed open or
/// write.
pub trait StoreOpener: Send + 'static {
    /// The store at `location`, for writing.
    fn open(&self, location: &Path) -> Result<Box<dyn AuditStore>>;

    /// `location` for logs: never a password.
    fn display(&self, location: &Path) -> String;
}

/// The opener of SQLite files ([`SqliteAuditStore::open`]: a missing file
/// is created, with its folder).
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteFiles;

impl StoreOpener for SqliteFiles {
    fn open(&self, location: &Path) -> Result<Box<dyn AuditStore>> {
        Ok(Box::new(SqliteAuditStore::open(location)?))
    }

    fn display(&self, location: &Path) -> String {
        location.display().to_string()
    }
}

/// Why records were lost: the `reason` label of the service's
/// `groundcite_audit_write_failures_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossReason {
    /// The database could not be opened.
    Open,
    /// A write failed or the database refused a record, or the writer had
    /// stopped.
    Write,
    /// The queue was full.
    QueueFull,
    /// The record's request id is stored with another record.
    Conflict,
}

impl LossReason {
    /// Every reason.
    pub const ALL: [LossReason; 4] = [
        LossReason::Open,
        LossReason::Write,
        LossReason::QueueFull,
        LossReason::Conflict,
    ];

    /// Its label: `open`, `write`, `queue_full` or `conflict`.
    pub fn as_str(self) -> &'static str {
        match self {
            LossReason::Open => "open",
            LossReason::Write => "write",
            LossReason::QueueFull => "queue_full",
            LossReason::Conflict => "conflict",
        }
    }
}

/// What the writer and the waiting callers report, as they happen: the
/// service counts them in its Prometheus metrics.
pub trait AuditObserver: Send + Sync {
    /// `n` records were lost, for `reason`.
    fn lost(&self, reason: LossReason, n: u64);

    /// `n` records were written.
    fn written(&self, n: u64);

    /// A commit wait ran out (the answer is refused unless its record's
    /// write was already under way and committed).
    fn late(&self);

    /// An answer was refused because its record did not commit.
    fn refused(&self);
}

/// An observer that counts nothing (the CLI's: no metrics to serve).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl AuditObserver for NoObserver {
    fn lost(&self, _: LossReason, _: u64) {}
    fn written(&self, _: u64) {}
    fn late(&self) {}
    fn refused(&self) {}
}

/// Why an answer must not be served: its record did not commit within the
/// wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrecorded {
    /// The queue was full or the writer stopped.
    Queue,
    /// The write failed (or the database could not be opened).
    Failed,
    /// The wait ran out; the record was withdrawn.
    Late,
}

/// A waited-for record's state, shared by its caller and the writer: the
/// writer moves it from queued to writing just before a write, and the
/// caller whose wait ran out from queued to withdrawn; whichever comes
/// first decides whether the record is written.
const QUEUED: u8 = 0;
const WRITING: u8 = 1;
const WITHDRAWN: u8 = 2;

/// The caller's side of a record it waits for.
struct Waiter {
    state: Arc<AtomicU8>,
    ack: tokio::sync::oneshot::Sender<bool>,
}

impl Waiter {
    /// Claims the record for a write; false when its caller withdrew it.
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
    observer: Arc<dyn AuditObserver>,
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
    pub fn disabled() -> AuditLog {
        AuditLog {
            tx: None,
            checks: false,
            commit_wait: Duration::ZERO,
            observer: Arc::new(NoObserver),
            writer: Arc::default(),
        }
    }

    /// Starts the writer thread over the store `opener` opens at
    /// `config.path` (none: auditing is off, [`AuditLog::disabled`]).
    /// Never fails: a database that cannot be opened is logged, reported
    /// to `observer` and retried.
    pub fn start(
        config: &AuditConfig,
        opener: impl StoreOpener,
        observer: Arc<dyn AuditObserver>,
    ) -> AuditLog {
        let Some(path) = config.path.clone() else {
            return AuditLog::disabled();
        };
        let (tx, rx) = mpsc::sync_channel(config.queue_capacity.max(1));
        let target = Target {
            shown: opener.display(&path),
            path,
            opener: Box::new(opener),
        };
        let batch = config.batch.max(1);
        let linger = Duration::from_millis(config.linger_ms);
        let thread_observer = observer.clone();
        let policy = config.policy.clone();
        let writer = std::thread::Builder::new()
            .name("groundcite-audit".into())
            .spawn(move || {
                writer_loop(
                    &target,
                    rx,
                    batch,
                    linger,
                    &policy,
                    thread_observer.as_ref(),
                )
            });
        match writer {
            Ok(handle) => AuditLog {
                tx: Some(tx),
                checks: config.checks,
                commit_wait: config.commit_wait(),
                observer,
                writer: Arc::new(Mutex::new(Some(handle))),
            },
            Err(err) => {
                tracing::error!(error = %err, "cannot start the audit writer thread; auditing is off");
                observer.lost(LossReason::Open, 1);
                AuditLog::disabled()
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

    /// How long a caller waits for its record to commit (zero: it does
    /// not wait). See [`AuditConfig::commit_wait_ms`].
    pub fn commit_wait(&self) -> Duration {
        self.commit_wait
    }

    /// Queues one record like [`AuditLog::record`] and, when a commit wait
    /// is configured, waits for its batch to commit: `Ok` once it has, and
    /// the caller may serve the answer; `Err` when it has not within the
    /// wait (the record is then withdrawn, never written later) or its
    /// write failed: the caller must not serve the answer. A record the
    /// writer is already writing when the wait runs out cannot be
    /// withdrawn: its outcome decides. Without a commit wait (or without
    /// an audit log) it never waits and is always `Ok`. Runs on a tokio
    /// runtime with its timer enabled.
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
                    self.observer.late();
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
            self.observer.refused();
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
                self.observer.lost(LossReason::QueueFull, 1);
                tracing::warn!("audit queue full: record dropped");
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.observer.lost(LossReason::Write, 1);
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

/// Where the writer's records go: the configured location and its opener.
struct Target {
    path: PathBuf,
    /// The location for logs ([`StoreOpener::display`]).
    shown: String,
    opener: Box<dyn StoreOpener>,
}

fn writer_loop(
    target: &Target,
    rx: Receiver<Msg>,
    batch: usize,
    linger: Duration,
    policy: &AuditPolicy,
    observer: &dyn AuditObserver,
) {
    let location = target.shown.as_str();
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
                match target.opener.open(&target.path) {
                    Ok(s) => store = Some(s),
                    Err(err) => {
                        tracing::error!(location = %location, error = %err, "cannot open the audit database");
                    }
                }
            }
            taken.claim();
        }
        if !taken.records.is_empty() {
            let n = taken.records.len() as u64;
            match store.as_mut() {
                None => observer.lost(LossReason::Open, n),
                Some(s) => match s.write(&taken.records) {
                    Ok(written) => {
                        observer.written(n - written.lost());
                        // A lost record cannot be told from the others of
                        // its batch: none of their answers is served.
                        ok = written.lost() == 0;
                        if written.rejected > 0 {
                            observer.lost(LossReason::Write, written.rejected);
                        }
                        if written.conflicts > 0 {
                            // Ids are the server's, 80 random bits each: a
                            // conflict means a broken generator or a forged
                            // record. Alert (the counter), never drop silently.
                            tracing::error!(
                                location = %location,
                                records = written.conflicts,
                                "audit request id conflict: records not stored"
                            );
                            observer.lost(LossReason::Conflict, written.conflicts);
                        }
                        if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_INTERVAL) {
                            last_prune = Some(Instant::now());
                            prune(s.as_mut(), policy, location);
                        }
                    }
                    Err(err) => {
                        tracing::error!(location = %location, error = %err, records = n, "audit write failed");
                        observer.lost(LossReason::Write, n);
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
fn prune(store: &mut dyn AuditStore, policy: &AuditPolicy, location: &str) {
    let Some(retention) = policy.retention(std::time::SystemTime::now()) else {
        return;
    };
    match store.prune(&retention) {
        Ok(p) if p.by_age + p.by_size > 0 => {
            tracing::info!(
                location = %location,
                by_age = p.by_age,
                by_size = p.by_size,
                "audit records pruned"
            );
        }
        Ok(_) => {}
        Err(err) => {
            tracing::error!(location = %location, error = %err, "audit prune failed");
        }
    }
}

/// What the writer has taken from the queue for its next batch.
struct Taken {
    /// The records, each capped to `cap` bytes ([`AuditRecord::capped`]).
    records: Vec<AuditRecord>,
    /// Aligned with `records`: the caller waiting for each record, if any.
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

    /// Does anyone wait for the batch (a caller or a flush)?
    fn awaited(&self) -> bool {
        !self.acks.is_empty() || self.waiters.iter().any(Option::is_some)
    }

    /// Claims every waited-for record for the write and leaves out those
    /// their callers withdrew: from here a waited-for record is written
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

    /// Tells every caller whether its record committed, and every flush
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
