//! `groundcite audit prune`: retention applied on demand, from flags or
//! from `[audit]` in groundcite.toml.

use std::process::Command;

use groundcite_audit::{AuditRecord, AuditStore, SqliteAuditStore, contract};

const BIN: &str = env!("CARGO_BIN_EXE_groundcite");

fn prune(dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let o = Command::new(BIN)
        .args(["audit", "prune", "--db", "audit.sqlite"])
        .args(args)
        .current_dir(dir)
        .env_remove("GROUNDCITE_CONFIG")
        .env_remove("GROUNDCITE_AUDIT_PATH")
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn prune_removes_old_records_by_flag_or_by_config_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = prune(dir.path(), &["--max-age-days", "30"]);
    assert!(!ok && err.contains("no audit log at audit.sqlite"), "{err}");

    let mut store = SqliteAuditStore::open(&dir.path().join("audit.sqlite")).unwrap();
    let at = |id: &str, ts: &str| AuditRecord {
        ts: ts.into(),
        ..contract::record(id)
    };
    store
        .write(&[
            at("old", "2020-01-01T00:00:00.000Z"),
            at("newer", "2099-01-01T00:00:00.000Z"),
            at("newest", "2099-01-02T00:00:00.000Z"),
        ])
        .unwrap();

    let (ok, _, err) = prune(dir.path(), &[]);
    assert!(!ok && err.contains("nothing to prune by"), "{err}");

    let (ok, out, err) = prune(dir.path(), &["--max-age-days", "30"]);
    assert!(ok, "{err}");
    assert!(out.starts_with("pruned 1 record(s) older than 20"), "{out}");
    assert!(out.contains("2 left in audit.sqlite"), "{out}");

    let one = contract::record("x").stored_bytes();
    std::fs::write(
        dir.path().join("groundcite.toml"),
        format!("[audit]\nmax_bytes = {one}\n"),
    )
    .unwrap();
    let (ok, out, err) = prune(dir.path(), &[]);
    assert!(ok, "{err}");
    assert!(out.contains("and 1 more to fit"), "{out}");
    let left = store.list(&Default::default()).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].request_id, "newest");
}
