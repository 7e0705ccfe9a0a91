//! Integration tests: real handbook pages (from the fixtures), the on-disk
//! index in temporary directories, and retrieval recall (over the whole
//! handbook in ../shared).

use std::fs;
use std::path::Path;

use groundcite_index::{
    ChunkIndex, DEFAULT_GATE_THRESHOLD, Error, Index, IngestOptions, Progress, markdown,
    prepare_document,
};

fn handbook_page(rel: &str) -> String {
    groundcite_testdata::read_fixture(&format!("corpora/tts-handbook/pages/{rel}"))
}

fn chunks_of(rel: &str) -> Vec<groundcite_index::Chunk> {
    let src = handbook_page(rel);
    prepare_document(
        &format!("pages/{rel}"),
        &src,
        &IngestOptions::handbook(),
        || unreachable!(),
    )
    .expect("chunks")
}

#[test]
fn handbook_front_matter_and_templates_are_stripped_without_losing_text() {
    let chunks = chunks_of("travel-and-leave/leave.md");
    let all: String = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for c in &chunks {
        assert!(
            !c.text.contains("{%") && !c.text.contains("%}") && !c.text.contains("{{"),
            "{}",
            c.text
        );
        assert!(
            !c.text.contains("redirect_from") && !c.text.contains("keywords:"),
            "{}",
            c.text
        );
        assert!(
            !c.text.contains("**") && !c.text.contains("]("),
            "{}",
            c.text
        );
        assert_eq!(c.title, "Leave types");
        assert!(
            c.metadata["keywords"]
                .as_str()
                .unwrap()
                .contains("bereavement")
        );
    }
    // Alert block content and the link text around `{% page %}` survive.
    assert!(
        all.contains("Current employees can use this leave comparison chart."),
        "{all}"
    );
    assert!(
        all.contains("Before you take leave, check out of office expectations."),
        "{all}"
    );
    assert!(
        all.contains("you can use paid parental leave. You can also use"),
        "{all}"
    );
    // Lists stay one item per line.
    assert!(
        all.contains("\n- Fewer than 3 years: 4 hours per pay period\n- Between 3 and 15 years"),
        "{all}"
    );

    // Comments are dropped; the list items around them stay.
    let chunks = chunks_of("about-us/tts-consulting/engagements/index.md");
    let all: String = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!all.contains("TODO link"), "{all}");
    assert!(all.contains("- Process agreements and SOWs\n"), "{all}");
    // Slack channel tags render as the channel name.
    let all: String = chunks_of("tools/tock.md")
        .iter()
        .map(|c| c.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains("ping us in #tock and"), "{all}");
}

#[test]
fn heading_paths_anchors_ids_and_urls() {
    let src = handbook_page("travel-and-leave/leave.md");
    let chunks = chunks_of("travel-and-leave/leave.md");
    let c = chunks
        .iter()
        .find(|c| c.text.contains("13 days (104 hours)"))
        .expect("bereavement chunk");
    assert_eq!(
        c.section,
        "Types of leave › Sick leave › For bereavement purposes › Civilian"
    );
    assert_eq!(
        c.source_url,
        "https://handbook.tts.gsa.gov/travel-and-leave/leave/#civilian"
    );
    assert!(c.id.starts_with("travel-and-leave/leave.md#L"));
    // The id's line range is the byte range's.
    let first = src[..c.start].matches('\n').count() + 1;
    let last = src[..c.end].matches('\n').count() + 1;
    assert_eq!(c.id, format!("travel-and-leave/leave.md#L{first}-L{last}"));
    // Heading merged into the chunk that follows it; no heading-only chunk.
    assert!(src[c.start..].starts_with("#### For bereavement purposes"));
    for c in &chunks {
        assert!(
            c.text.lines().count() > 1 || !src[c.start..c.end].starts_with('#'),
            "heading-only chunk {c:?}"
        );
        assert!(c.text.len() <= 1200, "{}", c.text.len());
    }
    // Text before any heading is labelled with the page title.
    let piv = chunks_of("getting-started/piv.md");
    assert_eq!(piv[0].section, "PIV card");
    assert_eq!(
        piv[0].source_url,
        "https://handbook.tts.gsa.gov/getting-started/piv/"
    );
    assert_eq!(piv[1].section, "Getting issued a card");
    assert!(
        piv[1].id.starts_with("getting-started/piv.md#L9-"),
        "{}",
        piv[1].id
    );
    // Relative permalinks are joined to the base URL.
    let training = chunks_of("training-and-development/index.md");
    assert!(
        training[0]
            .source_url
            .starts_with("https://handbook.tts.gsa.gov/training-and-development/")
    );
}

#[test]
fn in_page_links_of_the_handbook_resolve_to_our_anchors() {
    for rel in [
        "travel-and-leave/leave.md",
        "travel-and-leave/travel-and-leave-policies/travel-guide-faq.md",
    ] {
        let src = handbook_page(rel);
        let anchors: Vec<String> = markdown::blocks(&src)
            .into_iter()
            .filter_map(|b| match b.kind {
                groundcite_index::BlockKind::Heading { anchor, .. } => Some(anchor),
                _ => None,
            })
            .collect();
        let mut checked = 0;
        for link in src.split("](#").skip(1) {
            let target = &link[..link.find(')').unwrap()];
            // The handbook has a few dangling links of its own; most must resolve.
            if anchors.iter().any(|a| a == target) {
                checked += 1;
            }
        }
        let total = src.matches("](#").count();
        assert!(
            checked * 10 >= total * 8,
            "{rel}: only {checked}/{total} in-page links resolve"
        );
    }
}

fn write(dir: &Path, rel: &str, contents: &[u8]) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, contents).unwrap();
}

fn ids(index: &Index) -> Vec<String> {
    index
        .all_chunks()
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect()
}

#[test]
fn stable_ids_and_incremental_reingest() {
    let docs = tempfile::tempdir().unwrap();
    let root = docs.path().join("docs");
    write(
        &root,
        "a.md",
        b"---\ntitle: A\n---\n\n## Alpha\n\nAlpha says the zebra code is 41.\n",
    );
    write(
        &root,
        "b.md",
        b"# Beta\n\nBeta mentions the walrus policy.\n",
    );
    write(&root, "sub/c.txt", b"Gamma talks about the yak fund.\n");
    let opts = IngestOptions::default();
    let roots = vec![root.clone()];

    let d1 = tempfile::tempdir().unwrap();
    let mut first = Index::open_or_create(d1.path()).unwrap();
    let mut events = Vec::new();
    let s = first
        .ingest(&roots, &opts, &mut |p| events.push(p))
        .unwrap();
    assert_eq!(
        (
            s.files_seen,
            s.indexed,
            s.unchanged,
            s.removed,
            s.errors.len()
        ),
        (3, 3, 0, 0, 0)
    );
    assert_eq!(events.first(), Some(&Progress::Started { total_files: 3 }));
    assert_eq!(events.last(), Some(&Progress::Committing));
    assert_eq!(
        ids(&first),
        vec!["a.md#L5-L7", "b.md#L1-L3", "sub/c.txt#L1-L1"]
    );

    // Same files, another index: same ids.
    let d2 = tempfile::tempdir().unwrap();
    let mut second = Index::open_or_create(d2.path()).unwrap();
    second.ingest(&roots, &opts, &mut |_| {}).unwrap();
    assert_eq!(ids(&first), ids(&second));

    // Nothing changed: everything skipped, nothing written.
    let s = first.ingest(&roots, &opts, &mut |_| {}).unwrap();
    assert_eq!((s.indexed, s.unchanged, s.removed), (0, 3, 0));
    assert_eq!(first.num_chunks(), 3);

    // Edit one, delete one.
    write(
        &root,
        "a.md",
        b"---\ntitle: A\n---\n\n## Alpha\n\nAlpha now says the quokka code is 42.\n",
    );
    fs::remove_file(root.join("b.md")).unwrap();
    let s = first.ingest(&roots, &opts, &mut |_| {}).unwrap();
    assert_eq!((s.indexed, s.unchanged, s.removed), (1, 1, 1));
    assert_eq!(first.num_chunks(), 2);
    assert!(first.search("zebra", 5).unwrap().is_empty());
    assert!(first.search("walrus", 5).unwrap().is_empty());
    assert_eq!(first.search("quokka", 5).unwrap()[0].chunk.id, "a.md#L5-L7");

    // Reopening sees the same state and the manifest.
    drop(first);
    let mut reopened = Index::open(d1.path()).unwrap();
    assert_eq!(reopened.num_chunks(), 2);
    let s = reopened.ingest(&roots, &opts, &mut |_| {}).unwrap();
    assert_eq!((s.indexed, s.unchanged, s.removed), (0, 2, 0));
    // Changed options re-chunk everything.
    let other = IngestOptions {
        url_template: Some("https://x.example/{path}/".into()),
        ..IngestOptions::default()
    };
    let s = reopened.ingest(&roots, &other, &mut |_| {}).unwrap();
    assert_eq!(s.indexed, 2);
    assert_eq!(
        reopened.search("quokka", 1).unwrap()[0].chunk.source_url,
        "https://x.example/a/#alpha"
    );
}

#[test]
fn corrupt_files_are_reported_and_others_indexed() {
    let docs = tempfile::tempdir().unwrap();
    let root = docs.path().to_path_buf();
    write(
        &root,
        "1-good.md",
        b"# One\n\nThe first good page about otters.\n",
    );
    write(&root, "2-bad-utf8.md", b"# Two\n\nBroken \xff\xfe bytes.\n");
    write(
        &root,
        "3-bad-front-matter.md",
        b"---\ntitle: [unclosed\n---\n\nText.\n",
    );
    write(
        &root,
        "4-unclosed.md",
        b"---\ntitle: x\n\nNo end of front matter.\n",
    );
    write(&root, "5-good.html", b"<html><head><title>Five</title></head><body><nav>menu</nav><h2>Beavers</h2><p>Beavers build dams.</p></body></html>");
    write(&root, "6-image.png", b"\x89PNG");
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let s = index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!((s.files_seen, s.indexed, s.skipped), (6, 2, 1));
    let bad: Vec<String> = s
        .errors
        .iter()
        .map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        bad,
        vec!["2-bad-utf8.md", "3-bad-front-matter.md", "4-unclosed.md"]
    );
    assert!(s.errors[0].message.contains("UTF-8"));
    assert_eq!(index.search("otters", 3).unwrap().len(), 1);
    let beaver = &index.search("beaver dams", 3).unwrap()[0].chunk;
    assert_eq!(
        (beaver.title.as_str(), beaver.section.as_str()),
        ("Five", "Beavers")
    );
    assert!(
        beaver.source_url.starts_with("file:///")
            && beaver.source_url.ends_with("5-good.html#beavers")
    );
    assert!(!beaver.text.contains("menu"));
    // Broken files are retried (and reported again) on the next run.
    let s = index
        .ingest(&[root], &IngestOptions::default(), &mut |_| {})
        .unwrap();
    assert_eq!((s.indexed, s.unchanged, s.errors.len()), (0, 2, 3));
}

#[test]
fn documents_nested_too_deep_are_reported_and_others_indexed() {
    let docs = tempfile::tempdir().unwrap();
    let root = docs.path().to_path_buf();
    let depth = groundcite_index::MAX_NESTING_DEPTH + 1;
    write(&root, "1-good.md", b"# One\n\nOtters hold hands.\n");
    let html = format!(
        "<html><body>{}deep html{}</body></html>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    write(&root, "2-deep.html", html.as_bytes());
    write(
        &root,
        "3-deep.md",
        format!("{}deep list\n", "- ".repeat(depth)).as_bytes(),
    );
    write(
        &root,
        "4-deep-quote.md",
        format!("{}deep quote\n", "> ".repeat(depth)).as_bytes(),
    );
    // At the limit, a document is read.
    let at = groundcite_index::MAX_NESTING_DEPTH;
    let html = format!(
        "<html><body>{}beavers at the limit{}</body></html>",
        "<div>".repeat(at),
        "</div>".repeat(at)
    );
    write(&root, "5-at-limit.html", html.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let s = index
        .ingest(
            std::slice::from_ref(&root),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    let bad: Vec<(String, String)> = s
        .errors
        .iter()
        .map(|e| {
            (
                e.path.file_name().unwrap().to_string_lossy().into_owned(),
                e.message.clone(),
            )
        })
        .collect();
    let limit = groundcite_index::MAX_NESTING_DEPTH;
    assert_eq!(
        bad,
        vec![
            (
                "2-deep.html".to_string(),
                format!("nested too deep: elements more than {limit} levels deep")
            ),
            (
                "3-deep.md".to_string(),
                format!("nested too deep: lists and block quotes more than {limit} levels deep")
            ),
            (
                "4-deep-quote.md".to_string(),
                format!("nested too deep: lists and block quotes more than {limit} levels deep")
            ),
        ]
    );
    assert_eq!(s.indexed, 2);
    assert_eq!(index.search("otters", 3).unwrap().len(), 1);
    assert_eq!(index.search("beavers limit", 3).unwrap().len(), 1);
}

#[test]
fn queries_full_of_syntax_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    index
        .ingest_documents(
            "t",
            &[(
                "a.md",
                "# Leave\n\nSick leave: 13 days (104 hours) per year.\n",
            )],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    for q in [
        "\"sick leave\" AND (days OR hours)?",
        "title:leave -foo +bar * ~2 ^3 [1 TO 5] {x} \\ / !",
        "",
        "   ",
        "the of and?",
        "'unbalanced \"quote",
        "日本語 émoji 🎉",
    ] {
        index.search(q, 5).unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
    let hits = index
        .search("\"sick leave\" AND (days OR hours)?", 5)
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert!((0.0..=1.0).contains(&hits[0].score));
    // Stemming: "reimbursed"/"reimbursement"-style variants meet.
    index
        .ingest_documents(
            "t",
            &[(
                "b.md",
                "Reimbursements settle within 30 days of approval.\n",
            )],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    let hits = index.search("When am I reimbursed?", 5).unwrap();
    assert_eq!(hits[0].chunk.path, "b.md");
    assert_eq!(hits[0].score, 1.0);
    assert_eq!(hits[0].chunk.source_url, "doc://t/b.md");
}

#[test]
fn index_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Index>();
}

#[test]
fn open_missing_index_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Index::open(&dir.path().join("nope")).unwrap_err();
    assert!(matches!(err, Error::NotFound(_)));
    assert!(err.to_string().contains("no index"));
}

#[test]
fn demo_corpus_ingests_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let docs = groundcite_index::demo_documents();
    assert!(docs.len() >= 12);
    let s = index
        .ingest_documents("demo", docs, &IngestOptions::default(), &mut |_| {})
        .unwrap();
    assert_eq!(
        (s.indexed, s.errors.len()),
        (docs.len(), 0),
        "{:?}",
        s.errors
    );
    let hits = index
        .search("How long does reimbursement take?", 5)
        .unwrap();
    assert_eq!(hits[0].chunk.path, "expenses.md", "{hits:#?}");
    assert!(
        hits[0].chunk.text.contains("30 days"),
        "{}",
        hits[0].chunk.text
    );
    assert!(
        hits[0]
            .chunk
            .source_url
            .starts_with("https://handbook.example.com/expenses/")
    );
    let s = index
        .ingest_documents("demo", docs, &IngestOptions::default(), &mut |_| {})
        .unwrap();
    assert_eq!((s.indexed, s.unchanged), (0, docs.len()));
}

/// Retrieval recall on the development questions: a gold page among the top
/// 5 for at least 90% of answerable questions, and every answerable question
/// above the default gate.
#[test]
fn handbook_recall_at_5_and_gate() {
    let Some(shared) = groundcite_testdata::shared("retrieval recall on the whole handbook") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let root = shared.join("corpora/tts-handbook");
    let s = index
        .ingest(&[root], &IngestOptions::handbook(), &mut |_| {})
        .unwrap();
    assert!(s.indexed >= 240 && s.errors.is_empty(), "{s:?}");
    let questions = fs::read_to_string(shared.join("cases/questions-dev.jsonl")).unwrap();
    let (mut answerable, mut found) = (0, 0);
    for line in questions.lines().filter(|l| !l.trim().is_empty()) {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        if !q["answerable"].as_bool().unwrap() {
            continue;
        }
        answerable += 1;
        let gold: Vec<&str> = q["gold"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_str().unwrap())
            .collect();
        let hits = index.search(q["question"].as_str().unwrap(), 5).unwrap();
        if hits.iter().any(|h| gold.contains(&h.chunk.path.as_str())) {
            found += 1;
        }
        let best = hits.iter().map(|h| h.score).fold(0.0, f32::max);
        assert!(best >= DEFAULT_GATE_THRESHOLD, "{}: best {best}", q["id"]);
    }
    assert!(
        found * 10 >= answerable * 9,
        "recall@5 {found}/{answerable}"
    );
}

/// Unsafe links: a `javascript:` (or any non-http)
/// permalink never becomes a source url (the page falls back to its file
/// url), and a file name with a newline or other odd bytes is
/// percent-encoded in its `file://` url.
#[test]
fn only_http_https_and_relative_links_leave_ingest_and_file_urls_are_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    fs::create_dir(&docs).unwrap();
    fs::write(
        docs.join("evil.md"),
        "---\npermalink: \"javascript://x.example/%0Aalert(document.cookie)\"\n---\n# Evil\n\nOtters hold hands while sleeping.\n",
    )
    .unwrap();
    fs::write(
        docs.join("data.md"),
        "---\npermalink: \"data:text/html,<script>alert(1)</script>\"\n---\n# Data\n\nBeavers build dams from branches.\n",
    )
    .unwrap();
    fs::write(
        docs.join("odd\nname <\"é\">.md"),
        "# Odd\n\nHerons stand on one leg.\n",
    )
    .unwrap();
    let mut index = Index::open_or_create(&dir.path().join("idx")).unwrap();
    let summary = index
        .ingest(
            std::slice::from_ref(&docs),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    let mut warned: Vec<String> = summary
        .warnings
        .iter()
        .map(|w| w.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    warned.sort();
    assert_eq!(warned, ["data.md", "evil.md"], "{:?}", summary.warnings);
    assert!(summary.warnings[0].message.contains("permalink"));
    for query in ["otters sleeping", "beavers dams", "herons leg"] {
        let hits = index.search(query, 1).unwrap();
        let url = &hits[0].chunk.source_url;
        assert!(url.starts_with("file:///"), "{query}: {url}");
        assert!(
            url.bytes()
                .all(|b| b.is_ascii_graphic() && !b"<>\"\\^`{|}".contains(&b)),
            "{query}: not percent-encoded: {url:?}"
        );
    }
    let odd = &index.search("herons leg", 1).unwrap()[0].chunk.source_url;
    assert!(odd.contains("odd%0Aname%20%3C%22%C3%A9%22%3E.md"), "{odd}");
}

/// More copies tie at the cut than are read to order the tie (300, over
/// `k` + 256): the chunks scoring more still come first, though their
/// segment is searched after the tie was cut short.
#[test]
fn chunks_scoring_above_a_long_tie_are_never_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    let page =
        "---\ntitle: Parking\n---\n\n## Bicycles\n\nBicycle racks are in the garage, level two.\n";
    for i in 0..300 {
        write(&docs, &format!("p{i:03}.md"), page.as_bytes());
    }
    let mut index = Index::open_or_create(&dir.path().join("index")).unwrap();
    index
        .ingest(
            std::slice::from_ref(&docs),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    let better = "---\ntitle: Parking\n---\n\n## Bicycles\n\nBicycle racks: the bicycle racks are in the garage, by the garage door.\n";
    write(&docs, "z1.md", better.as_bytes());
    write(&docs, "z2.md", better.as_bytes());
    index
        .ingest(
            std::slice::from_ref(&docs),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    let hits = index.search("bicycle racks garage", 3).unwrap();
    let paths: Vec<&str> = hits.iter().map(|h| h.chunk.path.as_str()).collect();
    assert!(
        paths[0].ends_with("z1.md") && paths[1].ends_with("z2.md"),
        "{paths:?}"
    );
    assert!(
        paths[2].contains("/p") || paths[2].starts_with('p'),
        "{paths:?}"
    );
    assert!(hits[1].raw_score > hits[2].raw_score, "a tie below them");
}

/// Equal BM25 scores come out in chunk id order, whatever the segments:
/// the copies of one section on twelve pages, ingested over three runs (so
/// in three segments, newest pages first by name), tie; every top k is the
/// first k ids, and the cut at k never depends on where a tie falls.
#[test]
fn equal_scores_come_out_in_id_order() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    let page =
        "---\ntitle: Parking\n---\n\n## Bicycles\n\nBicycle racks are in the garage, level two.\n";
    let mut index = Index::open_or_create(&dir.path().join("index")).unwrap();
    for run in 0..3 {
        for i in 0..4 {
            write(
                &docs,
                &format!("p{}.md", 11 - (run * 4 + i)),
                page.as_bytes(),
            );
        }
        index
            .ingest(
                std::slice::from_ref(&docs),
                &IngestOptions::default(),
                &mut |_| {},
            )
            .unwrap();
    }
    let mut all = ids(&index);
    all.sort();
    assert_eq!(all.len(), 12);
    for k in [1, 3, 5, 12] {
        let hits = index.search("bicycle racks garage", k).unwrap();
        let got: Vec<&str> = hits.iter().map(|h| h.chunk.id.as_str()).collect();
        let raw: Vec<f32> = hits.iter().map(|h| h.raw_score).collect();
        assert!(
            raw.windows(2).all(|w| w[0] == w[1]),
            "the copies tie: {raw:?}"
        );
        assert_eq!(
            got,
            all[..k].iter().map(String::as_str).collect::<Vec<_>>(),
            "k = {k}"
        );
    }
}

#[test]
fn a_folder_holding_other_files_is_never_made_an_index() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = groundcite_index::Index::open_or_create(dir.path())
        .expect_err("a folder of other files is not an index");
    assert!(err.to_string().contains("not a groundcite index"), "{err}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["notes.txt"],
        "nothing was written beside the user's file"
    );

    // A folder holding only groundcite's audit log (the server opened it
    // before the first ingest) is still a place for a new index.
    let audited = tempfile::tempdir().unwrap();
    fs::write(audited.path().join(groundcite_index::AUDIT_FILE), "").unwrap();
    fs::write(audited.path().join("audit.sqlite-wal"), "").unwrap();
    groundcite_index::Index::open_or_create(audited.path()).unwrap();
    assert!(audited.path().join("meta.json").exists());

    // The folder above an index: the error names the index inside it.
    let parent = tempfile::tempdir().unwrap();
    groundcite_index::Index::open_or_create(&parent.path().join("index")).unwrap();
    let err = groundcite_index::Index::open_or_create(parent.path())
        .expect_err("the folder above an index is not an index");
    assert!(
        err.to_string().contains(&format!(
            "did you mean {}",
            parent.path().join("index").display()
        )),
        "{err}"
    );

    // A new folder, or an empty one, becomes an index.
    let empty = tempfile::tempdir().unwrap();
    groundcite_index::Index::open_or_create(empty.path()).unwrap();
    groundcite_index::Index::open_or_create(&empty.path().join("new")).unwrap();
}
