//! `groundcite audit`: the incident log; JSONL export.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use groundcite_server::audit::{self, AuditPolicy, IncidentFilter};

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::render;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
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
}

#[derive(Subcommand)]
enum AuditAction {
    /// Remove old records: those served more than --max-age-days ago, then
    /// the oldest while the log's text is over --max-bytes [defaults: the
    /// configured [audit] max_age_days and max_bytes].
    Prune {
        /// The audit database [default: the configured audit_path].
        #[arg(long)]
        db: Option<PathBuf>,
        #[arg(long)]
        max_age_days: Option<u32>,
        #[arg(long)]
        max_bytes: Option<u64>,
    },
}

pub fn run_audit(common: &CommonArgs, args: AuditArgs) -> Result<ExitCode> {
    let settings = settings(common, &GeneratorArgs::default())?;
    if let Some(AuditAction::Prune {
        db,
        max_age_days,
        max_bytes,
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
        let path = db.unwrap_or(settings.audit_path.clone());
        let mut store = audit::open_writer(&path)?;
        let pruned = store.prune(&retention)?;
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
    let path = args.db.clone().unwrap_or(settings.audit_path.clone());
    if !audit::is_postgres_url(&path.to_string_lossy()) && !path.exists() {
        anyhow::bail!(
            "no audit log at {} (it is written by `groundcite serve`)",
            path.display()
        );
    }
    let store = audit::open_reader(&path)?;
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
        eprintln!("groundcite: wrote {n} records to {}", out.display());
        return Ok(ExitCode::SUCCESS);
    }
    // The incident log: unverified and unsupported answers (both when no
    // filter is given).
    let records = audit::incidents(store, &filter)?;
    let mut out = std::io::stdout().lock();
    for r in &records {
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
    }
    writeln!(out, "{} incident(s) in {}", records.len(), store.location())?;
    Ok(ExitCode::SUCCESS)
}
