//! [`PgAuditStore`]: the audit log in PostgreSQL (migration `0003_audit`).
//!
//! The storage half of the service's audit log when its location is a
//! `postgres://` URL. The queue, the writer thread and the record type live
//! in `groundcite-server` (`audit` module), which hands this store batches
//! of [`AuditRow`]s; this crate knows the table, the pool and the retries,
//! and nothing of HTTP.
//!
//! **No duplicates, ever.** `request_id` is unique and a batch is one
//! `INSERT … SELECT FROM unnest(…) ON CONFLICT (request_id) DO NOTHING`
//! statement (one transaction). A batch whose commit was ambiguous (the
//! connection dropped while committing) is simply sent again: rows that made
//! it are skipped, the others are inserted. Transient failures (connection
//! refused or lost, server shutting down, serialization failure) are retried
//! up to [`PgOptions::read_attempts`] times, 50 ms then 200 ms apart.

use tokio_postgres::Row;

use crate::client::Client;
use crate::migrate::read_status;
use crate::{Error, PgOptions};

/// The first schema version with the `audit` table.
pub const AUDIT_SCHEMA_VERSION: i32 = 3;

/// One audit record in its column form (the JSON columns as JSON text), the
/// same columns as the SQLite audit log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditRow {
    /// Unique: a second row with the same id is skipped.
    pub request_id: String,
    /// RFC 3339.
    pub ts: String,
    pub kind: String,
    pub question: Option<String>,
    pub status: String,
    pub grounded: bool,
    pub refusal: Option<String>,
    pub regenerated: bool,
    pub contradicted: i32,
    pub unsupported: i32,
    pub uncited: i32,
    /// JSON array of integers.
    pub bad_ids: String,
    /// JSON array of strings.
    pub passage_ids: String,
    /// JSON array.
    pub attempts: String,
    /// JSON object.
    pub timings: String,
    /// JSON: the answer object or report, exactly as served (kept verbatim).
    pub report: String,
}

/// A row as read back: its insertion-order id and columns (`ts` as
/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, JSON columns as JSON text).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAuditRow {
    pub id: i64,
    pub row: AuditRow,
}

/// Which rows to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only incidents: with `unverified` and/or `unsupported` (neither: both
    /// kinds).
    pub incidents: bool,
    /// Markers that did not all resolve.
    pub unverified: bool,
    /// A contradicted or unsupported sentence.
    pub unsupported: bool,
    /// Only `ask` or `check` records.
    pub kind: Option<String>,
    /// Only rows with an id above this (keyset paging, oldest first).
    pub after_id: Option<i64>,
    /// Newest first (else oldest first).
    pub newest_first: bool,
    pub limit: Option<usize>,
}

const UNVERIFIED_SQL: &str =
    "(status = 'unverified' OR bad_ids <> '[]'::jsonb OR refusal = 'validation')";
const UNSUPPORTED_SQL: &str = "(contradicted + unsupported > 0)";
const COLUMNS: &str = "id, request_id, \
    to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), kind, question, status, \
    grounded, refusal, regenerated, contradicted, unsupported, uncited, bad_ids::text, \
    passage_ids::text, attempts::text, timings::text, report::text";

const INSERT_SQL: &str = "
INSERT INTO audit (request_id, ts, kind, question, status, grounded, refusal, regenerated,
                   contradicted, unsupported, uncited, bad_ids, passage_ids, attempts, timings, report)
SELECT r, t::timestamptz, k, q, s, g, rf, rg, c, u, uc, b::jsonb, p::jsonb, a::json, tm::json, rp::json
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[],
            $8::bool[], $9::int4[], $10::int4[], $11::int4[], $12::text[], $13::text[],
            $14::text[], $15::text[], $16::text[])
     AS x(r, t, k, q, s, g, rf, rg, c, u, uc, b, p, a, tm, rp)
ON CONFLICT (request_id) DO NOTHING";

/// The audit table of one schema, through a small pool.
pub struct PgAuditStore {
    client: Client,
}

impl std::fmt::Debug for PgAuditStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgAuditStore")
            .field("target", &self.client.target.redacted)
            .field("schema", &self.client.opts.schema)
            .finish()
    }
}

impl PgAuditStore {
    /// Connects and checks that the schema has the audit table
    /// ([`Error::SchemaBehind`] otherwise: run `groundcite db migrate`).
    pub fn connect(url: &str, opts: PgOptions) -> Result<PgAuditStore, Error> {
        let store = PgAuditStore {
            client: Client::new(url, opts, "groundcite-pg-audit")?,
        };
        let status = store.client.retry(is_transient, || async {
            let client = store.client.conn().await?;
            read_status(&client, &store.client.target, &store.client.opts).await
        })?;
        if status.version() < AUDIT_SCHEMA_VERSION {
            return Err(Error::SchemaBehind {
                at: status.version(),
                target: status.target,
                schema: status.schema,
                needs: AUDIT_SCHEMA_VERSION,
            });
        }
        Ok(store)
    }

    /// The database URL without its password.
    pub fn target(&self) -> &str {
        &self.client.target.redacted
    }

    /// Inserts a batch in one statement (one transaction), skipping rows
    /// whose `request_id` is already stored; retried on transient errors.
    /// Returns how many rows were new.
    pub fn insert(&self, rows: &[AuditRow]) -> Result<u64, Error> {
        if rows.is_empty() {
            return Ok(0);
        }
        macro_rules! col {
            ($f:ident) => {
                rows.iter().map(|r| r.$f.clone()).collect::<Vec<_>>()
            };
        }
        let (request_id, ts, kind, question, status) = (
            col!(request_id),
            col!(ts),
            col!(kind),
            col!(question),
            col!(status),
        );
        let (grounded, refusal, regenerated) = (col!(grounded), col!(refusal), col!(regenerated));
        let (contradicted, unsupported, uncited) =
            (col!(contradicted), col!(unsupported), col!(uncited));
        let (bad_ids, passage_ids, attempts, timings, report) = (
            col!(bad_ids),
            col!(passage_ids),
            col!(attempts),
            col!(timings),
            col!(report),
        );
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let stmt = client.prepare_cached(INSERT_SQL).await?;
            let n = client
                .execute(
                    &stmt,
                    &[
                        &request_id,
                        &ts,
                        &kind,
                        &question,
                        &status,
                        &grounded,
                        &refusal,
                        &regenerated,
                        &contradicted,
                        &unsupported,
                        &uncited,
                        &bad_ids,
                        &passage_ids,
                        &attempts,
                        &timings,
                        &report,
                    ],
                )
                .await?;
            Ok(n)
        })
    }

    /// The rows matching `q`.
    pub fn list(&self, q: &AuditQuery) -> Result<Vec<StoredAuditRow>, Error> {
        let mut clauses = Vec::new();
        if q.incidents {
            clauses.push(match (q.unverified, q.unsupported) {
                (true, false) => UNVERIFIED_SQL.to_string(),
                (false, true) => UNSUPPORTED_SQL.to_string(),
                _ => format!("({UNVERIFIED_SQL} OR {UNSUPPORTED_SQL})"),
            });
        }
        if q.kind.is_some() {
            clauses.push("kind = $1".into());
        }
        if let Some(after) = q.after_id {
            clauses.push(format!("id > {after}"));
        }
        let filter = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        let order = if q.newest_first { "DESC" } else { "ASC" };
        let limit = q.limit.map_or_else(String::new, |n| format!(" LIMIT {n}"));
        let sql = format!("SELECT {COLUMNS} FROM audit{filter} ORDER BY id {order}{limit}");
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let rows = match &q.kind {
                Some(k) => client.query(&sql, &[k]).await?,
                None => client.query(&sql, &[]).await?,
            };
            Ok(rows.iter().map(from_row).collect())
        })
    }

    /// How many rows, and how many distinct request ids (equal, by the
    /// unique constraint; a check for operations and tests).
    pub fn count(&self) -> Result<u64, Error> {
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let row = client.query_one("SELECT count(*) FROM audit", &[]).await?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }
}

fn is_transient(e: &Error) -> bool {
    matches!(
        e,
        Error::Connect { .. } | Error::Unavailable(_) | Error::PoolTimeout(_)
    )
}

fn from_row(row: &Row) -> StoredAuditRow {
    StoredAuditRow {
        id: row.get(0),
        row: AuditRow {
            request_id: row.get(1),
            ts: row.get(2),
            kind: row.get(3),
            question: row.get(4),
            status: row.get(5),
            grounded: row.get(6),
            refusal: row.get(7),
            regenerated: row.get(8),
            contradicted: row.get(9),
            unsupported: row.get(10),
            uncited: row.get(11),
            bad_ids: row.get(12),
            passage_ids: row.get(13),
            attempts: row.get(14),
            timings: row.get(15),
            report: row.get(16),
        },
    }
}
