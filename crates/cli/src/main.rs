//! The `groundcite` binary: parse arguments, call the libraries, map errors
//! to an exit code. 0: success; 1: some input failed or a check found a
//! hard failure the command was asked to gate on; 2: usage or fatal error.

// The doc comments of the argument structs are the `--help` text users
// read ("cited as [1]", "<what would be needed>", a URL template), not
// rustdoc markup: escaping them for rustdoc would show the escapes in
// `--help`.
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::bare_urls,
    rustdoc::invalid_html_tags
)]

mod args;
mod ask_cmd;
mod audit_cmd;
mod check_cmd;
mod config_cmd;
mod db_cmd;
mod eval_cmd;
mod ingest_cmd;
mod input;
mod prompt_cmd;
mod render;
mod search_cmd;
mod serve_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Every command prints readable text, or one JSON document with --json.
Exit codes: 0 success; 1 some input failed, or a finding named by
--fail-on (check, ask); 2 usage or fatal error.

Examples:
  groundcite ask \"How long does reimbursement take?\"
  groundcite ingest docs/ && groundcite search \"travel card\"
  groundcite check --passages p.json --answer 'Refunds take 14 days [1].'
  groundcite config --show-origin
  groundcite serve --addr 127.0.0.1:8080";

#[derive(Parser)]
#[command(
    name = "groundcite",
    version,
    about = "Grounded, checked citations for retrieval-augmented answers.",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(flatten)]
    common: args::CommonArgs,
    /// Log lines on stderr: `text` or `json` (one object a line). The level
    /// comes from RUST_LOG [default: info for `serve`, warn otherwise].
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Colour the readable output: `auto` (on a terminal, unless NO_COLOR
    /// is set), `always` or `never`. JSON output is never coloured.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    color: ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check answers: markers, sentences, support, sources.
    Check(check_cmd::CheckArgs),
    /// Print the rendered contract and context for a question.
    Prompt(prompt_cmd::PromptArgs),
    /// Ingest files or folders into the index (incremental).
    Ingest(ingest_cmd::IngestArgs),
    /// Search the index: top-k chunks with normalised scores.
    Search(search_cmd::SearchArgs),
    /// Answer a question from the index with checked citations.
    Ask(ask_cmd::AskArgs),
    /// Print the effective configuration (secrets masked).
    Config(config_cmd::ConfigArgs),
    /// Score the checker on labelled data.
    #[command(subcommand)]
    Eval(eval_cmd::EvalCommand),
    /// Serve the HTTP API and the web page.
    Serve(serve_cmd::ServeArgs),
    /// The incident log: unverified and unsupported answers; JSONL export.
    Audit(audit_cmd::AuditArgs),
    /// The PostgreSQL index: schema migrations and status.
    #[command(subcommand)]
    Db(db_cmd::DbCommand),
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// The tracing subscriber: structured events on stderr, filtered by
/// RUST_LOG. Inside a request every line carries its span (method, path,
/// request id). Nothing logs a secret: the API key and LLM keys are never
/// in an event (keys are `Secret`s that print masked; headers are not
/// logged).
///
/// Text lines are coloured as `--color` says: `auto` only when stderr is a
/// terminal and neither NO_COLOR nor CLICOLOR=0 is set, so a log file
/// never holds escape sequences.
fn init_logging(format: LogFormat, default_level: &str, color: ColorWhen) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let ansi = match color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            use std::io::IsTerminal;
            let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
            std::io::stderr().is_terminal()
                && !set("NO_COLOR")
                && std::env::var_os("CLICOLOR").is_none_or(|v| v != "0")
        }
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "warn"
    };
    init_logging(cli.log_format, default_level, cli.color);
    // `auto` is anstream's own choice: a terminal, and neither NO_COLOR
    // nor a CLICOLOR=0.
    match cli.color {
        ColorWhen::Auto => {}
        ColorWhen::Always => anstream::ColorChoice::Always.write_global(),
        ColorWhen::Never => anstream::ColorChoice::Never.write_global(),
    }
    let result = match cli.command {
        Command::Check(args) => check_cmd::run_check(&cli.common, args),
        Command::Prompt(args) => prompt_cmd::run_prompt(args),
        Command::Eval(cmd) => eval_cmd::run(&cli.common, cmd),
        Command::Ingest(args) => ingest_cmd::run_ingest(&cli.common, args),
        Command::Db(cmd) => db_cmd::run(&cli.common, cmd),
        Command::Search(args) => search_cmd::run_search(&cli.common, args),
        Command::Ask(args) => ask_cmd::run_ask(&cli.common, args),
        Command::Config(args) => config_cmd::run_config(&cli.common, args),
        Command::Serve(args) => serve_cmd::run_serve(&cli.common, args),
        Command::Audit(args) => audit_cmd::run_audit(&cli.common, args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            anstream::eprintln!(
                "{} {}",
                render::paint(render::style::ERROR, "groundcite: error:"),
                render::safe(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use groundcite_audit::AuditError;
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            // The export's write errors (their message includes the
            // I/O error, which is therefore not their `source`).
            || match e.downcast_ref::<AuditError>() {
                Some(AuditError::Io(io)) => io.kind() == std::io::ErrorKind::BrokenPipe,
                Some(AuditError::Json { error, .. }) => {
                    error.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe)
                }
                _ => false,
            }
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every argument of every command has its help text, and
    /// every command that runs something shows examples in `--help`.
    #[test]
    fn every_argument_has_help_and_every_command_examples() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg
                    .get_help()
                    .is_none_or(|h| h.to_string().trim().is_empty())
                {
                    missing.push(format!("{path}: argument `{id}` has no help"));
                }
            }
            let leaf = !cmd.has_subcommands() || cmd.is_args_conflicts_with_subcommands_set();
            let examples = cmd
                .get_after_help()
                .is_some_and(|h| h.to_string().contains("Examples:"));
            if leaf && !examples && cmd.get_name() != "help" {
                missing.push(format!("{path}: no Examples in --help"));
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        let cmd = super::Cli::command();
        walk(&cmd, "groundcite", &mut missing);
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
