//! A test-only server: `app()` with the static demo answerer (a passage
//! carrying `<script>`, an answer with contradicted, unsupported and uncited
//! sentences; questions about furniture are refused).
//!
//! ```sh
//! cargo run -p groundcite-bench --bin demo_server -- --addr 127.0.0.1:8080 [--audit PATH|off] [--delay-ms 150] [--engine]
//! ```
//!
//! `--engine` serves the real engine instead (default settings: the
//! extractive generator over `./.groundcite/index`, the embedded demo
//! corpus ingested on first use).
//!
//! Used by `tests/browser/run.sh` and `bench/load-check.sh` until
//! `groundcite serve` exists.

use std::sync::Arc;
use std::time::Duration;

use groundcite_server::fake::StaticAnswerer;
use groundcite_server::{AppState, AuditConfig, ServerConfig, serve};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "groundcite_server=info,warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut addr = "127.0.0.1:8080".to_string();
    let mut audit: Option<String> = None;
    let mut delay_ms = 0u64;
    let mut use_engine = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{arg} needs a value"))
        };
        match arg.as_str() {
            "--addr" => addr = value()?,
            "--audit" => audit = Some(value()?),
            "--delay-ms" => delay_ms = value()?.parse()?,
            "--engine" => use_engine = true,
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let mut config = ServerConfig::from_env()?;
    if let Some(a) = audit {
        config.audit = if a == "off" {
            AuditConfig::off()
        } else {
            AuditConfig::at(a)
        };
    }
    let answerer: Arc<dyn groundcite_server::Answerer> = if use_engine {
        engine(&mut config)?
    } else {
        let mut demo = StaticAnswerer::demo();
        demo.sentence_delay = Duration::from_millis(delay_ms);
        Arc::new(demo)
    };
    let state = AppState::new(config, Some(answerer));
    serve(state, addr.parse()?).await
}

fn engine(config: &mut ServerConfig) -> anyhow::Result<Arc<dyn groundcite_server::Answerer>> {
    let settings = groundcite_engine::Settings::default();
    config.check = settings.check.clone();
    config.page = settings.page();
    Ok(Arc::new(groundcite_engine::Engine::from_settings(
        settings,
    )?))
}
