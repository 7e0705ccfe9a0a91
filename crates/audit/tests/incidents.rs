//! The incident readers read a page at a time, newest first: listing or
//! exporting a large log never holds all of it in memory.

use std::cell::Cell;

use groundcite_audit::{
    AuditQuery, AuditRecord, AuditStore, IncidentFilter, PAGE, Pruned, Result, Retention,
    SqliteAuditStore, Written, contract, each_incident, export_incidents_jsonl, incidents,
    write_incidents_json,
};

/// A store that refuses any read of more than a page, and counts reads.
struct PagedOnly<S> {
    inner: S,
    reads: Cell<usize>,
}

impl<S: AuditStore> AuditStore for PagedOnly<S> {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn write(&mut self, batch: &[AuditRecord]) -> Result<Written> {
        self.inner.write(batch)
    }
    fn list(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>> {
        assert!(
            query.limit.is_some_and(|n| n <= PAGE),
            "a read of the whole log: {query:?}"
        );
        self.reads.set(self.reads.get() + 1);
        self.inner.list(query)
    }
    fn count(&self) -> Result<u64> {
        self.inner.count()
    }
    fn prune(&mut self, retention: &Retention) -> Result<Pruned> {
        self.inner.prune(retention)
    }
}

#[test]
fn incidents_are_read_a_page_at_a_time_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = PagedOnly {
        inner: SqliteAuditStore::open(&dir.path().join("audit.sqlite")).unwrap(),
        reads: Cell::new(0),
    };
    let n = 2 * PAGE + 7;
    let records: Vec<AuditRecord> = (0..n)
        .map(|i| AuditRecord {
            contradicted: u32::from(i % 3 != 0),
            ..contract::record(&format!("r-{i:05}"))
        })
        .collect();
    store.write(&records).unwrap();
    let expected: Vec<String> = (0..n)
        .rev()
        .filter(|i| i % 3 != 0)
        .map(|i| format!("r-{i:05}"))
        .collect();

    let filter = IncidentFilter::default();
    let mut seen = Vec::new();
    let count = each_incident(&store, &filter, |r| {
        seen.push(r.request_id);
        Ok(())
    })
    .unwrap();
    assert_eq!(count, expected.len());
    assert_eq!(seen, expected);
    assert!(store.reads.get() >= 2, "{} reads", store.reads.get());

    let limited = IncidentFilter {
        limit: Some(PAGE + 3),
        ..IncidentFilter::default()
    };
    let ids: Vec<String> = incidents(&store, &limited)
        .unwrap()
        .into_iter()
        .map(|r| r.request_id)
        .collect();
    assert_eq!(ids, expected[..PAGE + 3]);

    let mut json = Vec::new();
    assert_eq!(
        write_incidents_json(&store, &filter, &mut json).unwrap(),
        expected.len()
    );
    let array: Vec<serde_json::Value> = serde_json::from_slice(&json).unwrap();
    let ids: Vec<&str> = array
        .iter()
        .map(|r| r["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, expected);
    let mut empty = Vec::new();
    let none = IncidentFilter {
        limit: Some(0),
        ..IncidentFilter::default()
    };
    write_incidents_json(&store, &none, &mut empty).unwrap();
    assert_eq!(String::from_utf8(empty).unwrap(), "[]\n");

    let mut lines = Vec::new();
    let written = export_incidents_jsonl(&store, &filter, &mut lines).unwrap();
    assert_eq!(written, expected.len());
    assert_eq!(
        String::from_utf8(lines).unwrap().lines().count(),
        expected.len()
    );
}
