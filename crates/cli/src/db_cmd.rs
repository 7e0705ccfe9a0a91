//! `groundcite db migrate|status` for the PostgreSQL index (`ingest`,
//! `search` and `ask` select it with `--index postgres://…`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use groundcite_pg::{PgOptions, SchemaStatus};

use crate::args::CommonArgs;

/// The PostgreSQL index: schema migrations.
#[derive(Subcommand)]
pub enum DbCommand {
    /// Apply pending schema migrations (idempotent; concurrent runs are safe).
    #[command(
        after_help = "Examples:\n  groundcite db migrate --database postgres://user@localhost/groundcite\n  GROUNDCITE_DATABASE_URL=postgres://... groundcite db migrate --json"
    )]
    Migrate(DbArgs),
    /// Show applied and pending migrations; exit 1 when the schema is behind
    /// this binary.
    #[command(
        after_help = "Exit codes: 0 up to date; 1 the schema is behind this binary (run `groundcite db migrate`); 2 fatal error.\n\nExamples:\n  groundcite db status --database postgres://user@localhost/groundcite\n  groundcite --index postgres://user@localhost/groundcite db status --json"
    )]
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
