//! The `AuditStore` contract against the SQLite store (PostgreSQL runs it
//! in `groundcite-pg`'s tests).

use groundcite_audit::{AuditStore, SqliteAuditStore, contract};

#[test]
fn the_sqlite_store_passes_the_contract() {
    for (name, check) in contract::CHECKS {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteAuditStore::open(&dir.path().join("nested/audit.sqlite"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("contract: {name}");
        check(&mut store as &mut dyn AuditStore);
    }
}

#[test]
fn a_read_only_store_reads_what_the_writer_wrote_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    assert!(
        SqliteAuditStore::open_read_only(&path).is_err(),
        "no file, no store"
    );
    let mut writer = SqliteAuditStore::open(&path).unwrap();
    writer.write(&[contract::record("one")]).unwrap();
    let mut reader = SqliteAuditStore::open_read_only(&path).unwrap();
    assert_eq!(reader.count().unwrap(), 1);
    assert!(reader.write(&[contract::record("two")]).is_err());
    assert_eq!(writer.count().unwrap(), 1);
}

/// A version 1 file (the client's id as `request_id`, repeated) is read as
/// it is, and upgraded when opened for writing: the old ids move to
/// `client_request_id`, repeats get their row id, `request_id` is unique.
#[test]
fn a_version_1_file_is_read_and_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE audit (id INTEGER PRIMARY KEY, request_id TEXT NOT NULL,
               ts TEXT NOT NULL, kind TEXT NOT NULL, question TEXT, status TEXT NOT NULL,
               grounded INTEGER NOT NULL, refusal TEXT, regenerated INTEGER NOT NULL,
               contradicted INTEGER NOT NULL, unsupported INTEGER NOT NULL,
               uncited INTEGER NOT NULL, bad_ids TEXT NOT NULL, passage_ids TEXT NOT NULL,
               attempts TEXT NOT NULL, timings TEXT NOT NULL, report TEXT NOT NULL);
             PRAGMA user_version = 1;",
        )
        .unwrap();
        for id in ["dup", "dup", "other"] {
            conn.execute(
                "INSERT INTO audit (request_id, ts, kind, status, grounded, regenerated,
                   contradicted, unsupported, uncited, bad_ids, passage_ids, attempts,
                   timings, report)
                 VALUES (?1, '2026-11-30T14:50:07.123Z', 'ask', 'ok', 1, 0, 0, 0, 0, '[]',
                   '[]', '[]', '{}', '{}')",
                [id],
            )
            .unwrap();
        }
    }
    let reader = SqliteAuditStore::open_read_only(&path).unwrap();
    let old = groundcite_audit::list_all(&reader).unwrap();
    assert_eq!(old.len(), 3);
    assert!(old.iter().all(|r| r.client_request_id.is_none()));
    drop(reader);

    let mut writer = SqliteAuditStore::open(&path).unwrap();
    let back = groundcite_audit::list_all(&writer).unwrap();
    let ids: Vec<(&str, Option<&str>)> = back
        .iter()
        .map(|r| (r.request_id.as_str(), r.client_request_id.as_deref()))
        .collect();
    assert_eq!(
        ids,
        [
            ("dup", Some("dup")),
            ("dup~2", Some("dup")),
            ("other", Some("other"))
        ]
    );
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, groundcite_audit::SQLITE_SCHEMA_VERSION);
    let conflict = contract::record("other");
    assert_eq!(writer.write(&[conflict]).unwrap().conflicts, 1);
}
