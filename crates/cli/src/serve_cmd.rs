//! `groundcite serve`: the HTTP API and the web page.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use groundcite_audit::AuditConfig;
use groundcite_engine::Engine;
use groundcite_server::{AppState, ServerConfig};

use crate::args::{CommonArgs, GeneratorArgs, announce_demo, settings};

const AFTER_HELP: &str = "\
The page is at http://ADDR/; the API under /v1 (see /openapi.json). Every
answer and check is written to the audit log (beside the index unless
audit_path says otherwise; --no-audit: none).

Examples:
  groundcite serve
  groundcite --index /tmp/tts serve --addr 0.0.0.0:8080
  GROUNDCITE_API_KEY=secret groundcite serve --generator openai --base-url http://127.0.0.1:11434 --model llama3.2";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    #[command(flatten)]
    generator: GeneratorArgs,
    /// Do not write the audit log.
    #[arg(long)]
    no_audit: bool,
}

pub fn run_serve(common: &CommonArgs, args: ServeArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let mut config = ServerConfig::from_env()?;
        config.check = settings.check.clone();
        // `[page]`, the demo's words only on the demo index.
        config.page = settings.page();
        // The location is the configured `audit_path` (a SQLite file or a
        // postgres:// URL); the other audit options come from the environment.
        // (beside the index unless set; `off` writes none).
        config.audit = match settings.audit_location() {
            Some(path) if !args.no_audit => AuditConfig {
                path: Some(path.to_path_buf()),
                policy: settings.audit.clone(),
                ..config.audit
            },
            _ => AuditConfig::off(),
        };
        announce_demo(&settings);
        let engine = Engine::from_settings(settings).context("cannot start the engine")?;
        tracing::info!(
            url = %format!("http://{}", args.addr),
            generator = %engine.generator_name(),
            "groundcite: starting"
        );
        let checker = engine.checker().clone();
        let state = AppState::new(config, Some(Arc::new(engine))).with_checker(checker);
        groundcite_server::serve(state, args.addr).await?;
        Ok(ExitCode::SUCCESS)
    })
}
