//! The `AuditStore` contract of `groundcite-audit`, run against every
//! store: PostgreSQL (`PgAuditStore`) and the SQLite file, side by side.
//!
//! The PostgreSQL half reads `GROUNDCITE_TEST_DATABASE_URL` (see
//! `.ci/pg.sh`); without it, it fails when `CI=true` and is skipped with a
//! loud message otherwise. Every check gets its own schema, dropped at the
//! end, so checks and test runs do not see each other's records.

use groundcite_audit::{SqliteAuditStore, contract};
use groundcite_pg::{PgAuditStore, PgOptions};

/// Runs `check` on a fresh PostgreSQL store in a schema of its own.
fn on_postgres(url: &str, name: &str, check: contract::Check) {
    let schema = format!("t_audit_{name}_{}", std::process::id());
    let opts = PgOptions::default().with_schema(schema.chars().take(60).collect::<String>());
    groundcite_pg::migrate(url, &opts).expect("migrate");
    let mut store = PgAuditStore::connect(url, opts.clone()).expect("connect");
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&mut store)));
    drop(store);
    if std::env::var_os("GROUNDCITE_TEST_KEEP_SCHEMAS").is_none() {
        let _ = groundcite_pg::drop_schema(url, &opts);
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn every_store_passes_the_audit_contract() {
    let url = std::env::var("GROUNDCITE_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty());
    if url.is_none() {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1"),
            "GROUNDCITE_TEST_DATABASE_URL is not set and CI=true: the PostgreSQL audit \
             contract must run in CI (eval \"$(.ci/pg.sh)\" first)"
        );
        eprintln!(
            "** SKIPPED: the audit contract on PostgreSQL (GROUNDCITE_TEST_DATABASE_URL \
             is not set; run `eval \"$(.ci/pg.sh)\"`); SQLite only **"
        );
    }
    for (name, check) in contract::CHECKS {
        let dir = tempfile::tempdir().unwrap();
        let mut sqlite = SqliteAuditStore::open(&dir.path().join("audit.sqlite")).unwrap();
        eprintln!("audit contract on SQLite: {name}");
        check(&mut sqlite);
        if let Some(url) = &url {
            eprintln!("audit contract on PostgreSQL: {name}");
            on_postgres(url, name, *check);
        }
    }
}

#[test]
fn postgres_stores_a_request_id_once_and_isolates_a_refused_record() {
    let Some(url) = std::env::var("GROUNDCITE_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        eprintln!("** SKIPPED: PostgreSQL audit test (GROUNDCITE_TEST_DATABASE_URL is not set) **");
        return;
    };
    on_postgres(&url, "dedup", |store| {
        let r = contract::record("twice");
        assert_eq!(store.write(&[r.clone(), r.clone()]).unwrap().lost(), 0);
        assert_eq!(store.write(&[r]).unwrap().lost(), 0, "a batch sent again");
        assert_eq!(store.count().unwrap(), 1);
        let poison = groundcite_audit::AuditRecord {
            attempts: "not json".into(),
            ..contract::record("poison")
        };
        let batch = [
            contract::record("good-1"),
            poison,
            contract::record("good-2"),
        ];
        let written = store.write(&batch).unwrap();
        assert_eq!(
            (written.rejected, written.conflicts),
            (1, 0),
            "one record refused"
        );
        let ids: Vec<String> = groundcite_audit::list_all(store)
            .unwrap()
            .into_iter()
            .map(|r| r.request_id)
            .collect();
        assert_eq!(ids, ["twice", "good-1", "good-2"]);
    });
}
