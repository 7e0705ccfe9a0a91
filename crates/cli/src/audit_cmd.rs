//! `groundcite audit`: the incident log; JSONL export.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use groundcite_audit::{self as audit, AuditPolicy, IncidentFilter};
use groundcite_engine::audit::{open_reader, open_writer};

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::render;

const AFTER_HELP: &str = "\
The audit log is kept with the index by default (audit.sqlite in the index
folder, or beside it in .groundcite/; the index's own database for a
PostgreSQL index); `audit_path` or GROUNDCITE_AUDIT_PATH moves it. `groundcite serve`
writes a record for every answer and check, `groundcite ask` for every
answer.

Examples:
  groundcite audit                         # every incident, newest first
  groundcite audit --unsupported --limit 20
  groundcite audit --json
  groundcite audit --export all.jsonl
  groundcite audit prune --max-age-days 90";

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct AuditArgs {
    #[command(subcommand)]
    action: Option<AuditAction>,
    /// The audit database: a SQLite file or a postgres:// URL [default: the configured audit_path].
    #[arg(long)]
    db: Option<PathBuf>,
    /// Only answers whose markers did not all resolve.
    #[arg(long)]
    unverified: bool,
    /// Only answers with a contradicted or unsupported sentence, or uncited
    /// factual sentences in an ungrounded answer.
    #[arg(long)]
    unsupported: bool,
    /// At most this many, newest first.
    #[arg(long)]
    limit: Option<usize>,
    /// Write every record (or, with a filter, the incidents) as JSONL to this file.
    #[arg(long)]
    export: Option<PathBuf>,
    /// Print JSON: the incidents as an array of records (with --export,
    /// `{written, file}`).
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum AuditAction {
    /// Remove old records: those served more than --max-age-days ago, then
    /// the oldest while the log's text is over --max-bytes [defaults: the
    /// configured [audit] max_age_days and max_bytes].
    #[command(
        after_help = "Examples:\n  groundcite audit prune --max-age-days 90\n  groundcite audit prune --db audit.sqlite --max-bytes 1000000000 --json"
    )]
    Prune {
        /// The audit database [default: the configured audit_path].
        #[arg(long)]
        db: Option<PathBuf>,
        /// Remove records served more than this many days ago.
        #[arg(long)]
        max_age_days: Option<u32>,
        /// Then remove the oldest records until the rest take at most this
        /// many bytes.
        #[arg(long)]
        max_bytes: Option<u64>,
        /// Print what was removed as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run_audit(common: &CommonArgs, args: AuditArgs) -> Result<ExitCode> {
    let settings = settings(common, &GeneratorArgs::default())?;
    if let Some(AuditAction::Prune {
        db,
        max_age_days,
        max_bytes,
        json,
    }) = args.action
    {
        let policy = AuditPolicy {
            max_age_days: max_age_days.or(settings.audit.max_age_days),
            max_bytes: max_bytes.or(settings.audit.max_bytes),
            ..settings.audit.clone()
        };
        let Some(retention) = policy.retention(std::time::SystemTime::now()) else {
            anyhow::bail!(
                "nothing to prune by: give --max-age-days or --max-bytes, or set max_age_days or max_bytes under [audit] in groundcite.toml"
            );
        };
        let path = db.or_else(|| configured_log(&settings)).context(NO_LOG)?;
        let mut store = open_writer(&path)?;
        let pruned = store.prune(&retention)?;
        if json {
            let json = serde_json::json!({
                "by_age": pruned.by_age,
                "by_size": pruned.by_size,
                "before": retention.before,
                "max_bytes": retention.max_bytes,
                "left": store.count()?,
                "location": store.location(),
            });
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "pruned {} record(s) older than {} and {} more to fit {}; {} left in {}",
            pruned.by_age,
            retention.before.as_deref().unwrap_or("any age"),
            pruned.by_size,
            retention
                .max_bytes
                .map_or("any size".to_string(), |b| format!("{b} bytes")),
            store.count()?,
            store.location()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let path = args
        .db
        .clone()
        .or_else(|| configured_log(&settings))
        .context(NO_LOG)?;
    if !groundcite_pg::is_postgres_url(&path.to_string_lossy()) && !path.exists() {
        anyhow::bail!(
            "no audit log at {} (it is written by `groundcite serve` and `groundcite ask`, \
             beside the index unless audit_path says otherwise)",
            path.display()
        );
    }
    let store = open_reader(&path)?;
    let store = store.as_ref();
    let filter = IncidentFilter {
        unverified: args.unverified,
        unsupported: args.unsupported,
        kind: None,
        limit: args.limit,
    };
    if let Some(out) = &args.export {
        let file = std::fs::File::create(out)
            .with_context(|| format!("cannot write {}", out.display()))?;
        let writer = std::io::BufWriter::new(file);
        let n = if args.unverified || args.unsupported {
            audit::export_incidents_jsonl(store, &filter, writer)?
        } else {
            audit::export_jsonl(store, writer)?
        };
        if args.json {
            let mut stdout = std::io::stdout().lock();
            serde_json::to_writer_pretty(
                &mut stdout,
                &serde_json::json!({"written": n, "file": out}),
            )?;
            writeln!(stdout)?;
        } else {
            eprintln!("groundcite: wrote {n} records to {}", out.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    // The incident log: unverified and unsupported answers (both when no
    // filter is given), read and written a page at a time: memory does not
    // grow with the log.
    let mut out = std::io::stdout().lock();
    if args.json {
        audit::write_incidents_json(store, &filter, &mut out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let n = audit::each_incident(store, &filter, |r| {
        let mut why = Vec::new();
        if r.is_unverified() {
            why.push(format!("unverified (bad ids {:?})", r.bad_ids));
        }
        if r.contradicted + r.unsupported > 0 {
            why.push(format!(
                "{} contradicted, {} unsupported",
                r.contradicted, r.unsupported
            ));
        }
        writeln!(
            out,
            "{}  {}  {:<6} {:<11} {}  {}",
            r.ts,
            r.request_id,
            r.kind,
            r.status,
            why.join("; "),
            render::safe(r.question.as_deref().unwrap_or(""))
        )?;
        Ok(())
    })?;
    writeln!(out, "{n} incident(s) in {}", store.location())?;
    Ok(ExitCode::SUCCESS)
}

const NO_LOG: &str =
    "the audit log is off (audit_path = \"off\"): give --db FILE or a postgres:// URL";

/// The configured audit log (beside the index by default); `None` when off.
fn configured_log(settings: &groundcite_engine::Settings) -> Option<PathBuf> {
    settings.audit_location().map(PathBuf::from)
}
