//! [`PgAuditStore`]: the audit log in PostgreSQL (migration `0003_audit`).
//!
//! The [`AuditStore`] of `groundcite-audit` when the audit location is a
//! `postgres://` URL (the record, the trait, the SQLite store and the
//! contract suite live there; the queue and the writer thread in
//! `groundcite-server`). This crate knows the table, the pool and the
//! retries, and nothing of HTTP.
//!
//! **No duplicates, ever.** `request_id` is unique and a batch is one
//! `INSERT … SELECT FROM unnest(…) ON CONFLICT (request_id) DO NOTHING`
//! statement (one transaction). A batch whose commit was ambiguous (the
//! connection dropped while committing) is simply sent again: rows that made
//! it are skipped, the others are inserted. Transient failures (connection
//! refused or lost, server shutting down, serialization failure) are retried
//! up to [`PgOptions::read_attempts`] times, 50 ms then 200 ms apart. A
//! batch the database refuses (not the connection: a record that is not
//! valid JSON, say) is written again record by record, so that one bad
//! record does not take its batch with it.

use groundcite_audit::{AuditError, AuditQuery, AuditRecord, AuditStore, JsonText};
use tokio_postgres::Row;

use crate::client::Client;
use crate::migrate::read_status;
use crate::{Error, PgOptions};

/// The first schema version with the `audit` table.
pub const AUDIT_SCHEMA_VERSION: i32 = 3;

const UNVERIFIED_SQL: &str =
    "(status = 'unverified' OR bad_ids <> '[]'::jsonb OR refusal = 'validation')";
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

    /// Inserts a batch in one statement (one transaction), skipping
    /// records whose `request_id` is already stored; retried on transient
    /// errors. Returns how many records were new.
    pub fn insert(&self, records: &[AuditRecord]) -> Result<u64, Error> {
        if records.is_empty() {
            return Ok(0);
        }
        fn col<T>(records: &[AuditRecord], f: impl Fn(&AuditRecord) -> T) -> Vec<T> {
            records.iter().map(f).collect()
        }
        let text = |j: &JsonText| j.as_str().to_string();
        let request_id = col(records, |r| r.request_id.clone());
        let ts = col(records, |r| r.ts.clone());
        let kind = col(records, |r| r.kind.clone());
        let question = col(records, |r| r.question.clone());
        let status = col(records, |r| r.status.clone());
        let grounded = col(records, |r| r.grounded);
        let refusal = col(records, |r| r.refusal.clone());
        let regenerated = col(records, |r| r.regenerated);
        let contradicted = col(records, |r| r.contradicted as i32);
        let unsupported = col(records, |r| r.unsupported as i32);
        let uncited = col(records, |r| r.uncited as i32);
        let bad_ids = col(records, |r| json_list(&r.bad_ids));
        let passage_ids = col(records, |r| json_list(&r.passage_ids));
        let attempts = col(records, |r| text(&r.attempts));
        let timings = col(records, |r| text(&r.timings));
        let report = col(records, |r| text(&r.report));
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

    /// The records matching `q`.
    pub fn list(&self, q: &AuditQuery) -> Result<Vec<AuditRecord>, Error> {
        let sql = format!("SELECT {COLUMNS} FROM audit{}", q.sql(UNVERIFIED_SQL, "$1"));
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let rows = match &q.kind {
                Some(k) => client.query(&sql, &[k]).await?,
                None => client.query(&sql, &[]).await?,
            };
            rows.iter().map(from_row).collect::<Result<Vec<_>, Error>>()
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

impl AuditStore for PgAuditStore {
    fn location(&self) -> String {
        self.target().to_string()
    }

    fn write(&mut self, batch: &[AuditRecord]) -> Result<u64, AuditError> {
        match self.insert(batch) {
            Ok(inserted) => {
                if inserted < batch.len() as u64 {
                    tracing::debug!(
                        skipped = batch.len() as u64 - inserted,
                        "audit records already stored (a retried batch): skipped"
                    );
                }
                Ok(0)
            }
            // The database refused the statement (not the connection): one
            // bad record must not take the batch with it.
            Err(Error::Db(message)) if batch.len() > 1 => {
                tracing::warn!(error = %message, records = batch.len(), "audit batch refused: writing its records one by one");
                let mut rejected = 0;
                for record in batch {
                    if let Err(err) = self.insert(std::slice::from_ref(record)) {
                        tracing::error!(request_id = %record.request_id, error = %err, "audit record refused");
                        rejected += 1;
                    }
                }
                Ok(rejected)
            }
            Err(err) => Err(err.into()),
        }
    }

    fn list(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AuditError> {
        Ok(PgAuditStore::list(self, query)?)
    }

    fn count(&self) -> Result<u64, AuditError> {
        Ok(PgAuditStore::count(self)?)
    }
}

fn json_list<T: serde::Serialize>(items: &[T]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

fn from_row(row: &Row) -> Result<AuditRecord, Error> {
    let id: i64 = row.get(0);
    let list = |i: usize| {
        let text: String = row.get(i);
        text
    };
    let bad = |e: serde_json::Error| Error::Db(format!("audit record {id}: {e}"));
    Ok(AuditRecord {
        id,
        request_id: row.get(1),
        ts: row.get(2),
        kind: row.get(3),
        question: row.get(4),
        status: row.get(5),
        grounded: row.get(6),
        refusal: row.get(7),
        regenerated: row.get(8),
        contradicted: row.get::<_, i32>(9).max(0) as u32,
        unsupported: row.get::<_, i32>(10).max(0) as u32,
        uncited: row.get::<_, i32>(11).max(0) as u32,
        bad_ids: serde_json::from_str(&list(12)).map_err(bad)?,
        passage_ids: serde_json::from_str(&list(13)).map_err(bad)?,
        attempts: JsonText::new(list(14)),
        timings: JsonText::new(list(15)),
        report: JsonText::new(list(16)),
    })
}
