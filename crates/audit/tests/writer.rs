//! The writer: records queued without blocking, committed before a waiting
//! caller goes on, every loss reported, the store reopened after a failure.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use groundcite_audit::{
    AuditConfig, AuditError, AuditLog, AuditObserver, AuditStore, LossReason, REOPEN_INTERVAL,
    SqliteAuditStore, SqliteFiles, StoreOpener, Unrecorded, contract, list_all,
};

/// What the writer reported.
#[derive(Default)]
struct Counted {
    lost: Mutex<HashMap<LossReason, u64>>,
    written: AtomicU64,
    late: AtomicU64,
    refused: AtomicU64,
}

impl Counted {
    fn lost(&self, reason: LossReason) -> u64 {
        self.lost.lock().unwrap().get(&reason).copied().unwrap_or(0)
    }
}

impl AuditObserver for Counted {
    fn lost(&self, reason: LossReason, n: u64) {
        *self.lost.lock().unwrap().entry(reason).or_default() += n;
    }

    fn written(&self, n: u64) {
        self.written.fetch_add(n, Ordering::Relaxed);
    }

    fn late(&self) {
        self.late.fetch_add(1, Ordering::Relaxed);
    }

    fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }
}

/// A SQLite file that cannot be opened the first `failures` times.
struct DownAtFirst {
    failures: AtomicU32,
}

impl StoreOpener for DownAtFirst {
    fn open(&self, location: &Path) -> groundcite_audit::Result<Box<dyn AuditStore>> {
        let down = self
            .failures
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if down {
            return Err(AuditError::Backend("the database is down".into()));
        }
        SqliteFiles.open(location)
    }

    fn display(&self, location: &Path) -> String {
        SqliteFiles.display(location)
    }
}

fn stored(path: &Path) -> Vec<String> {
    let store = SqliteAuditStore::open_read_only(path).unwrap();
    list_all(&store)
        .unwrap()
        .into_iter()
        .map(|r| r.request_id)
        .collect()
}

#[test]
fn nothing_is_lost_silently_when_the_queue_overflows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let counted = Arc::new(Counted::default());
    let log = AuditLog::start(
        &AuditConfig {
            queue_capacity: 2,
            batch: 1,
            ..AuditConfig::at(&path)
        },
        SqliteFiles,
        counted.clone(),
    );
    let started = Instant::now();
    for i in 0..500 {
        log.record(contract::record(&format!("rid-{i}")));
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "record() never blocks"
    );
    log.shutdown();
    let written = counted.written.load(Ordering::Relaxed);
    let dropped = counted.lost(LossReason::QueueFull);
    assert_eq!(written + dropped, 500);
    assert_eq!(stored(&path).len() as u64, written);
    // After shutdown, records are counted as lost, not queued forever.
    log.record(contract::record("late"));
    assert_eq!(counted.lost(LossReason::Write), 1);
}

#[tokio::test]
async fn a_waiting_caller_goes_on_once_its_record_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/audit.sqlite");
    let config = AuditConfig {
        // A linger longer than the wait: a waited-for record does not linger.
        linger_ms: 60_000,
        commit_wait_ms: Some(5_000),
        ..AuditConfig::at(&path)
    };
    let counted = Arc::new(Counted::default());
    let log = AuditLog::start(&config, SqliteFiles, counted.clone());
    let started = Instant::now();
    log.record_and_wait(contract::record("waited"))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    // No flush: committed before the wait returned.
    assert_eq!(stored(&path), ["waited"]);
    assert_eq!(counted.written.load(Ordering::Relaxed), 1);
    assert_eq!(counted.refused.load(Ordering::Relaxed), 0);
    log.shutdown();
}

#[tokio::test]
async fn a_store_that_cannot_open_refuses_at_once_and_is_reopened_later() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let config = AuditConfig {
        commit_wait_ms: Some(2_000),
        ..AuditConfig::at(&path)
    };
    let counted = Arc::new(Counted::default());
    let opener = DownAtFirst {
        failures: AtomicU32::new(1),
    };
    let log = AuditLog::start(&config, opener, counted.clone());
    let started = Instant::now();
    for id in ["first", "second"] {
        let outcome = log.record_and_wait(contract::record(id)).await;
        assert_eq!(outcome, Err(Unrecorded::Failed));
    }
    // Refused when the open failed, not when the wait ran out; the second
    // came before the writer tried again.
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(counted.lost(LossReason::Open), 2);
    assert_eq!(counted.refused.load(Ordering::Relaxed), 2);
    assert_eq!(counted.late.load(Ordering::Relaxed), 0);
    tokio::time::sleep(REOPEN_INTERVAL).await;
    log.record_and_wait(contract::record("third"))
        .await
        .unwrap();
    assert_eq!(stored(&path), ["third"]);
    log.shutdown();
}
