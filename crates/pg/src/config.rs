//! Connection settings, the pool, and URLs safe to print.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::config::Host;

use crate::Error;

/// How to reach the index. Every default is documented on its field.
#[derive(Debug, Clone, PartialEq)]
pub struct PgOptions {
    /// The PostgreSQL schema holding groundcite's tables (created by
    /// `migrate`). Default `groundcite`. Letters, digits and `_` only.
    pub schema: String,
    /// Most connections the pool keeps open. Default 8: searches are short
    /// (a few ms), so 8 connections serve far more than 8 concurrent
    /// requests; size it so that `replicas × pool_size` stays well under the
    /// server's `max_connections` (100 by default).
    pub pool_size: usize,
    /// How long a caller waits for a free connection (or for a new one to be
    /// established) before failing. Default 5 s.
    pub acquire_timeout: Duration,
    /// TCP connect timeout of one connection attempt. Default 5 s.
    pub connect_timeout: Duration,
    /// Attempts of a read (search, counts) when the failure is transient (a
    /// dropped or refused connection, the server shutting down, a
    /// serialization failure). Default 3, with 50 ms then 200 ms back-off.
    pub read_attempts: u32,
    /// An ingest writes the files it adds together once they hold this
    /// many chunks (or 32 MB of text), and before any removal: the term
    /// statistics are then updated once per batch. Default 20,000 (about
    /// 20 MB of chunks held; see `index::FLUSH_CHUNKS` for the measurements).
    pub ingest_batch_chunks: usize,
    /// An ingest that leaves this many chunk vectors or more builds the
    /// approximate (HNSW) index over them, if it is not there yet; hybrid
    /// search then scores its candidates and the full-text top rather than
    /// every vector. Default `vectors::ANN_MIN_CHUNKS` (20,000), the embedded
    /// index's threshold.
    pub ann_min_chunks: usize,
    /// How many chunks the full-text side of hybrid search ranks, about:
    /// the chunks holding one of the query's rarest lexemes, taken rarest
    /// first while their document frequencies sum to at most this many, or
    /// both of the two rarest when even the rarest is in more (the
    /// embedded index's rule, `groundcite_index::fusion::lexical_candidates`).
    /// Each candidate is ranked by every lexeme. `ts_rank` has no top-k
    /// pruning: ranking every chunk that contains any query word took
    /// seconds at a million chunks. Default
    /// `groundcite_index::fusion::LEXICAL_CANDIDATES` (3,000); 0 ranks every
    /// chunk containing any query lexeme (what lexical search does).
    pub lexical_candidates: usize,
    /// How many chunks the approximate (HNSW) index proposes to a hybrid
    /// search, nearest by their own vector: their units' sign codes then
    /// estimate each one's similarity, and the best
    /// `vectors::ANN_RERANK` (500) are scored exactly. More finds more of
    /// the exact ranking at more cost (`bench/src/bin/hybrid_scale_pg.rs` with
    /// `ANN_CANDIDATES=N`). Default 1,000: the most whose p99 stayed well
    /// within the 100 ms target at a million chunks (2,000: p99 90-132 ms).
    pub ann_candidates: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            schema: "groundcite".into(),
            pool_size: 8,
            acquire_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            read_attempts: 3,
            ingest_batch_chunks: crate::index::FLUSH_CHUNKS,
            ann_min_chunks: groundcite_index::vectors::ANN_MIN_CHUNKS,
            lexical_candidates: groundcite_index::fusion::LEXICAL_CANDIDATES,
            ann_candidates: 1_000,
        }
    }
}

impl PgOptions {
    /// The options with another schema.
    pub fn with_schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }
}

/// True for `postgres://` and `postgresql://` URLs: what selects this
/// backend wherever an index location is accepted.
pub fn is_postgres_url(s: &str) -> bool {
    let lower = s.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A parsed connection URL and the same target without its password.
#[derive(Clone)]
pub(crate) struct Target {
    pub config: tokio_postgres::Config,
    pub redacted: String,
}

pub(crate) fn check_schema_name(schema: &str) -> Result<(), Error> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && schema.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "invalid schema name {schema:?}: use lowercase letters, digits and _"
        )))
    }
}

impl Target {
    pub fn parse(url: &str, opts: &PgOptions) -> Result<Target, Error> {
        check_schema_name(&opts.schema)?;
        let mut config: tokio_postgres::Config = url.trim().parse().map_err(|e| {
            Error::Config(format!(
                "invalid database URL {}: {e}",
                redact_unparsed(url.trim())
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(opts.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("groundcite");
        }
        // Every unqualified name resolves in our schema, then in `public`
        // (where pgvector's type and operators live); JIT only adds
        // latency to these short queries (tens of ms of compilation when the
        // planner's estimates run high); custom plans fold the query's
        // `to_tsquery($n)` into constants instead of evaluating them per row
        // (a generic plan would). Options from the URL are kept.
        let options = format!(
            "{} -c search_path={},public -c jit=off -c plan_cache_mode=force_custom_plan",
            config.get_options().unwrap_or(""),
            opts.schema
        );
        config.options(options.trim_start());
        let redacted = redact(&config);
        Ok(Target { config, redacted })
    }

    pub fn pool(&self, opts: &PgOptions) -> Result<Pool, Error> {
        let manager = Manager::from_config(
            self.config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        Pool::builder(manager)
            .max_size(opts.pool_size.max(1))
            .wait_timeout(Some(opts.acquire_timeout))
            .create_timeout(Some(opts.acquire_timeout))
            .recycle_timeout(Some(opts.acquire_timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| Error::Config(format!("cannot build the connection pool: {e}")))
    }
}

/// A `postgres://` URL as it may be printed or logged: without its password
/// (and without query parameters). For `groundcite config` and messages.
pub fn redact_url(url: &str) -> String {
    match url.trim().parse::<tokio_postgres::Config>() {
        Ok(config) => redact(&config),
        Err(_) => redact_unparsed(url.trim()),
    }
}

/// `postgres://user@host:port/db` from a parsed config: never the password.
pub(crate) fn redact(config: &tokio_postgres::Config) -> String {
    let user = config.get_user().unwrap_or("");
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(s) => s.clone(),
                #[cfg(unix)]
                Host::Unix(p) => p.display().to_string(),
            };
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            format!("{host}:{port}")
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_string()
    } else {
        hosts.join(",")
    };
    let db = config.get_dbname().unwrap_or(user);
    if user.is_empty() {
        format!("postgres://{hosts}/{db}")
    } else {
        format!("postgres://{user}@{hosts}/{db}")
    }
}

/// Best effort for URLs that do not parse: drop anything between `:` and
/// `@` in the authority.
fn redact_unparsed(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(not a URL)".into();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_printed_without_passwords() {
        let t = Target::parse(
            "postgres://app:s3cret@db.example:6543/groundcite",
            &PgOptions::default(),
        )
        .unwrap();
        assert_eq!(t.redacted, "postgres://app@db.example:6543/groundcite");
        assert!(!redact_unparsed("postgres://app:s3cret@h:x/db").contains("s3cret"));
        assert_eq!(
            redact_url("postgresql://app:s3cret@h/db?sslmode=disable"),
            "postgres://app@h:5432/db"
        );
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(is_postgres_url("POSTGRES://h/db"));
        assert!(!is_postgres_url("./.groundcite/index"));
    }

    #[test]
    fn schema_names_are_checked() {
        assert!(check_schema_name("groundcite").is_ok());
        assert!(check_schema_name("t_1").is_ok());
        assert!(check_schema_name("x; drop table y").is_err());
        assert!(check_schema_name("").is_err());
        assert!(check_schema_name("1a").is_err());
    }
}
