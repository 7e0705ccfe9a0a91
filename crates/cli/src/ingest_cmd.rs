//! `groundcite ingest`: files or folders into the index (incremental).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use groundcite_index::{ChunkIndex, Index, IngestOptions, Progress};

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::render::safe;

const AFTER_HELP: &str = "\
Exit codes: 0 every file ingested; 1 some files could not be read (the
others were ingested; each is named on stderr); 2 usage or fatal error.

Examples:
  groundcite ingest docs/
  groundcite --index /tmp/tts ingest ../shared/corpora/tts-handbook/pages --handbook
  groundcite ingest site/ --url-template 'https://docs.example.com/{path}/' --strip-prefix site/
  groundcite ingest docs/ --json";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct IngestArgs {
    /// Files or folders to ingest (Markdown, HTML, plain text).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Url template over the file path, e.g. "https://handbook.example.com/{path}/".
    #[arg(long)]
    url_template: Option<String>,
    /// A path prefix removed before the template is applied (e.g. "pages/").
    #[arg(long)]
    strip_prefix: Option<String>,
    /// Base url joined to relative front-matter permalinks.
    #[arg(long)]
    base_url: Option<String>,
    /// Use the TTS handbook preset (url template and prefix).
    #[arg(long)]
    handbook: bool,
    /// Print the summary as JSON (files seen, indexed, unchanged, removed,
    /// skipped, chunks, errors, warnings, vectors).
    #[arg(long)]
    json: bool,
}

pub fn run_ingest(common: &CommonArgs, args: IngestArgs) -> Result<ExitCode> {
    let settings = settings(common, &GeneratorArgs::default())?;
    for p in &args.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let mut opts = if args.handbook {
        IngestOptions::handbook()
    } else {
        IngestOptions::default()
    };
    if args.url_template.is_some() {
        opts.url_template = args.url_template;
    }
    if args.strip_prefix.is_some() {
        opts.strip_prefix = args.strip_prefix;
    }
    if args.base_url.is_some() {
        opts.base_url = args.base_url;
    }
    let embedder = groundcite_engine::load_embedder(&settings)?
        .map(|e| groundcite_engine::index_embedder(&settings, &e));
    let mut index = open_chunk_index(&settings.index, embedder.clone())?;
    let started = std::time::Instant::now();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let summary = index.ingest(&args.paths, &opts, &mut |p| {
        if let Some(bar) = &bar {
            match p {
                Progress::Started { total_files } => bar.set_length(total_files as u64),
                Progress::File { path, done, .. } => {
                    bar.set_position(done as u64);
                    bar.set_message(safe(&path.display().to_string()).into_owned());
                }
                Progress::Embedding { done, total } => {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.set_message("embedding chunks and their sentences");
                }
                Progress::IndexingVectors { chunks } => {
                    bar.set_message(format!("indexing {chunks} chunk vectors for search"))
                }
                Progress::Committing => bar.set_message("committing"),
            }
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut out = std::io::stdout().lock();
    let code = if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if args.json {
        let files = |list: &[groundcite_index::IngestError]| {
            list.iter()
                .map(|e| serde_json::json!({"path": e.path, "message": e.message}))
                .collect::<Vec<_>>()
        };
        let json = serde_json::json!({
            "index": index.location(),
            "files_seen": summary.files_seen,
            "indexed": summary.indexed,
            "unchanged": summary.unchanged,
            "removed": summary.removed,
            "skipped": summary.skipped,
            "chunks_written": summary.chunks,
            "chunks_in_index": index.num_chunks()?,
            "errors": files(&summary.errors),
            "warnings": files(&summary.warnings),
            "seconds": started.elapsed().as_secs_f64(),
            "vectors": {
                "model": embedder.as_ref().map(|m| m.model_id()),
                "embedded": summary.embedded,
                "model_changed_from": summary.model_changed,
            },
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(code);
    }
    writeln!(
        out,
        "ingested into {}: {} files seen, {} indexed, {} unchanged, {} removed, {} skipped (unsupported), {} chunks written, {} errors, {:.2} s; {} chunks in the index",
        safe(&index.location()),
        summary.files_seen,
        summary.indexed,
        summary.unchanged,
        summary.removed,
        summary.skipped,
        summary.chunks,
        summary.errors.len(),
        started.elapsed().as_secs_f64(),
        index.num_chunks()?
    )?;
    match (&embedder, &summary.model_changed) {
        (Some(model), Some(previous)) => writeln!(
            out,
            "embedding model changed from {} to {}: every file re-embedded ({} chunk vectors)",
            safe(previous),
            safe(model.model_id()),
            summary.embedded
        )?,
        (Some(model), None) => writeln!(
            out,
            "{} chunk vectors computed with {}",
            summary.embedded,
            safe(model.model_id())
        )?,
        (None, _) => writeln!(out, "no chunk vectors: {}", groundcite_embed::NO_MODEL_HINT)?,
    }
    for w in &summary.warnings {
        eprintln!("groundcite: warning: {}", safe(&w.to_string()));
    }
    for e in &summary.errors {
        eprintln!("groundcite: skipped {}", safe(&e.to_string()));
    }
    Ok(code)
}

/// The index for writing: PostgreSQL for a `postgres://` url, else the
/// embedded tantivy index in that directory.
/// With a model, either backend computes chunk vectors.
fn open_chunk_index(
    location: &std::path::Path,
    embedder: Option<std::sync::Arc<dyn groundcite_index::vectors::ChunkEmbedder>>,
) -> Result<Box<dyn ChunkIndex>> {
    let text = location.to_string_lossy();
    if groundcite_pg::is_postgres_url(&text) {
        let mut index =
            groundcite_pg::PgIndex::connect(&text, groundcite_pg::PgOptions::default())?;
        if let Some(embedder) = embedder {
            index.set_embedder(embedder);
        }
        return Ok(Box::new(index));
    }
    let mut index = Index::open_or_create(location)
        .with_context(|| format!("cannot open the index in {}", location.display()))?;
    if let Some(embedder) = embedder {
        index.set_embedder(embedder);
    }
    Ok(Box::new(index))
}
