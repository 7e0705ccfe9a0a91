//! Chunk vectors at ingest (incremental, per model) and hybrid search, with
//! `testing::HashEmbedder` standing in for the model.

use std::fs;
use std::path::Path;

use groundcite_index::testing::HashEmbedder;
use groundcite_index::vectors::VECTORS_FILE;
use groundcite_index::{ChunkIndex, Error, Fusion, Index, IngestOptions, Progress};

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

/// Rewrites the vectors file at `path` as a version before the units'
/// sign codes wrote it: its ANN section (a length, then the bytes, at the
/// end of the file) holds the inverted file alone.
fn strip_unit_codes(path: &Path) {
    let bytes = fs::read(path).unwrap();
    let at = (0..bytes.len() - 8)
        .rev()
        .find(|&p| {
            let len = u64::from_le_bytes(bytes[p..p + 8].try_into().unwrap());
            len > 0 && len as usize == bytes.len() - p - 8
        })
        .expect("an ANN section");
    let (_, used) = groundcite_index::ann::Ivf::decode_prefix(&bytes[at + 8..]).unwrap();
    assert!(
        used < bytes.len() - at - 8,
        "unit codes follow the inverted file"
    );
    let mut old = bytes[..at].to_vec();
    old.extend_from_slice(&(used as u64).to_le_bytes());
    old.extend_from_slice(&bytes[at + 8..at + 8 + used]);
    fs::write(path, old).unwrap();
}

fn ingest(index: &mut Index, root: &Path) -> groundcite_index::IngestSummary {
    index
        .ingest(
            &[root.to_path_buf()],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap()
}

#[test]
fn vectors_are_incremental_per_file_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    write_docs(&root);
    let toy = HashEmbedder::new("toy-1");
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(toy.clone());
    let mut events = Vec::new();
    let s = index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |p| events.push(p),
        )
        .unwrap();
    assert_eq!(s.embedded as u64, index.num_chunks());
    assert_eq!(index.vectors().len() as u64, index.num_chunks());
    // Every chunk's answer units are embedded too, in the order the
    // answerability judgement reads them.
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
    let store = index.vectors();
    for chunk in index.all_chunks().unwrap() {
        let units = groundcite_core::unit::units(&[(&chunk.section, &chunk.text)]);
        let (key, _) = store
            .files()
            .expect("a small store is in memory")
            .iter()
            .find(|(_, f)| f.ids.contains(&chunk.id))
            .unwrap();
        let stored = store.units_of(key, &chunk.id).unwrap().unwrap();
        assert_eq!(stored.len(), units.len(), "{}", chunk.id);
        for (i, u) in units.iter().enumerate() {
            assert_eq!(
                stored.row(i),
                HashEmbedder::vector(&u.embedded),
                "{}",
                u.embedded
            );
        }
    }
    assert!(at.join(VECTORS_FILE).exists());
    index.check_vectors("toy-1").unwrap();

    // Unchanged: nothing embedded.
    let before = toy.texts_embedded();
    let s = ingest(&mut index, &root);
    assert_eq!((s.unchanged, s.embedded), (3, 0));
    assert_eq!(toy.texts_embedded(), before);

    // One file changed, one removed: only the changed file's chunks are
    // embedded; the removed file's vectors go.
    fs::write(root.join("travel.md"), "# Travel\n\nBook trains too.\n").unwrap();
    fs::remove_file(root.join("badge.md")).unwrap();
    let s = ingest(&mut index, &root);
    assert_eq!(
        (s.indexed, s.unchanged, s.removed, s.embedded),
        (1, 1, 1, 1)
    );
    assert_eq!(index.vectors().len() as u64, index.num_chunks());
    assert!(
        index
            .vectors()
            .files()
            .unwrap()
            .keys()
            .all(|k| !k.ends_with("badge.md"))
    );

    // Reopened: the same vectors, read from the file.
    let vectors = index.vectors().clone();
    drop(index);
    let index = Index::open(&at).unwrap();
    assert_eq!(index.vectors(), &vectors);
    index.check_vectors("toy-1").unwrap();
}

#[test]
fn another_model_re_embeds_everything_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    write_docs(&root);
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    let first = ingest(&mut index, &root);
    index.set_embedder(HashEmbedder::new("toy-2"));
    assert!(index.check_vectors("toy-2").is_err());
    let s = ingest(&mut index, &root);
    assert_eq!(s.model_changed.as_deref(), Some("toy-1"));
    assert_eq!((s.indexed, s.unchanged, s.embedded), (3, 0, first.embedded));
    index.check_vectors("toy-2").unwrap();
    assert_eq!(index.vectors().model_id, "toy-2");
}

#[test]
fn an_index_without_vectors_opened_with_a_model_is_an_error_until_re_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    write_docs(&root);
    let mut index = Index::open_or_create(&at).unwrap();
    ingest(&mut index, &root);
    assert!(index.vectors().is_empty());
    let err = index.check_vectors("toy-1").unwrap_err();
    assert!(matches!(err, Error::Vectors(_)));
    let message = err.to_string();
    assert!(message.contains("without an embedding model"), "{message}");
    assert!(message.contains("groundcite ingest"), "{message}");

    // Ingesting with the model embeds the files it had skipped as unchanged.
    index.set_embedder(HashEmbedder::new("toy-1"));
    let s = ingest(&mut index, &root);
    assert_eq!((s.indexed, s.unchanged, s.model_changed), (3, 0, None));
    index.check_vectors("toy-1").unwrap();
}

#[test]
fn a_failing_model_fails_the_run_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    write_docs(&root);
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut index, &root);
    let (chunks, vectors) = (index.num_chunks(), index.vectors().clone());
    fs::write(root.join("travel.md"), "# Travel\n\nBook trains too.\n").unwrap();
    index.set_embedder(HashEmbedder::failing("toy-1"));
    let err = index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap_err();
    assert!(err.to_string().contains("out of memory"), "{err}");
    assert_eq!(index.num_chunks(), chunks);
    assert_eq!(index.vectors(), &vectors);
    let reopened = Index::open(&at).unwrap();
    assert_eq!(reopened.vectors(), &vectors);
}

#[test]
fn hybrid_search_ranks_by_meaning_and_keeps_scores_in_range() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    write_docs(&root);
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut index, &root);
    // "doors" and "opens" are words of the badge page; the toy vector of
    // the query is close to that chunk's.
    let query = "what opens the doors";
    let hits = index
        .search_hybrid(query, &HashEmbedder::vector(query), 3, &Fusion::default())
        .unwrap();
    assert_eq!(hits[0].chunk.path, "badge.md", "{hits:#?}");
    assert_eq!(hits.len(), 3);
    for h in &hits {
        assert!((0.0..=1.0).contains(&h.score), "{}", h.score);
    }
    // Scores follow the documented mix of cosine and lexical coverage.
    let lexical = index.search(query, 1).unwrap();
    assert_eq!(lexical[0].chunk.id, hits[0].chunk.id);
    assert!(hits[0].score > lexical[0].score * 0.5);
    // A query of no known word still ranks by the dense side.
    let hits = index
        .search_hybrid("zzz", &HashEmbedder::vector("card"), 1, &Fusion::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
}

/// Whether the index's `id` field is a fast field, by its meta.json;
/// `clear` sets it not to be (as versions before the id column created
/// indexes), which an index created but not yet written to takes.
fn id_is_fast(at: &Path, clear: bool) -> bool {
    let path = at.join("meta.json");
    let mut meta: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let field = meta["schema"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|f| f["name"] == "id")
        .unwrap();
    let fast = field["options"]["fast"] != serde_json::Value::Bool(false);
    if clear {
        field["options"]["fast"] = serde_json::Value::Bool(false);
        fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();
    }
    fast
}

/// Hybrid search reads its BM25 hits' ids from the id column; an index
/// written before there was one reads them from the stored documents and
/// finds the same.
#[test]
fn an_index_without_the_id_column_searches_as_one_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    write_docs(&root);
    let open = |name: &str, fast_ids: bool| {
        let at = dir.path().join(name);
        drop(Index::open_or_create(&at).unwrap());
        assert!(id_is_fast(&at, !fast_ids), "new indexes have the column");
        let mut index = Index::open_or_create(&at).unwrap();
        index.set_embedder(HashEmbedder::new("toy-1"));
        ingest(&mut index, &root);
        // The schema the index was created with stays.
        assert_eq!(id_is_fast(&at, false), fast_ids);
        index
    };
    let (new, old) = (open("new", true), open("old", false));
    let chunk_ids: std::collections::HashSet<String> = new
        .all_chunks()
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    for query in ["what opens the doors", "sick leave", "book flights", "zzz"] {
        let v = HashEmbedder::vector(query);
        let (dense, lexical) = new.rankings(query, &v, 10).unwrap();
        let (old_dense, old_lexical) = old.rankings(query, &v, 10).unwrap();
        assert_eq!(old_dense, dense, "{query}");
        let ids = |hits: &[groundcite_index::fusion::LexicalHit]| -> Vec<String> {
            hits.iter().map(|h| h.id.clone()).collect()
        };
        assert_eq!(ids(&old_lexical), ids(&lexical), "{query}");
        assert_eq!(lexical.is_empty(), query == "zzz", "{query}");
        for hit in &lexical {
            assert!(chunk_ids.contains(&hit.id), "{query}: {hit:?}");
        }
        // The same chunks, their raw scores within a millionth: two
        // indexes of the same files can differ in the last bit of a sum
        // (the writer's threads share the documents out between segments
        // as they come).
        let (from_old, from_new) = (
            old.search(query, 10).unwrap(),
            new.search(query, 10).unwrap(),
        );
        assert_eq!(from_old.len(), from_new.len(), "{query}");
        for (a, b) in from_old.iter().zip(&from_new) {
            assert_eq!(a.chunk.id, b.chunk.id, "{query}");
            assert!(
                (a.raw_score - b.raw_score).abs() <= 1e-6 * b.raw_score.abs(),
                "{query}"
            );
        }
        let hybrid = |index: &Index| -> Vec<String> {
            index
                .search_hybrid(query, &v, 5, &Fusion::default())
                .unwrap()
                .into_iter()
                .map(|h| h.chunk.id)
                .collect()
        };
        assert_eq!(hybrid(&old), hybrid(&new), "{query}");
    }
}

/// Hybrid search's BM25 side ranks by the chunk body alone; lexical search
/// also by the section label and the page title.
#[test]
fn hybrid_bm25_reads_the_body_and_lexical_search_the_headings_too() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    fs::create_dir_all(&root).unwrap();
    fs::write(
        root.join("permits.md"),
        "---\ntitle: Parking permits\n---\n\nPermits are issued at the front desk.\n",
    )
    .unwrap();
    fs::write(
        root.join("desk.md"),
        "# Desk\n\nParking near the desk is free.\n",
    )
    .unwrap();
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut index, &root);
    let query = "parking";
    let mut lexical: Vec<String> = index
        .search(query, 5)
        .unwrap()
        .into_iter()
        .map(|h| h.chunk.path)
        .collect();
    lexical.sort();
    assert_eq!(lexical, ["desk.md", "permits.md"], "the title counts");
    let (_, bm25) = index
        .rankings(query, &HashEmbedder::vector(query), 5)
        .unwrap();
    assert_eq!(bm25.len(), 1, "{bm25:?}");
    assert!(bm25[0].id.starts_with("desk.md"), "{bm25:?}");
}

#[test]
fn hybrid_bm25_ranks_the_chunks_of_the_rarest_terms_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    fs::create_dir_all(&root).unwrap();
    // Common words in every page; zebra in 6 (2 of them with quokka too).
    let common = |i: usize| "team office policy. ".repeat(1 + i % 3);
    for i in 0..30 {
        fs::write(root.join(format!("c{i}.md")), common(i)).unwrap();
    }
    for i in 0..4 {
        let text = format!("{} zebra", common(i));
        fs::write(root.join(format!("z{i}.md")), text).unwrap();
    }
    for i in 0..2 {
        let text = format!("{} zebra quokka", common(i));
        fs::write(root.join(format!("q{i}.md")), text).unwrap();
    }
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut index, &root);
    let query = "zebra quokka team office policy";
    let v = HashEmbedder::vector(query);
    let mut bm25 = |budget| {
        index.set_lexical_candidates(budget);
        index.rankings(query, &v, 100).unwrap().1
    };
    let every = bm25(0);
    assert_eq!(every.len(), 36, "{every:?}");
    assert_eq!(bm25(10_000), every, "every term within the budget");
    // The candidates' hits are BM25's over every chunk, scores and order,
    // less the chunks without a term taken.
    let only = |pages: &[char]| -> Vec<(String, f32)> {
        every
            .iter()
            .filter(|h| pages.iter().any(|&p| h.id.starts_with(p)))
            .map(|h| (h.id.clone(), h.raw))
            .collect()
    };
    let same = |got: Vec<groundcite_index::fusion::LexicalHit>, want: Vec<(String, f32)>| {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, (id, raw)) in got.iter().zip(&want) {
            assert_eq!(&g.id, id);
            assert!((g.raw - raw).abs() <= 1e-6 * raw, "{g:?} against {raw}");
        }
    };
    // quokka (2) and zebra (6) fit in 8; the common words do not.
    same(bm25(8), only(&['z', 'q']));
    // quokka alone is over 1: the chunks with both quokka and zebra.
    same(bm25(1), only(&['q']));
}

#[test]
fn a_large_index_searches_through_its_approximate_index_and_keeps_it_current() {
    use groundcite_index::vectors::ANN_MIN_CHUNKS;
    let dir = tempfile::tempdir().unwrap();
    let (root, at) = (dir.path().join("docs"), dir.path().join("index"));
    fs::create_dir_all(&root).unwrap();
    // ANN_MIN_CHUNKS chunks: files of 20 sections, each about its own
    // made-up product.
    let files = ANN_MIN_CHUNKS / 20;
    for f in 0..files {
        let mut page = format!("# Page {f}\n\n");
        for s in 0..20 {
            let n = f * 20 + s;
            page.push_str(&format!(
                "## Section {n}\n\nThe product zq{n}x ships in crate {s} with part pk{n}y.\n\n"
            ));
        }
        fs::write(root.join(format!("p{f}.md")), page).unwrap();
    }
    let mut index = Index::open_or_create(&at).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    let mut events = Vec::new();
    index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |p| {
                if matches!(p, Progress::IndexingVectors { .. } | Progress::Committing) {
                    events.push(p)
                }
            },
        )
        .unwrap();
    let chunks = index.vectors().len();
    assert!(chunks >= ANN_MIN_CHUNKS, "{chunks}");
    assert_eq!(
        events,
        [Progress::IndexingVectors { chunks }, Progress::Committing],
        "the progress says what the ingest does while it builds"
    );
    assert!(index.vectors().has_ann());
    assert!(
        index.vectors().is_on_disk(),
        "searched with its rows left in the file"
    );
    // Fusion over the approximate dense ranking (its candidates and
    // BM25's hits, each scored exactly) gives the exact fusion's top.
    let fusion = Fusion::default();
    for query in [
        "which crate ships product zq12345x",
        "part pk77y",
        "crate 7",
    ] {
        let v = HashEmbedder::vector(query);
        let (approx, lexical) = index.rankings(query, &v, fusion.lexical_depth).unwrap();
        assert!(
            approx.len() < index.vectors().len(),
            "candidates, not every chunk"
        );
        let exact = index.vectors().rank(&v).unwrap();
        let top = |dense| {
            groundcite_index::fusion::fuse(dense, &lexical, &fusion, 5)
                .into_iter()
                .map(|f| f.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(top(&approx), top(&exact), "{query}");
        let hits = index.search_hybrid(query, &v, 5, &fusion).unwrap();
        let ids: Vec<String> = hits.into_iter().map(|h| h.chunk.id).collect();
        assert_eq!(ids, top(&exact), "{query}");
    }
    // Reopened: read from the vectors file, not rebuilt, the rows left
    // there.
    drop(index);
    let index = Index::open_or_create(&at).unwrap();
    assert!(index.vectors().has_ann() && index.vectors().is_on_disk());
    assert!(index.vectors().ann_has_unit_codes());
    // A file written before the units' sign codes (the inverted file
    // alone in its ANN section) searches without them; an ingest that
    // changes nothing builds them.
    drop(index);
    strip_unit_codes(&at.join(VECTORS_FILE));
    let mut index = Index::open_or_create(&at).unwrap();
    assert!(index.vectors().has_ann() && !index.vectors().ann_has_unit_codes());
    let v = HashEmbedder::vector("part pk77y");
    let before = index.rankings("part pk77y", &v, 10).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    let mut events = Vec::new();
    let s = index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |p| {
                if matches!(p, Progress::IndexingVectors { .. }) {
                    events.push(p)
                }
            },
        )
        .unwrap();
    assert_eq!((s.indexed, s.unchanged), (0, files));
    assert_eq!(events, [Progress::IndexingVectors { chunks }]);
    assert!(index.vectors().ann_has_unit_codes() && index.vectors().is_on_disk());
    assert!(Index::open(&at).unwrap().vectors().ann_has_unit_codes());
    let after = index.rankings("part pk77y", &v, 10).unwrap();
    assert_eq!(after.0[..5], before.0[..5], "the same top");
    // A file changed: the ingest reads the rows it keeps from the file.
    let page = fs::read_to_string(root.join("p0.md")).unwrap();
    fs::write(root.join("p0.md"), page.replace("crate 0", "crate 99")).unwrap();
    index.set_embedder(HashEmbedder::new("toy-1"));
    let s = ingest(&mut index, &root);
    assert_eq!((s.indexed, s.unchanged), (1, files - 1));
    assert_eq!(index.vectors().len(), chunks);
    assert!(index.vectors().is_on_disk());
    let v = HashEmbedder::vector("part pk77y");
    let reread = Index::open(&at).unwrap().vectors().to_resident().unwrap();
    assert_eq!(
        index.vectors().rank(&v).unwrap(),
        reread.rank(&v).unwrap(),
        "the kept rows are those of their files"
    );
    // Every chunk's row is its own text's vector: the kept files' rows
    // were read from the old file at the right offsets.
    let rows: std::collections::HashMap<&str, &[f32]> = reread
        .files()
        .unwrap()
        .values()
        .flat_map(|f| {
            f.ids
                .iter()
                .map(String::as_str)
                .zip(f.data.chunks_exact(reread.dim))
        })
        .collect();
    for chunk in index.all_chunks().unwrap() {
        let text = groundcite_index::vectors::embedding_text(&chunk);
        assert_eq!(
            rows[chunk.id.as_str()],
            HashEmbedder::vector(&text),
            "{}",
            chunk.id
        );
    }
    // Below the threshold again: the next ingest drops it.
    for f in 1..files {
        fs::remove_file(root.join(format!("p{f}.md"))).unwrap();
    }
    index.set_embedder(HashEmbedder::new("toy-1"));
    ingest(&mut index, &root);
    assert_eq!(index.vectors().len(), 20);
    assert!(!index.vectors().has_ann());
}

#[test]
fn each_answer_unit_is_a_part_of_its_chunks_embedding_text() {
    use groundcite_index::vectors::ChunkTexts;
    let section = "Leave › Carry-over";
    let text = "## Carry-over\n\nYou can carry over:\n\n- up to 5 days\n- unused sick leave\n\n\
                | Grade | Days |\n|---|---|\n| A | 30 |\n\nAsk your manager before the end of March.";
    let chunk = ChunkTexts::of(section, text);
    assert_eq!(chunk.text, format!("{section}\n{text}"));
    let read = |spans: &[std::ops::Range<usize>]| {
        spans
            .iter()
            .map(|s| &chunk.text[s.clone()])
            .collect::<Vec<_>>()
    };
    let units: Vec<(Vec<&str>, &str)> = chunk
        .units
        .iter()
        .map(|(spans, own)| (read(spans), own.as_str()))
        .collect();
    assert_eq!(
        units,
        [
            (vec!["You can carry over:"], "You can carry over:"),
            (
                vec!["You can carry over:", "up to 5 days"],
                "You can carry over: up to 5 days"
            ),
            (
                vec!["You can carry over:", "unused sick leave"],
                "You can carry over: unused sick leave"
            ),
            // A table row: the section label, the header row and the row.
            (
                vec![section, "| Grade | Days |", "| A | 30 |"],
                "Leave › Carry-over: Grade: A; Days: 30."
            ),
            (
                vec!["Ask your manager before the end of March."],
                "Ask your manager before the end of March."
            ),
        ]
    );
}
