//! The `ChunkIndex` contract, run against every backend: the embedded
//! tantivy index and PostgreSQL.
//!
//! The PostgreSQL half reads `GROUNDCITE_TEST_DATABASE_URL` (see
//! `.ci/pg.sh`). Without it the PostgreSQL tests fail when `CI=true` and are
//! skipped with a loud message otherwise. Every test gets its own schema,
//! dropped at the end, so tests run in parallel on one database.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use groundcite_index::{ChunkIndex, Index, IngestOptions, IngestSummary, Retriever};
use groundcite_pg::{PgIndex, PgOptions};

mod common;

/// Real handbook pages copied into every fixture, with questions they answer.
const HANDBOOK_PAGES: &[&str] = &[
    "travel-and-leave/fmla.md",
    "travel-and-leave/leave.md",
    "hiring-staying-or-changing-jobs/gsa-details.md",
    "general-information-and-resources/reasonable-accommodations.md",
];

const QUESTIONS: &[(&str, &str)] = &[
    (
        "How many weeks of unpaid leave does FMLA give per 12 month period?",
        "travel-and-leave/fmla.md",
    ),
    (
        "How long does it take to process a detail that needs an interagency agreement?",
        "hiring-staying-or-changing-jobs/gsa-details.md",
    ),
    (
        "Can my supervisor approve an accommodation that will last less than 6 months?",
        "general-information-and-resources/reasonable-accommodations.md",
    ),
];

// ---------------------------------------------------------------- fixtures

/// A backend under test plus whatever must be cleaned up after it.
struct Backend {
    index: Box<dyn ChunkIndex>,
    cleanup: Option<Box<dyn FnOnce()>>,
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(f) = self.cleanup.take() {
            f();
        }
    }
}

type Make = fn(&str) -> Option<Backend>;

fn embedded(_name: &str) -> Option<Backend> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = Index::open_or_create(&dir.path().join("index")).expect("open index");
    Some(Backend {
        index: Box::new(index),
        cleanup: Some(Box::new(move || drop(dir))),
    })
}

fn database_url() -> Option<String> {
    groundcite_testdata::database_url("the PostgreSQL contract tests")
}

/// A unique schema per test and process: tests run in parallel.
fn schema_for(name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(30)
        .collect();
    format!("t_{name}_{}_{n}", std::process::id())
}

fn postgres(name: &str) -> Option<Backend> {
    let url = database_url()?;
    let opts = PgOptions::default().with_schema(schema_for(name));
    groundcite_pg::migrate(&url, &opts).expect("migrate");
    let index = PgIndex::connect(&url, opts.clone()).expect("connect");
    Some(Backend {
        index: Box::new(index),
        cleanup: Some(Box::new(move || {
            if std::env::var_os("GROUNDCITE_TEST_KEEP_SCHEMAS").is_none() {
                let _ = groundcite_pg::drop_schema(&url, &opts);
            }
        })),
    })
}

/// A small corpus: fixture pages of every format, an unsupported file, a
/// hidden folder, and a few real handbook pages, under `pages/`.
fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages = dir.path().join("pages");
    let write = |rel: &str, contents: &[u8]| {
        let p = pages.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents).unwrap();
    };
    write(
        "fixture/badges.md",
        b"---\ntitle: Building badges\nkeywords: piv, access\n---\n\n\
          Badges open the doors of the office.\n\n\
          ## Lost badges\n\nReport a lost badge to the security desk within 24 hours. \
          A replacement badge takes three business days.\n\n\
          ## Visitors\n\nVisitors sign in at the front desk and wear a temporary badge.\n",
    );
    write(
        "fixture/parking.html",
        b"<html><head><title>Parking permits</title></head><body>\
          <h1>Parking permits</h1><p>Parking permits are issued monthly by the facilities team.</p>\
          <h2>Bicycles</h2><p>Bicycle racks are in the garage, level two.</p></body></html>",
    );
    write(
        "fixture/notes.txt",
        b"Quarterly notes\n\nThe quarterly planning meeting happens in the first week of each quarter.\n",
    );
    write("fixture/diagram.png", b"\x89PNG not really");
    write(".hidden/secret.md", b"# Secret\n\nNever indexed.\n");
    for rel in HANDBOOK_PAGES {
        let page = groundcite_testdata::fixture(&format!("corpora/tts-handbook/pages/{rel}"));
        let src = fs::read(&page).expect("page");
        write(rel, &src);
    }
    dir
}

fn opts() -> IngestOptions {
    IngestOptions::handbook()
}

fn ingest(index: &mut dyn ChunkIndex, root: &Path) -> IngestSummary {
    index
        .ingest(&[root.to_path_buf()], &opts(), &mut |_| {})
        .expect("ingest")
}

fn ids(index: &dyn ChunkIndex) -> Vec<String> {
    index
        .all_chunks()
        .expect("all chunks")
        .into_iter()
        .map(|c| c.id)
        .collect()
}

// ------------------------------------------------------------- the contract

fn ingests_a_folder(make: Make) {
    let Some(mut b) = make("ingests_a_folder") else {
        return;
    };
    let corpus = corpus();
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(s.files_seen, 4 + HANDBOOK_PAGES.len(), "{s:?}");
    assert_eq!(s.skipped, 1, "the .png: {s:?}");
    assert_eq!(s.indexed, 3 + HANDBOOK_PAGES.len(), "{s:?}");
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let chunks = b.index.all_chunks().unwrap();
    assert_eq!(chunks.len(), s.chunks);
    assert_eq!(b.index.num_chunks().unwrap(), s.chunks as u64);
    assert!(chunks.iter().all(|c| !c.path.contains("secret")));
    let lost = chunks
        .iter()
        .find(|c| c.section == "Lost badges")
        .expect("a chunk under `Lost badges`");
    assert_eq!(lost.path, "fixture/badges.md");
    assert_eq!(lost.title, "Building badges");
    assert_eq!(
        lost.source_url,
        "https://handbook.tts.gsa.gov/fixture/badges/#lost-badges"
    );
    assert!(lost.id.starts_with("fixture/badges.md#L"), "{}", lost.id);
    let src = fs::read_to_string(corpus.path().join("pages/fixture/badges.md")).unwrap();
    assert!(src[lost.start..lost.end].starts_with("## Lost badges"));
    assert_eq!(lost.metadata["keywords"], "piv, access");
    // Sorted by path, then offset.
    let mut sorted = chunks.clone();
    sorted.sort_by(|a, b| (&a.path, a.start, &a.id).cmp(&(&b.path, b.start, &b.id)));
    assert_eq!(sorted, chunks);
}

fn reingest_unchanged_keeps_ids(make: Make) {
    let Some(mut b) = make("reingest_unchanged") else {
        return;
    };
    let corpus = corpus();
    let first = ingest(b.index.as_mut(), corpus.path());
    let before = b.index.all_chunks().unwrap();
    let again = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(again.indexed, 0, "{again:?}");
    assert_eq!(again.unchanged, first.indexed);
    assert_eq!(again.removed, 0);
    assert_eq!(b.index.all_chunks().unwrap(), before);
    // Other options re-chunk every file, with the same ids when the chunks
    // do not change.
    let mut other = opts();
    other.base_url = Some("https://handbook.tts.gsa.gov/".into());
    let s = b
        .index
        .ingest(&[corpus.path().to_path_buf()], &other, &mut |_| {})
        .unwrap();
    assert_eq!(s.indexed, first.indexed, "{s:?}");
    assert_eq!(
        ids(b.index.as_ref()),
        before.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
    );
}

fn reingest_after_edit(make: Make) {
    let Some(mut b) = make("reingest_after_edit") else {
        return;
    };
    let corpus = corpus();
    let first = ingest(b.index.as_mut(), corpus.path());
    let before = b.index.all_chunks().unwrap();
    let path = corpus.path().join("pages/fixture/notes.txt");
    fs::write(
        &path,
        "Quarterly notes\n\nThe quarterly planning offsite moved to the zeppelin hangar.\n",
    )
    .unwrap();
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(
        (s.indexed, s.unchanged, s.removed),
        (1, first.indexed - 1, 0),
        "{s:?}"
    );
    let after = b.index.all_chunks().unwrap();
    let keep = |cs: &[groundcite_index::Chunk]| {
        cs.iter()
            .filter(|c| c.path != "fixture/notes.txt")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keep(&before), keep(&after), "other files untouched");
    let hits = b.index.search("zeppelin hangar", 3).unwrap();
    assert_eq!(hits[0].chunk.path, "fixture/notes.txt");
    assert!(
        b.index
            .search("first week of each quarter meeting", 10)
            .unwrap()
            .iter()
            .all(|h| !h.chunk.text.contains("first week"))
    );
    assert_eq!(b.index.num_chunks().unwrap() as usize, after.len());
}

fn reingest_after_delete(make: Make) {
    let Some(mut b) = make("reingest_after_delete") else {
        return;
    };
    let corpus = corpus();
    let first = ingest(b.index.as_mut(), corpus.path());
    fs::remove_file(corpus.path().join("pages/fixture/parking.html")).unwrap();
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(
        (s.indexed, s.unchanged, s.removed),
        (0, first.indexed - 1, 1),
        "{s:?}"
    );
    let chunks = b.index.all_chunks().unwrap();
    assert!(chunks.iter().all(|c| c.path != "fixture/parking.html"));
    assert_eq!(b.index.num_chunks().unwrap() as usize, chunks.len());
    assert!(
        b.index
            .search("parking permits bicycles", 5)
            .unwrap()
            .iter()
            .all(|h| h.chunk.path != "fixture/parking.html")
    );
    // Another root is not touched by this one's deletions.
    let other = tempfile::tempdir().unwrap();
    fs::write(
        other.path().join("solo.md"),
        "# Solo\n\nA lone page about kayaks.\n",
    )
    .unwrap();
    ingest(b.index.as_mut(), other.path());
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(s.removed, 0);
    assert_eq!(
        b.index.search("kayaks", 1).unwrap()[0].chunk.path,
        "solo.md"
    );
}

fn corrupt_file_reported_and_skipped(make: Make) {
    let Some(mut b) = make("corrupt_file") else {
        return;
    };
    let corpus = corpus();
    let first = ingest(b.index.as_mut(), corpus.path());
    // A previously good file turns into invalid UTF-8, and a new bad one.
    fs::write(
        corpus.path().join("pages/fixture/badges.md"),
        b"# Badges\n\xff\xfe broken",
    )
    .unwrap();
    fs::write(corpus.path().join("pages/fixture/bad.md"), b"\xc3\x28 nope").unwrap();
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(s.errors.len(), 2, "{:?}", s.errors);
    let badges = s
        .errors
        .iter()
        .find(|e| e.path.ends_with("badges.md"))
        .unwrap();
    assert!(badges.message.contains("UTF-8"), "{}", badges.message);
    assert!(
        badges.message.contains("previous chunks were removed"),
        "{}",
        badges.message
    );
    assert_eq!(s.unchanged, first.indexed - 1);
    let chunks = b.index.all_chunks().unwrap();
    assert!(
        chunks
            .iter()
            .all(|c| c.path != "fixture/badges.md" && c.path != "fixture/bad.md")
    );
    // Fixed again: indexed again.
    fs::write(
        corpus.path().join("pages/fixture/badges.md"),
        "# Badges\n\nFixed.\n",
    )
    .unwrap();
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!(s.indexed, 1, "{s:?}");
    assert_eq!(s.errors.len(), 1, "bad.md still bad");
}

fn failed_run_changes_nothing(make: Make) {
    let Some(mut b) = make("failed_run") else {
        return;
    };
    let corpus = corpus();
    ingest(b.index.as_mut(), corpus.path());
    let before = b.index.all_chunks().unwrap();
    fs::write(
        corpus.path().join("pages/fixture/notes.txt"),
        "Changed notes about walruses.\n",
    )
    .unwrap();
    fs::remove_file(corpus.path().join("pages/fixture/parking.html")).unwrap();
    // The run dies half-way (a panicking progress callback stands for a crash).
    let index = &mut b.index;
    let root = corpus.path().to_path_buf();
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut n = 0;
        let _ = index.ingest(&[root], &opts(), &mut |p| {
            if let groundcite_index::Progress::File { .. } = p {
                n += 1;
                if n == 6 {
                    panic!("simulated crash");
                }
            }
        });
    }));
    assert!(died.is_err());
    assert_eq!(b.index.all_chunks().unwrap(), before);
    assert_eq!(b.index.num_chunks().unwrap() as usize, before.len());
    // The next run does all of it.
    let s = ingest(b.index.as_mut(), corpus.path());
    assert_eq!((s.indexed, s.removed), (1, 1), "{s:?}");
}

fn in_memory_documents(make: Make) {
    let Some(mut b) = make("in_memory") else {
        return;
    };
    let o = IngestOptions::default();
    let docs = [
        ("a.md", "# Alpha\n\nAardvarks eat ants.\n"),
        ("b.txt", "Beavers build dams.\n"),
    ];
    let s = b
        .index
        .ingest_documents("mem", &docs, &o, &mut |_| {})
        .unwrap();
    assert_eq!(s.indexed, 2);
    let s = b
        .index
        .ingest_documents("mem", &docs, &o, &mut |_| {})
        .unwrap();
    assert_eq!((s.indexed, s.unchanged), (0, 2));
    let hits = b.index.search("aardvarks", 5).unwrap();
    assert_eq!(hits[0].chunk.page_url(), "doc://mem/a.md");
    let s = b
        .index
        .ingest_documents("mem", &docs[..1], &o, &mut |_| {})
        .unwrap();
    assert_eq!(s.removed, 1);
    assert!(b.index.search("beavers", 5).unwrap().is_empty());
}

fn query_syntax_never_errors(make: Make) {
    let Some(mut b) = make("query_syntax") else {
        return;
    };
    let corpus = corpus();
    ingest(b.index.as_mut(), corpus.path());
    let long = "badge ".repeat(500);
    for q in [
        "",
        "   ",
        "the and of",
        "how many can my",
        "\"lost badge\" AND (visitors OR -parking) title:x",
        "badge* ~2 ^3 [1 TO 5] {a TO b} \\ / : ! &&",
        "badge & | ! <-> :* @@ ( ) ' ''",
        "'; DROP TABLE chunks; --",
        "$1 $2 %s {} {{}} {columns}",
        "résumé café naïve 日本語 emoji 🎉 x²",
        "e-mail 4-6 401(k) A/B c++ c#",
        "\u{0}\u{7f}",
        long.as_str(),
    ] {
        let hits = b
            .index
            .search(q, 5)
            .unwrap_or_else(|e| panic!("query {q:?} failed: {e}"));
        for h in &hits {
            assert!((0.0..=1.0).contains(&h.score), "{q:?}: {}", h.score);
        }
    }
    assert!(b.index.search("lost badge", 0).unwrap().is_empty());
    assert_eq!(
        b.index.all_chunks().unwrap().len() as u64,
        b.index.num_chunks().unwrap()
    );
}

fn scores_are_normalised(make: Make) {
    let Some(mut b) = make("scores") else { return };
    let corpus = corpus();
    ingest(b.index.as_mut(), corpus.path());
    // Every analysed term present: 1.
    let hits = b
        .index
        .search("replacement badge security desk", 3)
        .unwrap();
    assert_eq!(hits[0].chunk.section, "Lost badges");
    assert!((hits[0].score - 1.0).abs() < 1e-5, "{}", hits[0].score);
    // A word the corpus never contains weighs most: well under the gate.
    let hits = b.index.search("badge stipend zorblax", 3).unwrap();
    assert!(
        hits[0].score < b.index.default_gate_threshold(),
        "{}",
        hits[0].score
    );
    assert!(hits[0].score > 0.0);
    // Nothing matches: no hits.
    assert!(
        b.index
            .search("zorblax quuxification", 3)
            .unwrap()
            .is_empty()
    );
    for (q, _) in QUESTIONS {
        for h in b.index.search(q, 10).unwrap() {
            assert!((0.0..=1.0).contains(&h.score), "{q}: {}", h.score);
        }
    }
}

fn answers_questions(make: Make) {
    let Some(mut b) = make("answers") else { return };
    let corpus = corpus();
    ingest(b.index.as_mut(), corpus.path());
    for (q, gold) in QUESTIONS {
        let hits = b.index.search(q, 5).unwrap();
        assert!(
            hits.iter().any(|h| h.chunk.path == *gold),
            "{q}: {:?}",
            hits.iter().map(|h| &h.chunk.id).collect::<Vec<_>>()
        );
        assert!(
            hits[0].score >= b.index.default_gate_threshold(),
            "{q}: {}",
            hits[0].score
        );
    }
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod embedded_index {
            $(#[test] fn $name() { super::$name(super::embedded) })*
        }
        mod postgres_index {
            $(#[test] fn $name() { super::$name(super::postgres) })*
        }
    };
}

contract!(
    ingests_a_folder,
    reingest_unchanged_keeps_ids,
    reingest_after_edit,
    reingest_after_delete,
    corrupt_file_reported_and_skipped,
    failed_run_changes_nothing,
    in_memory_documents,
    query_syntax_never_errors,
    scores_are_normalised,
    answers_questions,
);

// -------------------------------------------- across backends and PostgreSQL

#[test]
fn both_backends_give_identical_chunks() {
    let Some(mut pg) = postgres("identical") else {
        return;
    };
    let mut emb = embedded("identical").unwrap();
    let corpus = corpus();
    let a = ingest(emb.index.as_mut(), corpus.path());
    let b = ingest(pg.index.as_mut(), corpus.path());
    assert_eq!(a, b);
    let (ea, pa) = (
        emb.index.all_chunks().unwrap(),
        pg.index.all_chunks().unwrap(),
    );
    assert_eq!(ea.len(), pa.len());
    for (e, p) in ea.iter().zip(&pa) {
        assert_eq!(e, p);
    }
    // Same top hit for the questions.
    for (q, _) in QUESTIONS {
        let e = emb.index.search(q, 1).unwrap();
        let p = pg.index.search(q, 1).unwrap();
        assert_eq!(e[0].chunk.path, p[0].chunk.path, "{q}");
    }
}

#[test]
fn migrate_is_idempotent_and_safe_under_races() {
    let Some(url) = database_url() else { return };
    let opts = PgOptions::default().with_schema(schema_for("migrate_race"));
    let before = groundcite_pg::status(&url, &opts).unwrap();
    assert!(before.is_behind());
    assert_eq!(before.applied.len(), 0);
    assert_eq!(before.pending.len(), groundcite_pg::MIGRATIONS.len());
    let reports: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| groundcite_pg::migrate(&url, &opts)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
    });
    let applied: usize = reports.iter().map(|r| r.applied_now.len()).sum();
    assert_eq!(
        applied,
        groundcite_pg::MIGRATIONS.len(),
        "each migration applied once"
    );
    let again = groundcite_pg::migrate(&url, &opts).unwrap();
    assert!(again.applied_now.is_empty());
    let st = groundcite_pg::status(&url, &opts).unwrap();
    assert!(!st.is_behind() && st.unknown.is_empty() && st.modified.is_empty());
    assert_eq!(st.version(), groundcite_pg::latest_version());
    assert!(!st.target.contains("groundcite-test") || !url.contains(":groundcite-test@"));
    groundcite_pg::drop_schema(&url, &opts).unwrap();
}

#[test]
fn schema_behind_asks_for_migrate() {
    let Some(url) = database_url() else { return };
    let opts = PgOptions::default().with_schema(schema_for("behind"));
    let err = PgIndex::connect(&url, opts.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("run `groundcite db migrate`"), "{err}");
    assert!(err.contains("version 0"), "{err}");
    groundcite_pg::drop_schema(&url, &opts).unwrap();
}

#[test]
fn database_down_is_a_clear_error_without_the_password() {
    // Port 1 on loopback: nothing listens there. No server needed.
    let url = "postgres://someone:hunter2@127.0.0.1:1/groundcite";
    let err = PgIndex::connect(url, PgOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot connect to postgres://someone@127.0.0.1:1/groundcite: "),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    let err = groundcite_pg::status(url, &PgOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot connect to postgres://someone@127.0.0.1:1/groundcite"),
        "{err}"
    );
    assert!(!err.contains("hunter2"));
}

#[test]
fn works_from_inside_an_async_runtime() {
    let Some(mut b) = postgres("async") else {
        return;
    };
    b.index
        .ingest_documents(
            "mem",
            &[("a.md", "# A\n\nAardvarks.\n")],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let index = b.index.as_ref();
    let hits = rt.block_on(async { index.search("aardvarks", 3).unwrap() });
    assert_eq!(hits.len(), 1);
}

#[test]
fn reads_survive_dropped_connections() {
    let Some(url) = database_url() else { return };
    let app = format!("gc_retry_{}", std::process::id());
    let sep = if url.contains('?') { '&' } else { '?' };
    let url_app = format!("{url}{sep}application_name={app}");
    let opts = PgOptions::default().with_schema(schema_for("retry"));
    groundcite_pg::migrate(&url_app, &opts).unwrap();
    let mut index = PgIndex::connect(&url_app, opts.clone()).unwrap();
    index
        .ingest_documents(
            "mem",
            &[("a.md", "# A\n\nAardvarks.\n")],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(index.search("aardvarks", 3).unwrap().len(), 1);
    // Kill every pooled connection of this index behind its back.
    let killed: i64 = common::query_one(
        &url,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
        &[&app],
    )
    .get(0);
    assert!(killed >= 1, "no connection to kill");
    std::thread::sleep(std::time::Duration::from_millis(100));
    // The pool hands out a dead connection; the read is retried on a new one.
    assert_eq!(index.search("aardvarks", 3).unwrap().len(), 1);
    assert_eq!(index.num_chunks().unwrap(), 1);
    drop(index);
    groundcite_pg::drop_schema(&url, &opts).unwrap();
}

/// Two processes ingesting into one schema at once: the advisory lock makes
/// them run one after the other, and the triggers keep the statistics exact.
#[test]
fn concurrent_ingests_serialise_and_statistics_stay_exact() {
    let Some(url) = database_url() else { return };
    let opts = PgOptions::default().with_schema(schema_for("concurrent"));
    groundcite_pg::migrate(&url, &opts).unwrap();
    let corpus = corpus();
    let summaries: Vec<IngestSummary> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut index = PgIndex::connect(&url, opts.clone()).unwrap();
                    ingest(&mut index, corpus.path())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let indexed: Vec<usize> = summaries.iter().map(|s| s.indexed).collect();
    assert!(
        indexed.contains(&0),
        "one run found everything done: {indexed:?}"
    );
    let mut index = PgIndex::connect(&url, opts.clone()).unwrap();
    fs::write(
        corpus.path().join("pages/fixture/notes.txt"),
        "Walrus notes.\n",
    )
    .unwrap();
    fs::remove_file(corpus.path().join("pages/fixture/parking.html")).unwrap();
    ingest(&mut index, corpus.path());
    let (bad_terms, chunks, counted) = statistics(&url, &opts.schema);
    assert_eq!(bad_terms, 0, "term_df differs from the chunks");
    assert_eq!(chunks, counted);
    assert_eq!(index.num_chunks().unwrap() as i64, counted);
    drop(index);
    groundcite_pg::drop_schema(&url, &opts).unwrap();
}

/// The term statistics of `schema` against the truth recomputed from its
/// chunks: lexemes whose `df` differs, the chunk count of `corpus_stats`,
/// and the rows of `chunks`.
fn statistics(url: &str, schema: &str) -> (i64, i64, i64) {
    let s = schema;
    let row = common::query_one(
        url,
        &format!(
            "WITH truth AS (SELECT l AS lexeme, count(*) AS df
                            FROM {s}.chunks, unnest(tsvector_to_array(tsv)) AS l GROUP BY l)
             SELECT (SELECT count(*) FROM truth FULL JOIN {s}.term_df d USING (lexeme)
                     WHERE truth.df IS DISTINCT FROM d.df),
                    (SELECT chunks FROM {s}.corpus_stats),
                    (SELECT count(*) FROM {s}.chunks)"
        ),
        &[],
    );
    (row.get(0), row.get(1), row.get(2))
}

/// A run of many PostgreSQL batches (files are written together, a batch
/// at a time; batches of 300 chunks here): the same chunks as the embedded index,
/// before and after a re-ingest that edits, deletes and adds files, with
/// exact term statistics.
#[test]
fn runs_larger_than_a_batch_match_the_embedded_index() {
    let Some(url) = database_url() else { return };
    let opts = PgOptions {
        ingest_batch_chunks: 300,
        ..PgOptions::default().with_schema(schema_for("large_run"))
    };
    groundcite_pg::migrate(&url, &opts).unwrap();
    let mut pg = PgIndex::connect(&url, opts.clone()).unwrap();
    let mut emb = embedded("large_run").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = |i: usize, edition: usize| -> String {
        (0..24)
            .map(|p| {
                format!(
                    "Paragraph {p} of note {i} (edition {edition}) covers topic{i}x{p} and the \
                     shared subject of leave, travel and badges in some detail, with enough words \
                     to fill a chunk of its own: {}.\n\n",
                    "detail ".repeat(90)
                )
            })
            .collect()
    };
    for i in 0..40 {
        fs::write(dir.path().join(format!("note-{i:03}.txt")), page(i, 1)).unwrap();
    }
    let first_pg = ingest(&mut pg, dir.path());
    let first_emb = ingest(emb.index.as_mut(), dir.path());
    assert_eq!(first_pg, first_emb);
    assert!(
        first_pg.chunks > 900,
        "{} chunks: several batches",
        first_pg.chunks
    );
    assert_eq!(pg.all_chunks().unwrap(), emb.index.all_chunks().unwrap());
    for i in 0..10 {
        fs::write(dir.path().join(format!("note-{i:03}.txt")), page(i, 2)).unwrap();
        fs::remove_file(dir.path().join(format!("note-{:03}.txt", 20 + i))).unwrap();
    }
    for i in 200..205 {
        fs::write(dir.path().join(format!("note-{i:03}.txt")), page(i, 1)).unwrap();
    }
    let second_pg = ingest(&mut pg, dir.path());
    assert_eq!(second_pg, ingest(emb.index.as_mut(), dir.path()));
    assert_eq!((second_pg.indexed, second_pg.removed), (15, 10));
    assert_eq!(pg.all_chunks().unwrap(), emb.index.all_chunks().unwrap());
    let (bad_terms, chunks, counted) = statistics(&url, &opts.schema);
    assert_eq!(bad_terms, 0, "term_df differs from the chunks");
    assert_eq!(chunks, counted);
    drop(pg);
    groundcite_pg::drop_schema(&url, &opts).unwrap();
}
