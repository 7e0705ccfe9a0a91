//! `groundcite db migrate|status`, and `groundcite ingest` into PostgreSQL
//! when the index is a `postgres://` URL.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, CommandFactory, FromArgMatches, Subcommand};
use groundcite_index::{ChunkIndex, IngestOptions, Progress};
use groundcite_pg::{PgIndex, PgOptions, SchemaStatus};

use crate::ask_cmd::{CommonArgs, GeneratorArgs};

/// The PostgreSQL index: schema migrations.
#[derive(Subcommand)]
pub enum DbCommand {
    /// Apply pending schema migrations (idempotent; concurrent runs are safe).
    Migrate(DbArgs),
    /// Show applied and pending migrations; exit 1 when the schema is behind
    /// this binary.
    Status(DbArgs),
}

#[derive(Args)]
pub struct DbArgs {
    /// postgres://user:password@host:port/db [default: $GROUNDCITE_DATABASE_URL,
    /// else --index when it is a postgres:// URL].
    #[arg(long)]
    database: Option<String>,
    /// The schema holding groundcite's tables.
    #[arg(long, default_value = "groundcite")]
    schema: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(common: &CommonArgs, cmd: DbCommand) -> Result<ExitCode> {
    match cmd {
        DbCommand::Migrate(args) => {
            let (url, opts) = resolve(common, &args)?;
            let report = groundcite_pg::migrate(&url, &opts)?;
            let mut out = std::io::stdout().lock();
            if args.json {
                let mut v = status_json(&report.status);
                v["applied_now"] = report
                    .applied_now
                    .iter()
                    .map(|(v, n)| serde_json::json!({"version": v, "name": n}))
                    .collect();
                serde_json::to_writer_pretty(&mut out, &v)?;
                writeln!(out)?;
            } else {
                if report.applied_now.is_empty() {
                    writeln!(out, "nothing to apply")?;
                }
                for (v, n) in &report.applied_now {
                    writeln!(out, "applied {v:04} {n}")?;
                }
                print_status(&mut out, &report.status)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        DbCommand::Status(args) => {
            let (url, opts) = resolve(common, &args)?;
            let status = groundcite_pg::status(&url, &opts)?;
            let mut out = std::io::stdout().lock();
            if args.json {
                serde_json::to_writer_pretty(&mut out, &status_json(&status))?;
                writeln!(out)?;
            } else {
                print_status(&mut out, &status)?;
            }
            Ok(if status.is_behind() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn resolve(common: &CommonArgs, args: &DbArgs) -> Result<(String, PgOptions)> {
    let from_index = common
        .index
        .as_ref()
        .and_then(|p| p.to_str())
        .filter(|s| groundcite_pg::is_postgres_url(s))
        .map(str::to_string);
    let url = args
        .database
        .clone()
        .or_else(|| {
            std::env::var("GROUNDCITE_DATABASE_URL")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .or(from_index)
        .context("no database: pass --database postgres://... or set GROUNDCITE_DATABASE_URL")?;
    Ok((url, PgOptions::default().with_schema(args.schema.clone())))
}

fn print_status(out: &mut impl Write, s: &SchemaStatus) -> Result<()> {
    let needs = groundcite_pg::latest_version();
    let state = if s.is_behind() {
        "behind: run `groundcite db migrate`"
    } else if !s.unknown.is_empty() {
        "ahead of this binary (migrated by a newer version)"
    } else {
        "up to date"
    };
    writeln!(out, "database {} schema {}", s.target, s.schema)?;
    writeln!(
        out,
        "schema version {} (this binary needs {needs}): {state}",
        s.version()
    )?;
    for m in &s.applied {
        let note = if s.modified.contains(&m.version) {
            "  (CHANGED since applied)"
        } else if s.unknown.contains(&m.version) {
            "  (unknown to this binary)"
        } else {
            ""
        };
        writeln!(
            out,
            "  applied  {:04} {:12} {}{note}",
            m.version, m.name, m.applied_at
        )?;
    }
    for (v, n) in &s.pending {
        writeln!(out, "  pending  {v:04} {n}")?;
    }
    Ok(())
}

fn status_json(s: &SchemaStatus) -> serde_json::Value {
    serde_json::json!({
        "database": s.target,
        "schema": s.schema,
        "version": s.version(),
        "needs": groundcite_pg::latest_version(),
        "behind": s.is_behind(),
        "applied": s.applied.iter().map(|m| serde_json::json!({
            "version": m.version, "name": m.name, "checksum": m.checksum, "applied_at": m.applied_at,
        })).collect::<Vec<_>>(),
        "pending": s.pending.iter().map(|(v, n)| serde_json::json!({"version": v, "name": n})).collect::<Vec<_>>(),
        "unknown": s.unknown,
        "modified": s.modified,
    })
}

/// True when the effective index (flag, environment or config file) is a
/// `postgres://` URL.
pub fn index_is_postgres(common: &CommonArgs) -> bool {
    crate::ask_cmd::settings(common, &GeneratorArgs::default())
        .ok()
        .and_then(|s| s.index.to_str().map(groundcite_pg::is_postgres_url))
        .unwrap_or(false)
}

/// The `ingest` arguments, read again from the command line by their ids
/// (the same as `ask_cmd::IngestArgs`).
#[derive(Args)]
struct PgIngestArgs {
    paths: Vec<PathBuf>,
    #[arg(long)]
    url_template: Option<String>,
    #[arg(long)]
    strip_prefix: Option<String>,
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    handbook: bool,
}

/// `groundcite ingest` into PostgreSQL: one transaction per run.
pub fn run_ingest(common: &CommonArgs) -> Result<ExitCode> {
    let matches = crate::Cli::command().get_matches();
    let sub = matches
        .subcommand_matches("ingest")
        .context("internal: not an ingest command")?;
    let args = PgIngestArgs::from_arg_matches(sub)?;
    let settings = crate::ask_cmd::settings(common, &GeneratorArgs::default())?;
    let url = settings.index.to_string_lossy().into_owned();
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
    let mut index = PgIndex::connect(&url, PgOptions::default())?;
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
                    bar.set_message(path.display().to_string());
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
        index.location(),
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
    for e in &summary.errors {
        eprintln!("groundcite: skipped {e}");
    }
    Ok(if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
