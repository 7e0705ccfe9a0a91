//! Numbered SQL migrations embedded in the binary, applied in order under an
//! advisory lock and recorded in `schema_migrations`.

use tokio_postgres::{Client, NoTls};

use crate::config::Target;
use crate::{Error, PgOptions};

/// One migration: `migrations/{version:04}_{name}.sql`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// The migration's number, from 1; applied in ascending order.
    pub version: i32,
    /// A short name, as in the file name.
    pub name: &'static str,
    /// The SQL run, embedded from the file.
    pub sql: &'static str,
}

impl Migration {
    /// BLAKE3 of the SQL, recorded when applied: a migration edited after it
    /// shipped shows up in [`SchemaStatus::modified`].
    pub fn checksum(&self) -> String {
        blake3::hash(self.sql.as_bytes()).to_hex().to_string()
    }
}

/// Every migration this binary knows, in order. Never edit a released one:
/// add the next number.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "chunks",
        sql: include_str!("../migrations/0001_chunks.sql"),
    },
    Migration {
        version: 2,
        name: "term_stats",
        sql: include_str!("../migrations/0002_term_stats.sql"),
    },
    Migration {
        version: 3,
        name: "audit",
        sql: include_str!("../migrations/0003_audit.sql"),
    },
    Migration {
        version: 4,
        name: "audit_client_id",
        sql: include_str!("../migrations/0004_audit_client_id.sql"),
    },
    Migration {
        version: 5,
        name: "chunk_vectors",
        sql: include_str!("../migrations/0005_chunk_vectors.sql"),
    },
    Migration {
        version: 6,
        name: "unit_vectors",
        sql: include_str!("../migrations/0006_unit_vectors.sql"),
    },
    Migration {
        version: 7,
        name: "unit_codes",
        sql: include_str!("../migrations/0007_unit_codes.sql"),
    },
];

/// Appended to a migration error about pgvector: what the database needs.
const PGVECTOR_HINT: &str = "; the index's chunk vectors need the pgvector extension: \
install it on the server (0.8 or later) and have a superuser run \
`CREATE EXTENSION vector SCHEMA public` (or `ALTER EXTENSION vector UPDATE` \
after an upgrade) in this database, then migrate again";

/// The schema version this binary needs.
pub fn latest_version() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// A migration recorded in `schema_migrations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedMigration {
    /// The migration's number.
    pub version: i32,
    /// The migration's name, as recorded.
    pub name: String,
    /// The BLAKE3 of its SQL when applied, hex ([`Migration::checksum`]).
    pub checksum: String,
    /// RFC 3339, UTC.
    pub applied_at: String,
}

/// Where the database's schema stands relative to this binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaStatus {
    /// The database, without its password.
    pub target: String,
    /// The PostgreSQL schema ([`PgOptions::schema`]).
    pub schema: String,
    /// The migrations recorded in `schema_migrations`, by version; empty
    /// when the schema has no such table yet.
    pub applied: Vec<AppliedMigration>,
    /// Known to this binary, not applied: `(version, name)`.
    pub pending: Vec<(i32, &'static str)>,
    /// Applied by a newer binary: versions this one does not know.
    pub unknown: Vec<i32>,
    /// Applied with a different checksum than this binary's SQL.
    pub modified: Vec<i32>,
}

impl SchemaStatus {
    /// True when migrations are pending: run `groundcite db migrate`.
    pub fn is_behind(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The highest applied version (0 when none).
    pub fn version(&self) -> i32 {
        self.applied.iter().map(|m| m.version).max().unwrap_or(0)
    }
}

/// What `migrate` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// Migrations applied by this call, `(version, name)`.
    pub applied_now: Vec<(i32, &'static str)>,
    /// Where the schema stands after them.
    pub status: SchemaStatus,
}

/// Applies every pending migration, each in its own transaction with its
/// `schema_migrations` row. Idempotent; concurrent callers serialise on a
/// session advisory lock (per schema), so the second one finds nothing to do.
pub fn migrate(url: &str, opts: &PgOptions) -> Result<MigrateReport, Error> {
    let target = Target::parse(url, opts)?;
    run(async {
        let client = connect(&target).await?;
        let key = lock_key("migrate", &opts.schema);
        client
            .execute("SELECT pg_advisory_lock($1)", &[&key])
            .await?;
        let result = apply_pending(&client, &target, opts).await;
        let unlock = client
            .execute("SELECT pg_advisory_unlock($1)", &[&key])
            .await;
        let report = result?;
        unlock?;
        Ok(report)
    })
}

/// Reads the schema's status without changing anything.
pub fn status(url: &str, opts: &PgOptions) -> Result<SchemaStatus, Error> {
    let target = Target::parse(url, opts)?;
    run(async {
        let client = connect(&target).await?;
        read_status(&client, &target, opts).await
    })
}

/// Drops the schema and everything in it (tests and teardown only).
pub fn drop_schema(url: &str, opts: &PgOptions) -> Result<(), Error> {
    let target = Target::parse(url, opts)?;
    run(async {
        let client = connect(&target).await?;
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", opts.schema))
            .await?;
        Ok(())
    })
}

async fn apply_pending(
    client: &Client,
    target: &Target,
    opts: &PgOptions,
) -> Result<MigrateReport, Error> {
    client
        .batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {schema};
             CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
                 version    integer PRIMARY KEY,
                 name       text NOT NULL,
                 checksum   text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );",
            schema = opts.schema
        ))
        .await?;
    let before = read_status(client, target, opts).await?;
    let mut applied_now = Vec::new();
    for m in MIGRATIONS {
        if !before.pending.iter().any(|(v, _)| *v == m.version) {
            continue;
        }
        client.batch_execute("BEGIN").await?;
        let step = async {
            client.batch_execute(m.sql).await?;
            client
                .execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    &[&m.version, &m.name, &m.checksum()],
                )
                .await?;
            client.batch_execute("COMMIT").await
        }
        .await;
        if let Err(e) = step {
            let _ = client.batch_execute("ROLLBACK").await;
            let mut message = crate::db_message(&e);
            if message.contains("vector") {
                message.push_str(PGVECTOR_HINT);
            }
            return Err(Error::Migration {
                version: m.version,
                name: m.name,
                message,
            });
        }
        applied_now.push((m.version, m.name));
    }
    let status = read_status(client, target, opts).await?;
    Ok(MigrateReport {
        applied_now,
        status,
    })
}

pub(crate) async fn read_status(
    client: &Client,
    target: &Target,
    opts: &PgOptions,
) -> Result<SchemaStatus, Error> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass(quote_ident($1) || '.schema_migrations') IS NOT NULL",
            &[&opts.schema],
        )
        .await?
        .get(0);
    let mut applied = Vec::new();
    if exists {
        for row in client
            .query(
                "SELECT version, name, checksum,
                        to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
                 FROM schema_migrations ORDER BY version",
                &[],
            )
            .await?
        {
            applied.push(AppliedMigration {
                version: row.get(0),
                name: row.get(1),
                checksum: row.get(2),
                applied_at: row.get(3),
            });
        }
    }
    let pending = MIGRATIONS
        .iter()
        .filter(|m| !applied.iter().any(|a| a.version == m.version))
        .map(|m| (m.version, m.name))
        .collect();
    let unknown = applied
        .iter()
        .filter(|a| !MIGRATIONS.iter().any(|m| m.version == a.version))
        .map(|a| a.version)
        .collect();
    let modified = applied
        .iter()
        .filter(|a| {
            MIGRATIONS
                .iter()
                .any(|m| m.version == a.version && m.checksum() != a.checksum)
        })
        .map(|a| a.version)
        .collect();
    Ok(SchemaStatus {
        target: target.redacted.clone(),
        schema: opts.schema.clone(),
        applied,
        pending,
        unknown,
        modified,
    })
}

/// One direct connection (no pool), its driver task spawned.
pub(crate) async fn connect(target: &Target) -> Result<Client, Error> {
    let (client, connection) = target
        .config
        .connect(NoTls)
        .await
        .map_err(|e| Error::Connect {
            target: target.redacted.clone(),
            message: crate::db_message(&e),
        })?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// A stable advisory-lock key for `purpose` in `schema` (FNV-1a, 64 bits).
pub(crate) fn lock_key(purpose: &str, schema: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("groundcite:{purpose}:{schema}").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// Runs a future on a small runtime of its own (or on a scoped thread when
/// called from inside another runtime).
fn run<T: Send>(
    fut: impl std::future::Future<Output = Result<T, Error>> + Send,
) -> Result<T, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Config(format!("cannot start a runtime: {e}")))?;
    if tokio::runtime::Handle::try_current().is_ok() {
        // The runtime goes with the thread: dropping it here, inside
        // another runtime, would panic.
        std::thread::scope(|s| {
            s.spawn(move || rt.block_on(fut))
                .join()
                .unwrap_or_else(|_| Err(Error::Config("migration thread panicked".into())))
        })
    } else {
        rt.block_on(fut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i32 + 1, "{}", m.name);
            assert!(!m.sql.trim().is_empty());
        }
        assert_eq!(latest_version(), MIGRATIONS.len() as i32);
    }

    #[test]
    fn lock_keys_differ_by_schema() {
        assert_ne!(lock_key("migrate", "a"), lock_key("migrate", "b"));
        assert_eq!(lock_key("migrate", "a"), lock_key("migrate", "a"));
    }
}
