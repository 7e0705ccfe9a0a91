//! Chunk vectors in PostgreSQL (pgvector): stored at ingest, incremental
//! per file, re-embedded for another model, and hybrid search fused exactly
//! as the embedded index fuses, with `groundcite_index::testing::HashEmbedder`
//! standing in for the model (the same double as `crates/index/tests/vectors.rs`).
//!
//! Reads `GROUNDCITE_TEST_DATABASE_URL` (see `.ci/pg.sh`): skipped without
//! it, failed under `CI=true`. Every test gets its own schema.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use groundcite_index::fusion::Method;
use groundcite_index::testing::HashEmbedder;
use groundcite_index::{ChunkIndex, Fusion, Index, IngestOptions, IngestSummary, Progress};
use groundcite_pg::{PgIndex, PgOptions};

mod common;

/// A PostgreSQL index in a schema of its own, dropped at the end.
struct Pg {
    index: PgIndex,
    url: String,
    opts: PgOptions,
}

impl Drop for Pg {
    fn drop(&mut self) {
        if std::env::var_os("GROUNDCITE_TEST_KEEP_SCHEMAS").is_none() {
            let _ = groundcite_pg::drop_schema(&self.url, &self.opts);
        }
    }
}

fn postgres(name: &str) -> Option<Pg> {
    let url = groundcite_testdata::database_url("the PostgreSQL vector tests")?;
    let opts = PgOptions::default().with_schema(format!("t_vec_{name}_{}", std::process::id()));
    let _ = groundcite_pg::drop_schema(&url, &opts);
    groundcite_pg::migrate(&url, &opts).expect("migrate");
    let index = PgIndex::connect(&url, opts.clone()).expect("connect");
    Some(Pg { index, url, opts })
}

fn write_docs(root: &Path) {
    fs::create_dir_all(root).unwrap();
    fs::write(
        root.join("leave.md"),
        "# Leave\n\nAnnual leave accrues every pay period.\n\n## Sick leave\n\nSick leave covers illness.\n",
    )
    .unwrap();
    fs::write(
        root.join("travel.md"),
        "# Travel\n\nBook flights through the travel system.\n",
    )
    .unwrap();
    fs::write(
        root.join("badge.md"),
        "# Badge\n\nYour PIV card opens the doors.\n",
    )
    .unwrap();
}

fn ingest(index: &mut dyn ChunkIndex, root: &Path) -> IngestSummary {
    index
        .ingest(
            &[root.to_path_buf()],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap()
}

#[test]
fn vectors_are_incremental_per_file() {
    let Some(mut pg) = postgres("incremental") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    write_docs(&root);
    let toy = HashEmbedder::new("toy-1");
    pg.index.set_embedder(toy.clone());
    let mut events = Vec::new();
    let s = pg
        .index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |p| events.push(p),
        )
        .unwrap();
    let chunks = pg.index.num_chunks().unwrap();
    assert_eq!(s.embedded as u64, chunks);
    // The chunks' answer units are embedded too.
    let texts = toy.texts_embedded();
    assert!(
        texts > s.embedded,
        "{texts} texts for {} chunks",
        s.embedded
    );
    assert!(events.contains(&Progress::Embedding {
        done: s.embedded,
        total: s.embedded
    }));
    let status = pg.index.vector_status("toy-1").unwrap();
    assert_eq!((status.files_without, status.vectors), (0, chunks));
    pg.index.check_vectors("toy-1").unwrap();

    // Unchanged: nothing embedded.
    let before = toy.texts_embedded();
    let s = ingest(&mut pg.index, &root);
    assert_eq!((s.unchanged, s.embedded), (3, 0));
    assert_eq!(toy.texts_embedded(), before);

    // One file changed, one removed: only the changed file's chunk is
    // embedded; the removed file's vectors go with its chunks.
    fs::write(root.join("travel.md"), "# Travel\n\nBook trains too.\n").unwrap();
    fs::remove_file(root.join("badge.md")).unwrap();
    let s = ingest(&mut pg.index, &root);
    assert_eq!(
        (s.indexed, s.unchanged, s.removed, s.embedded),
        (1, 1, 1, 1)
    );
    let status = pg.index.vector_status("toy-1").unwrap();
    assert_eq!(status.vectors, pg.index.num_chunks().unwrap());
    assert_eq!((status.files, status.files_without), (2, 0));

    // Another connection (another node) sees the same vectors.
    let other = PgIndex::connect(&pg.url, pg.opts.clone()).unwrap();
    other.check_vectors("toy-1").unwrap();
    assert!(other.has_vectors().unwrap());
}

#[test]
fn another_model_re_embeds_everything_and_says_so() {
    let Some(mut pg) = postgres("model_change") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    write_docs(&root);
    pg.index.set_embedder(HashEmbedder::new("toy-1"));
    let first = ingest(&mut pg.index, &root);
    let err = pg.index.check_vectors("toy-2").unwrap_err().to_string();
    assert!(err.contains("another model (toy-1)"), "{err}");
    pg.index.set_embedder(HashEmbedder::new("toy-2"));
    let s = ingest(&mut pg.index, &root);
    assert_eq!(s.model_changed.as_deref(), Some("toy-1"));
    assert_eq!((s.indexed, s.unchanged, s.embedded), (3, 0, first.embedded));
    pg.index.check_vectors("toy-2").unwrap();
    assert!(pg.index.check_vectors("toy-1").is_err());
}

#[test]
fn an_index_without_vectors_is_an_error_until_ingested_with_the_model() {
    let Some(mut pg) = postgres("no_vectors") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    write_docs(&root);
    ingest(&mut pg.index, &root);
    assert!(!pg.index.has_vectors().unwrap());
    let err = pg.index.check_vectors("toy-1").unwrap_err();
    let message = err.to_string();
    assert!(message.contains("without an embedding model"), "{message}");
    assert!(message.contains("groundcite ingest"), "{message}");
    assert!(
        matches!(
            groundcite_index::Error::from(err),
            groundcite_index::Error::Vectors(_)
        ),
        "the index crate's error for missing vectors"
    );

    // Ingesting with the model embeds the files it had skipped as unchanged.
    pg.index.set_embedder(HashEmbedder::new("toy-1"));
    let s = ingest(&mut pg.index, &root);
    assert_eq!((s.indexed, s.unchanged, s.model_changed), (3, 0, None));
    pg.index.check_vectors("toy-1").unwrap();
}

#[test]
fn a_failing_model_fails_the_run_and_changes_nothing() {
    let Some(mut pg) = postgres("failing") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    write_docs(&root);
    pg.index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut pg.index, &root);
    let before = pg.index.all_chunks().unwrap();
    fs::write(root.join("travel.md"), "# Travel\n\nBook trains too.\n").unwrap();
    pg.index.set_embedder(HashEmbedder::failing("toy-1"));
    let err = pg
        .index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap_err();
    assert!(err.to_string().contains("out of memory"), "{err}");
    assert_eq!(pg.index.all_chunks().unwrap(), before);
    pg.index.check_vectors("toy-1").unwrap();
}

/// The same chunks and vectors in both backends rank the same by cosine
/// (the dense half of hybrid search: the same chunks in the same order,
/// ties by file and chunk id); fused with each backend's own full-text
/// ranking (BM25 there, `ts_rank` here), both find the gold pages.
#[test]
fn hybrid_search_ranks_as_the_embedded_index() {
    let Some(mut pg) = postgres("hybrid") else {
        return;
    };
    let pages = groundcite_testdata::fixture("corpora/tts-handbook/pages");
    let toy = HashEmbedder::new("toy-1");
    let dir = tempfile::tempdir().unwrap();
    let mut embedded = Index::open_or_create(&dir.path().join("index")).unwrap();
    embedded.set_embedder(toy.clone());
    pg.index.set_embedder(toy.clone());
    let opts = IngestOptions::handbook();
    let a = embedded
        .ingest(std::slice::from_ref(&pages), &opts, &mut |_| {})
        .unwrap();
    let b = pg
        .index
        .ingest(std::slice::from_ref(&pages), &opts, &mut |_| {})
        .unwrap();
    assert_eq!(a.embedded, b.embedded);
    assert!(a.embedded > 20, "{a:?}");

    let ids = |hits: &[groundcite_index::Hit]| -> Vec<String> {
        hits.iter().map(|h| h.chunk.id.clone()).collect()
    };
    let dense = Fusion {
        method: Method::Dense,
        lexical_depth: 100,
    };
    let mut compared = 0;
    for query in [
        "How many weeks of unpaid leave does FMLA give?",
        "Who approves a reasonable accommodation?",
        "how do I book travel",
        "the",
        "zzzz unknown words",
    ] {
        let vector = HashEmbedder::vector(query);
        let want = embedded.search_hybrid(query, &vector, 8, &dense).unwrap();
        let got = pg.index.search_hybrid(query, &vector, 8, &dense).unwrap();
        assert_eq!(ids(&got), ids(&want), "{query}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.chunk, w.chunk, "{query}");
            assert!((0.0..=1.0).contains(&g.score), "{g:?}");
            // Each hit carries its chunk's unit vectors, the same on both.
            let (gu, wu) = (g.units.as_ref().unwrap(), w.units.as_ref().unwrap());
            assert_eq!(gu.len(), wu.len(), "{}", g.chunk.id);
            assert!(
                gu.data
                    .iter()
                    .zip(&wu.data)
                    .all(|(a, b)| (a - b).abs() < 1e-6),
                "{}",
                g.chunk.id
            );
        }
        compared += got.len();
    }
    assert_eq!(compared, 40);

    let fusion = Fusion::default();
    for (query, gold) in [
        (
            "How many weeks of unpaid leave does FMLA give per 12 month period?",
            "travel-and-leave/fmla.md",
        ),
        (
            "Can my supervisor approve an accommodation that will last less than 6 months?",
            "general-information-and-resources/reasonable-accommodations.md",
        ),
    ] {
        let vector = HashEmbedder::vector(query);
        for hits in [
            embedded.search_hybrid(query, &vector, 3, &fusion).unwrap(),
            pg.index.search_hybrid(query, &vector, 3, &fusion).unwrap(),
        ] {
            assert!(
                hits.iter().any(|h| h.chunk.path.ends_with(gold)),
                "{query}: {:?}",
                ids(&hits)
            );
            assert!(hits.iter().any(|h| h.raw_score > 0.0), "{query}");
        }
    }
    let none = pg
        .index
        .search_hybrid("leave", &HashEmbedder::vector("leave"), 0, &fusion);
    assert!(none.unwrap().is_empty());
}

/// Past `ann_min_chunks` chunk vectors an ingest builds the approximate
/// (HNSW) index and says so; hybrid search then scores its candidates and
/// the full-text top rather than every vector, and ranks (nearly) as the
/// embedded index's exact search; later ingests keep it current.
#[test]
fn hybrid_search_through_the_approximate_index() {
    let Some(url) = groundcite_testdata::database_url("the PostgreSQL vector tests") else {
        return;
    };
    // One connection: the ingest after the searches runs on the
    // connection they ran on, so a search that left its transaction open
    // (read only) would fail it.
    let opts = PgOptions {
        ann_min_chunks: 100,
        pool_size: 1,
        ..PgOptions::default().with_schema(format!("t_vec_ann_{}", std::process::id()))
    };
    let _ = groundcite_pg::drop_schema(&url, &opts);
    groundcite_pg::migrate(&url, &opts).expect("migrate");
    let mut pg = Pg {
        index: PgIndex::connect(&url, opts.clone()).expect("connect"),
        url,
        opts,
    };
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    fs::create_dir_all(&pages).unwrap();
    copy_tree(
        &groundcite_testdata::fixture("corpora/tts-handbook/pages"),
        &pages,
    );
    let toy = HashEmbedder::new("toy-1");
    let mut embedded = Index::open_or_create(&dir.path().join("index")).unwrap();
    embedded.set_embedder(toy.clone());
    pg.index.set_embedder(toy.clone());
    let opts = IngestOptions::handbook();
    let a = embedded
        .ingest(std::slice::from_ref(&pages), &opts, &mut |_| {})
        .unwrap();
    let mut indexed = Vec::new();
    let b = pg
        .index
        .ingest(std::slice::from_ref(&pages), &opts, &mut |p| {
            if let Progress::IndexingVectors { chunks } = p {
                indexed.push(chunks);
            }
        })
        .unwrap();
    assert_eq!(a.embedded, b.embedded);
    assert!(b.embedded > 100, "{b:?}");
    assert_eq!(
        indexed,
        vec![b.embedded],
        "the index is built once, over every vector"
    );
    assert!(ann_index_exists(
        &pg.url,
        &pg.opts.schema,
        HashEmbedder::DIMENSIONS
    ));

    let dense = Fusion {
        method: Method::Dense,
        lexical_depth: 100,
    };
    let queries = [
        "How many weeks of unpaid leave does FMLA give?",
        "how do I book travel",
        "Who pays for a rental car on official travel?",
        "can I carry annual leave over to next year",
    ];
    let mut same = 0;
    for query in queries {
        let vector = HashEmbedder::vector(query);
        let want = embedded.search_hybrid(query, &vector, 8, &dense).unwrap();
        let got = pg.index.search_hybrid(query, &vector, 8, &dense).unwrap();
        assert_eq!(got.len(), 8, "{query}");
        same += got
            .iter()
            .filter(|g| want.iter().any(|w| w.chunk == g.chunk))
            .count();
        // Each hit with its chunk's unit vectors.
        assert!(got.iter().all(|h| h.units.is_some()), "{query}");
    }
    assert!(
        same >= 30,
        "{same} of 32 hits shared with the exact ranking"
    );
    // The dense side alone (no full-text top) still ranks the shortlist of
    // the index's `ann_candidates` (1,000), not pgvector's default breadth
    // of 40.
    let alone = Fusion {
        method: Method::Dense,
        lexical_depth: 0,
    };
    let query = queries[0];
    let got = pg
        .index
        .search_hybrid(query, &HashEmbedder::vector(query), 60, &alone)
        .unwrap();
    assert_eq!(got.len(), 60, "{query}");

    // A page added later is in the index without a rebuild.
    fs::write(
        pages.join("zeppelin.md"),
        "# Zeppelin travel\n\nZeppelin quokka marzipan voyages need a waiver.\n",
    )
    .unwrap();
    let mut rebuilt = false;
    pg.index
        .ingest(std::slice::from_ref(&pages), &opts, &mut |p| {
            rebuilt |= matches!(p, Progress::IndexingVectors { .. });
        })
        .unwrap();
    assert!(!rebuilt);
    let query = "zeppelin quokka marzipan voyages waiver";
    let hits = pg
        .index
        .search_hybrid(query, &HashEmbedder::vector(query), 3, &dense)
        .unwrap();
    assert!(
        hits[0].chunk.path.ends_with("zeppelin.md"),
        "{:?}",
        hits[0].chunk.path
    );
    // The units' sign codes follow every insert and delete of unit vectors.
    fs::remove_file(pages.join("zeppelin.md")).unwrap();
    pg.index
        .ingest(std::slice::from_ref(&pages), &opts, &mut |_| {})
        .unwrap();
    assert_unit_codes_agree(&pg.url, &pg.opts.schema);
}

/// Every chunk of `schema` with unit vectors has a row of `unit_codes`
/// (and no other chunk has one), holding each unit's code in unit order:
/// its signs, the first value in the high bit, then its mean absolute
/// value as a big-endian float4.
fn assert_unit_codes_agree(url: &str, schema: &str) {
    let units = common::query(
        url,
        &format!(
            "SELECT u.chunk_seq, u.embedding::float4[] FROM {schema}.unit_vectors u
             ORDER BY u.chunk_seq, u.ord"
        ),
        &[],
    );
    let mut want: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    for row in &units {
        let values: Vec<f32> = row.get(1);
        let code = want.entry(row.get(0)).or_default();
        let mut bits = vec![0u8; values.len().div_ceil(8)];
        for (i, &x) in values.iter().enumerate() {
            if x > 0.0 {
                bits[i / 8] |= 0x80 >> (i % 8);
            }
        }
        code.extend(bits);
        let mean = values.iter().map(|x| f64::from(x.abs())).sum::<f64>() / values.len() as f64;
        code.extend((mean as f32).to_be_bytes());
    }
    assert!(want.len() > 100, "{} chunks with units", want.len());
    let stored = common::query(
        url,
        &format!("SELECT chunk_seq, codes FROM {schema}.unit_codes ORDER BY chunk_seq"),
        &[],
    );
    let got: BTreeMap<i64, Vec<u8>> = stored.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the chunks with codes are the chunks with units"
    );
    for (seq, code) in &want {
        assert_eq!(&got[seq], code, "chunk {seq}");
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Whether schema `schema` has the approximate index over vectors of
/// dimension `dim`.
fn ann_index_exists(url: &str, schema: &str, dim: usize) -> bool {
    let name = format!("{schema}.chunk_vectors_ann_{dim}");
    common::query_one(url, "SELECT to_regclass($1::text) IS NOT NULL", &[&name]).get(0)
}
