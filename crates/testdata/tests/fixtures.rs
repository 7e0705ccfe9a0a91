//! The fixtures are copies of `../shared`: whole pages and the license
//! file unchanged, and each case line exactly as it stands in its source
//! file.

use std::fs;
use std::path::Path;

use groundcite_testdata::{fixture, fixtures, shared};

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn fixtures_are_copies_of_shared() {
    let Some(shared) = shared("the check that the fixtures are copies of ../shared") else {
        return;
    };
    let corpus = fixture("corpora/tts-handbook");
    let mut files = Vec::new();
    files_under(&corpus.join("pages"), &mut files);
    files.push(corpus.join("LICENSE.md"));
    assert!(files.len() >= 5, "{files:?}");
    for file in &files {
        let relative = file.strip_prefix(fixtures()).unwrap();
        assert_eq!(
            fs::read(file).unwrap(),
            fs::read(shared.join(relative)).unwrap(),
            "{} differs from ../shared",
            relative.display()
        );
    }
    for name in ["cases/dev.jsonl", "cases/paraphrase-dev.jsonl"] {
        let source = fs::read_to_string(shared.join(name)).unwrap();
        let lines: Vec<&str> = source.lines().collect();
        let copied = fs::read_to_string(fixture(name)).unwrap();
        assert!(copied.lines().count() >= 3, "{name}");
        for line in copied.lines() {
            assert!(
                lines.contains(&line),
                "{name}: a line not in ../shared: {line:.80}"
            );
        }
    }
}

#[test]
fn the_fixture_corpus_carries_its_license() {
    let license = fs::read_to_string(fixture("corpora/tts-handbook/LICENSE.md")).unwrap();
    assert!(license.contains("CC0 1.0 Universal"), "{license:.200}");
    let source = fs::read_to_string(fixture("corpora/tts-handbook/SOURCE.md")).unwrap();
    let mut pages = Vec::new();
    files_under(&fixture("corpora/tts-handbook/pages"), &mut pages);
    for page in pages {
        let relative = page
            .strip_prefix(fixture("corpora/tts-handbook/pages"))
            .unwrap();
        assert!(
            source.contains(&format!("`{}`", relative.display())),
            "SOURCE.md does not list {}",
            relative.display()
        );
    }
}
