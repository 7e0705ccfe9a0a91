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
