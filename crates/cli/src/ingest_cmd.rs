//! `groundcite ingest`: files or folders into the index (incremental).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use groundcite_index::{ChunkIndex, Index, IngestOptions, Progress};

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::render::safe;

#[derive(Args)]
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
    let embedder = groundcite_engine::load_embedder(&settings)?;
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
                    bar.set_message("embedding chunks");
                }
                Progress::Committing => bar.set_message("committing"),
            }
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut out = std::io::stdout().lock();
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
        (Some(model), None) if index.has_vectors() => writeln!(
            out,
            "{} chunk vectors computed with {}",
            summary.embedded,
            safe(model.model_id())
        )?,
        (Some(_), None) => writeln!(
            out,
            "no chunk vectors: the PostgreSQL backend has no vectors yet (retrieval there is lexical)"
        )?,
        (None, _) => writeln!(out, "no chunk vectors: {}", groundcite_embed::NO_MODEL_HINT)?,
    }
    for w in &summary.warnings {
        eprintln!("groundcite: warning: {}", safe(&w.to_string()));
    }
    for e in &summary.errors {
        eprintln!("groundcite: skipped {}", safe(&e.to_string()));
    }
    Ok(if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The index for writing: PostgreSQL for a `postgres://` url, else the
/// embedded tantivy index in that directory.
/// With a model, the embedded index computes chunk vectors.
fn open_chunk_index(
    location: &std::path::Path,
    embedder: Option<std::sync::Arc<groundcite_embed::Embedder>>,
) -> Result<Box<dyn IndexWithVectors>> {
    let text = location.to_string_lossy();
    if groundcite_pg::is_postgres_url(&text) {
        let index = groundcite_pg::PgIndex::connect(&text, groundcite_pg::PgOptions::default())?;
        return Ok(Box::new(index));
    }
    let mut index = Index::open_or_create(location)
        .with_context(|| format!("cannot open the index in {}", location.display()))?;
    if let Some(embedder) = embedder {
        index.set_embedder(embedder);
    }
    Ok(Box::new(index))
}

/// An index to ingest into, and whether it stores vectors.
trait IndexWithVectors: ChunkIndex {
    fn has_vectors(&self) -> bool;
}

impl IndexWithVectors for Index {
    fn has_vectors(&self) -> bool {
        true
    }
}

impl IndexWithVectors for groundcite_pg::PgIndex {
    fn has_vectors(&self) -> bool {
        false
    }
}
