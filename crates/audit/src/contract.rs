//! The contract every [`AuditStore`] passes, run by this crate's tests
//! against [`crate::SqliteAuditStore`] and by `groundcite-pg`'s against
//! PostgreSQL (and SQLite again, side by side).
//!
//! Each check takes a fresh, empty store and panics on a violation:
//!
//! ```no_run
//! # fn open_an_empty_store() -> Box<dyn groundcite_audit::AuditStore> { unimplemented!() }
//! for (name, check) in groundcite_audit::contract::CHECKS {
//!     eprintln!("contract: {name}");
//!     check(open_an_empty_store().as_mut());
//! }
//! ```

use crate::{
    AuditQuery, AuditRecord, AuditStore, IncidentFilter, JsonText, PAGE, Pruned, Retention, Written,
};

/// One check of the contract: panics if `store` violates it.
pub type Check = fn(&mut dyn AuditStore);

/// Every check, by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("records_round_trip_exactly", records_round_trip_exactly),
    (
        "incidents_are_filtered_newest_first",
        incidents_are_filtered_newest_first,
    ),
    (
        "queries_page_in_insertion_order",
        queries_page_in_insertion_order,
    ),
    (
        "the_export_is_one_json_line_per_record",
        the_export_is_one_json_line_per_record,
    ),
    (
        "a_request_id_is_stored_once_and_a_conflict_is_reported",
        a_request_id_is_stored_once_and_a_conflict_is_reported,
    ),
    (
        "prune_removes_old_records_then_the_oldest_over_the_size",
        prune_removes_old_records_then_the_oldest_over_the_size,
    ),
];

/// A clean `ask` record: status ok, nothing flagged.
pub fn record(request_id: &str) -> AuditRecord {
    AuditRecord {
        id: 0,
        request_id: request_id.to_string(),
        client_request_id: None,
        ts: "2026-11-30T14:50:07.123Z".into(),
        kind: "ask".into(),
        question: Some("How long does reimbursement take?".into()),
        status: "ok".into(),
        grounded: true,
        refusal: None,
        regenerated: false,
        contradicted: 0,
        unsupported: 0,
        uncited: 0,
        bad_ids: Vec::new(),
        passage_ids: vec!["expenses.md#L9-L14".into(), "help.md#L1-L6".into()],
        attempts: JsonText::new(r#"[{"raw":"Settled in 30 days [1].","bad_ids":[],"error":null}]"#),
        timings: JsonText::new(
            r#"{"retrieve_ms":0.4,"generate_ms":1.0,"check_ms":0.2,"total_ms":1.6}"#,
        ),
        report: JsonText::new(r#"{"question":"How long does reimbursement take?","status":"ok"}"#),
    }
}

fn stored(store: &mut dyn AuditStore, records: &[AuditRecord]) {
    assert_eq!(
        store.write(records).expect("write a batch"),
        Written::default(),
        "no record refused, no conflict"
    );
}

fn all(store: &dyn AuditStore) -> Vec<AuditRecord> {
    store.list(&AuditQuery::default()).expect("list")
}

fn ids(records: &[AuditRecord]) -> Vec<&str> {
    records.iter().map(|r| r.request_id.as_str()).collect()
}

/// Every field reads back as written; JSON documents byte for byte; ids
/// follow insertion order, across batches.
pub fn records_round_trip_exactly(store: &mut dyn AuditStore) {
    assert_eq!(store.count().unwrap(), 0, "the store starts empty");
    let plain = record("rt-1");
    let odd = AuditRecord {
        kind: "check".into(),
        question: None,
        status: "unverified".into(),
        grounded: false,
        refusal: Some("sentinel".into()),
        regenerated: true,
        contradicted: 2,
        unsupported: 3,
        uncited: 4,
        bad_ids: vec![5, 9],
        passage_ids: vec!["ünïcödé.md#L1-L2".into(), "a \"quoted\" id".into()],
        // Kept verbatim: spacing, key order, escapes and non-ASCII text.
        attempts: JsonText::new(
            "[ {\"raw\": \"Ça coûte 5 € [9]\\n\", \"bad_ids\": [9], \"error\": \"x\"} ]",
        ),
        timings: JsonText::new(r#"{"check_ms": 0.25}"#),
        report: JsonText::new(r#"{"z": 1, "a": {"nested": [1.5, -2, null, "\u00e9"]}}"#),
        ts: "2027-01-02T03:04:05.678Z".into(),
        client_request_id: Some("client's id: \"x\" ü".into()),
        ..record("rt-2")
    };
    stored(store, &[plain.clone(), odd.clone()]);
    stored(store, &[record("rt-3")]);
    let back = all(store);
    assert_eq!(ids(&back), ["rt-1", "rt-2", "rt-3"]);
    assert!(
        back[0].id < back[1].id && back[1].id < back[2].id,
        "{back:#?}"
    );
    for (got, want) in back.iter().zip([&plain, &odd]) {
        assert_eq!(
            &AuditRecord {
                id: want.id,
                ..got.clone()
            },
            want
        );
    }
    assert_eq!(store.count().unwrap(), 3);
    assert!(!back[0].is_unverified() && !back[0].is_unsupported());
    assert!(back[1].is_unverified() && back[1].is_unsupported());
}

/// The incident log: unverified (status, a bad id in any attempt, or a
/// validation refusal), unsupported (contradicted or unsupported
/// sentences, or uncited ones in an ungrounded answer), both when neither
/// is asked; by kind; newest first; limited.
pub fn incidents_are_filtered_newest_first(store: &mut dyn AuditStore) {
    let batch = [
        record("clean"),
        AuditRecord {
            status: "unverified".into(),
            ..record("status-unverified")
        },
        AuditRecord {
            bad_ids: vec![7],
            regenerated: true,
            ..record("bad-attempt")
        },
        AuditRecord {
            status: "no_evidence".into(),
            refusal: Some("validation".into()),
            ..record("validation-refusal")
        },
        AuditRecord {
            status: "no_evidence".into(),
            refusal: Some("gate".into()),
            ..record("gate-refusal")
        },
        AuditRecord {
            kind: "check".into(),
            contradicted: 1,
            ..record("contradicted-check")
        },
        AuditRecord {
            unsupported: 2,
            uncited: 1,
            ..record("unsupported")
        },
        AuditRecord {
            uncited: 3,
            ..record("only-uncited")
        },
        AuditRecord {
            uncited: 2,
            grounded: false,
            ..record("all-uncited")
        },
    ];
    stored(store, &batch);
    let incidents = |unverified, unsupported, kind: Option<&str>, limit| {
        let filter = IncidentFilter {
            unverified,
            unsupported,
            kind: kind.map(str::to_string),
            limit,
        };
        crate::incidents(store, &filter).expect("incidents")
    };
    assert_eq!(
        ids(&incidents(true, false, None, None)),
        ["validation-refusal", "bad-attempt", "status-unverified"]
    );
    assert_eq!(
        ids(&incidents(false, true, None, None)),
        ["all-uncited", "unsupported", "contradicted-check"]
    );
    let every = [
        "all-uncited",
        "unsupported",
        "contradicted-check",
        "validation-refusal",
        "bad-attempt",
        "status-unverified",
    ];
    assert_eq!(ids(&incidents(false, false, None, None)), every);
    assert_eq!(ids(&incidents(true, true, None, None)), every);
    assert_eq!(
        ids(&incidents(false, false, Some("check"), None)),
        ["contradicted-check"]
    );
    assert_eq!(
        ids(&incidents(false, true, Some("ask"), None)),
        ["all-uncited", "unsupported"]
    );
    assert_eq!(
        ids(&incidents(false, false, None, Some(2))),
        ["all-uncited", "unsupported"]
    );
    assert!(incidents(false, false, Some("nothing"), None).is_empty());
}

/// Oldest first by default, newest first on request, `after_id` pages
/// through, `limit` cuts; [`crate::each`] reads past one [`PAGE`].
pub fn queries_page_in_insertion_order(store: &mut dyn AuditStore) {
    let batch: Vec<AuditRecord> = (0..PAGE + 5)
        .map(|i| record(&format!("page-{i:05}")))
        .collect();
    stored(store, &batch);
    let first = store
        .list(&AuditQuery {
            limit: Some(3),
            ..AuditQuery::default()
        })
        .unwrap();
    assert_eq!(ids(&first), ["page-00000", "page-00001", "page-00002"]);
    let next = store
        .list(&AuditQuery {
            after_id: Some(first[2].id),
            limit: Some(2),
            ..AuditQuery::default()
        })
        .unwrap();
    assert_eq!(ids(&next), ["page-00003", "page-00004"]);
    let newest = store
        .list(&AuditQuery {
            newest_first: true,
            limit: Some(2),
            ..AuditQuery::default()
        })
        .unwrap();
    let last = format!("page-{:05}", PAGE + 4);
    let before = format!("page-{:05}", PAGE + 3);
    assert_eq!(ids(&newest), [last.as_str(), before.as_str()]);
    let mut seen = Vec::new();
    let n = crate::each(store, |r| {
        seen.push(r.request_id);
        Ok(())
    })
    .unwrap();
    assert_eq!(n, PAGE + 5);
    assert_eq!(seen, ids(&batch));
    assert_eq!(store.count().unwrap(), (PAGE + 5) as u64);
}

/// `export_jsonl`: every record, oldest first, one JSON object per line
/// with the columns by name and the JSON columns as JSON values;
/// `export_incidents_jsonl`: the incidents, newest first.
pub fn the_export_is_one_json_line_per_record(store: &mut dyn AuditStore) {
    let flagged = AuditRecord {
        contradicted: 1,
        ..record("export-2")
    };
    stored(store, &[record("export-1"), flagged]);
    let mut out = Vec::new();
    assert_eq!(crate::export_jsonl(store, &mut out).unwrap(), 2);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    let keys: Vec<&str> = lines[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = [
        "id",
        "request_id",
        "client_request_id",
        "ts",
        "kind",
        "question",
        "status",
        "grounded",
        "refusal",
        "regenerated",
        "contradicted",
        "unsupported",
        "uncited",
        "bad_ids",
        "passage_ids",
        "attempts",
        "timings",
        "report",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(lines[0]["request_id"], "export-1");
    assert_eq!(lines[0]["ts"], "2026-11-30T14:50:07.123Z");
    assert_eq!(lines[0]["report"]["status"], "ok");
    assert_eq!(lines[0]["attempts"][0]["raw"], "Settled in 30 days [1].");
    assert_eq!(lines[0]["timings"]["total_ms"], 1.6);
    assert_eq!(lines[0]["passage_ids"][1], "help.md#L1-L6");
    assert_eq!(lines[1]["contradicted"], 1);
    let back: crate::AuditRecord = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(back.request_id, "export-1");

    let mut out = Vec::new();
    let filter = IncidentFilter::default();
    assert_eq!(
        crate::export_incidents_jsonl(store, &filter, &mut out).unwrap(),
        1
    );
    assert!(String::from_utf8(out).unwrap().contains("\"export-2\""));
}

/// `request_id` is unique: the same record written again (a batch resent
/// after an ambiguous commit, or twice in one batch) is stored once and is
/// not a conflict; another record under a stored `request_id` is a
/// conflict: reported, not stored, the first record left as it was.
/// Records with the same client id are all stored.
pub fn a_request_id_is_stored_once_and_a_conflict_is_reported(store: &mut dyn AuditStore) {
    let first = AuditRecord {
        client_request_id: Some("replayed".into()),
        ..record("a")
    };
    stored(store, &[first.clone(), first.clone()]);
    stored(store, std::slice::from_ref(&first));
    assert_eq!(store.count().unwrap(), 1);
    let intruder = AuditRecord {
        status: "unverified".into(),
        report: JsonText::new(r#"{"status":"unverified"}"#),
        ..first.clone()
    };
    let same_client = AuditRecord {
        client_request_id: Some("replayed".into()),
        ..record("b")
    };
    let written = store
        .write(&[intruder, same_client, record("c")])
        .expect("write a batch");
    assert_eq!(
        written,
        Written {
            rejected: 0,
            conflicts: 1
        }
    );
    assert_eq!(written.lost(), 1);
    let back = all(store);
    assert_eq!(ids(&back), ["a", "b", "c"]);
    assert_eq!(back[0].status, "ok", "a conflict never overwrites");
    assert_eq!(back[1].client_request_id.as_deref(), Some("replayed"));
}

/// Retention: records served before `before` go first, then the oldest
/// until the variable text of the rest ([`AuditRecord::stored_bytes`], in
/// bytes, not characters) fits `max_bytes`; the newest are kept.
pub fn prune_removes_old_records_then_the_oldest_over_the_size(store: &mut dyn AuditStore) {
    let at = |id: &str, ts: &str| AuditRecord {
        ts: ts.into(),
        // Multi-byte text: sizes are bytes.
        question: Some("Combien de congés ?".into()),
        ..record(id)
    };
    let records = [
        at("p-old-1", "2026-10-01T00:00:00.000Z"),
        at("p-old-2", "2026-10-31T23:59:59.999Z"),
        at("p-1", "2026-11-01T00:00:00.000Z"),
        at("p-2", "2026-11-02T00:00:00.000Z"),
        at("p-3", "2026-11-03T00:00:00.000Z"),
        at("p-4", "2026-11-04T00:00:00.000Z"),
    ];
    stored(store, &records);
    let nothing = store.prune(&Retention::default()).expect("prune");
    assert_eq!(nothing, Pruned::default());
    assert_eq!(store.count().expect("count"), 6);

    let one = records[2].stored_bytes();
    // Room for two records and a half: the two newest stay.
    let pruned = store
        .prune(&Retention {
            before: Some("2026-11-01T00:00:00.000Z".into()),
            max_bytes: Some(one * 2 + one / 2),
        })
        .expect("prune");
    assert_eq!(
        pruned,
        Pruned {
            by_age: 2,
            by_size: 2
        }
    );
    assert_eq!(ids(&all(store)), ["p-3", "p-4"]);
    // Exactly the size of what is left: nothing more goes.
    let again = store
        .prune(&Retention {
            before: None,
            max_bytes: Some(one * 2),
        })
        .expect("prune");
    assert_eq!(again, Pruned::default());
    assert_eq!(store.count().expect("count"), 2);
}
