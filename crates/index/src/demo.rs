//! The demo corpus (`demo/handbook/*.md` at the repository root), embedded in
//! the binary so that a released build works from any directory.

/// `(relative_path, contents)` of every demo page, for
/// [`crate::ChunkIndex::ingest_documents`].
pub fn demo_documents() -> &'static [(&'static str, &'static str)] {
    DOCS
}

macro_rules! pages {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../demo/handbook/", $name)))),*]
    };
}

static DOCS: &[(&str, &str)] = pages![
    "expenses.md",
    "per-diem.md",
    "leave.md",
    "equipment.md",
    "remote-work.md",
    "security.md",
    "travel.md",
    "onboarding.md",
    "benefits.md",
    "code-of-conduct.md",
    "holidays.md",
    "index.md",
];
