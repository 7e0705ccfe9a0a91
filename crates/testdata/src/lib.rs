//! Where the tests of groundcite find their data, and what they do when it
//! is not there. Test-only (`publish = false`), a dev-dependency of every
//! crate whose tests read files.
//!
//!
//! * [`fixtures`]: a small set inside the repository (a few labelled cases,
//!   a few handbook pages with their license; `fixtures/README.md` lists
//!   them). Unit and integration tests read only these, so `cargo test`
//!   passes on a plain clone.
//! * [`shared`]: the project's data in `../shared`, beside the checkout
//!   (every labelled case, the 250-page handbook, the questions, HaluEval).
//!   The evaluations over all of it call `shared(...)`: when the folder is
//!   missing they are skipped with a printed reason, except under `CI=true`,
//!   where a missing `../shared` fails the test, so CI always runs them.
//! * [`database_url`]: the PostgreSQL test database, under the same rule.
//!
//! ```no_run
//! // A data-heavy evaluation:
//! let Some(shared) = groundcite_testdata::shared("the HaluEval balanced accuracy") else {
//!     return;
//! };
//! let rows = std::fs::read_to_string(shared.join("datasets/halueval/qa-dev.jsonl")).unwrap();
//! # let _ = rows;
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

/// The fixture folder, `crates/testdata/fixtures`; its layout follows
/// `../shared` (`cases/`, `corpora/tts-handbook/`).
pub fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))
}

/// A file or folder of the fixtures, by its path relative to [`fixtures`]
/// (such as `"cases/dev.jsonl"`).
pub fn fixture(relative: &str) -> PathBuf {
    fixtures().join(relative)
}

/// The text of a fixture file; panics naming the file when it cannot be
/// read.
pub fn read_fixture(relative: &str) -> String {
    let path = fixture(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// Whether the tests run in CI: `CI` is `true` or `1` (as CI services set
/// it, and as `.ci/run` does).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// `../shared` beside the checkout, for the evaluation named by `what`.
///
/// When the folder is missing: under `CI=true` this panics (the evaluation
/// must run in CI); otherwise it prints `SKIPPED: {what} ...` with the path
/// it looked for to standard error (past the test harness's capture, so the
/// line shows in `cargo test` output) and returns `None`.
pub fn shared(what: &str) -> Option<PathBuf> {
    // This crate is `<checkout>/crates/testdata`; `shared` sits beside `<checkout>`.
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(3);
    let path = beside.unwrap_or(Path::new("/")).join("shared");
    if path.is_dir() {
        return Some(path);
    }
    unavailable(
        what,
        &format!(
            "{}, which is not there; a plain clone runs only the fixtures",
            path.display()
        ),
    )
}

/// The PostgreSQL test database, `GROUNDCITE_TEST_DATABASE_URL` (`eval
/// "$(.ci/pg.sh)"` starts one and sets it), for the test named by `what`.
/// When it is unset or empty: a panic under `CI=true`, else a `SKIPPED`
/// line and `None`, as for [`shared`].
pub fn database_url(what: &str) -> Option<String> {
    match std::env::var("GROUNDCITE_TEST_DATABASE_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => unavailable(
            what,
            "GROUNDCITE_TEST_DATABASE_URL, which is not set; run `eval \"$(.ci/pg.sh)\"` \
             to start a test server",
        ),
    }
}

/// The embedding model folder (all-MiniLM-L6-v2) for the test named by
/// `what`: `GROUNDCITE_MODEL_DIR`, else `.groundcite/models/all-MiniLM-L6-v2`
/// under the checkout (where `scripts/fetch-model.sh` puts it), when it
/// holds `model.safetensors`. Otherwise a panic under `CI=true`, else a
/// `SKIPPED` line and `None`, as for [`shared`].
pub fn model_dir(what: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("GROUNDCITE_MODEL_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(".groundcite/models/all-MiniLM-L6-v2"),
    };
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    unavailable(
        what,
        &format!(
            "the embedding model at {}, which is not there; set GROUNDCITE_MODEL_DIR or run scripts/fetch-model.sh",
            dir.display()
        ),
    )
}

/// A test cannot run without `needs`: it fails under CI, else is skipped
/// with a line on standard error.
fn unavailable<T>(what: &str, needs: &str) -> Option<T> {
    if in_ci() {
        panic!("{what} needs {needs}; with CI=true it must run, not be skipped");
    }
    // Straight to the stream: `eprintln!` would be captured by the harness.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what} (needs {needs})");
    None
}

/// Where [`read_shared_or_fixture`] read a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The whole file, from `../shared`.
    Shared,
    /// The fixtures' part of it.
    Fixture,
}

/// The text of `relative` (such as `"cases/dev.jsonl"`, a path that is the
/// same under `../shared` and under [`fixtures`]): the whole file from
/// `../shared` when it is there, else the fixtures' part of it, after the
/// skip line of [`shared`] (which, under `CI=true`, fails instead).
pub fn read_shared_or_fixture(relative: &str) -> (String, Origin) {
    match shared(&format!("the whole of {relative}")) {
        Some(shared) => {
            let path = shared.join(relative);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (text, Origin::Shared)
        }
        None => (read_fixture(relative), Origin::Fixture),
    }
}
