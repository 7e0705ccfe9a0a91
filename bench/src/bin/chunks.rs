//! Prints the chunks of one file, as ingest would make them (no index).
//!
//! ```text
//! cargo run -p groundcite-bench --bin chunks -- FILE [--handbook] [RELATIVE_PATH]
//! cargo run -p groundcite-bench --bin chunks -- ../shared/corpora/tts-handbook/pages/travel-and-leave/leave.md --handbook pages/travel-and-leave/leave.md
//! ```

use groundcite_index::{IngestOptions, prepare_document};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: chunks FILE [--handbook] [RELATIVE_PATH]");
        std::process::exit(2);
    };
    let handbook = args.iter().any(|a| a == "--handbook");
    let rel = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| {
            std::path::Path::new(file)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let opts = if handbook {
        IngestOptions::handbook()
    } else {
        IngestOptions::default()
    };
    let contents = std::fs::read_to_string(file)?;
    let abs = std::fs::canonicalize(file)?;
    let chunks = prepare_document(&rel, &contents, &opts, || {
        groundcite_index::url::file_url(&abs)
    })?;
    for c in &chunks {
        println!(
            "=== {}  [{}]  {}  bytes {}..{}\n{}\n",
            c.id, c.section, c.source_url, c.start, c.end, c.text
        );
    }
    println!("{} chunks", chunks.len());
    Ok(())
}
