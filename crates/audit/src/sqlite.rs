//! [`SqliteAuditStore`]: the audit log in one SQLite file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};

use crate::{
    AuditError, AuditQuery, AuditRecord, AuditStore, JsonText, Pruned, Result, Retention, Written,
};

/// The schema version this build writes (`PRAGMA user_version`).
pub const SQLITE_SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY,
  request_id TEXT NOT NULL,
  ts TEXT NOT NULL,
  kind TEXT NOT NULL,
  question TEXT,
  status TEXT NOT NULL,
  grounded INTEGER NOT NULL,
  refusal TEXT,
  regenerated INTEGER NOT NULL,
  contradicted INTEGER NOT NULL,
  unsupported INTEGER NOT NULL,
  uncited INTEGER NOT NULL,
  bad_ids TEXT NOT NULL,
  passage_ids TEXT NOT NULL,
  attempts TEXT NOT NULL,
  timings TEXT NOT NULL,
  report TEXT NOT NULL,
  client_request_id TEXT
);
";

/// Version 1 to 2: the client's id gets its own column (the old
/// `request_id`s, client-chosen, are copied there), repeated old ids are
/// made unique with their row id, and `request_id` becomes unique.
const UPGRADE_1_TO_2: &str = "
ALTER TABLE audit ADD COLUMN client_request_id TEXT;
UPDATE audit SET client_request_id = request_id;
UPDATE audit SET request_id = request_id || '~' || id
  WHERE id NOT IN (SELECT min(id) FROM audit GROUP BY request_id);
";

const INDEXES: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS audit_request_id ON audit(request_id);
CREATE INDEX IF NOT EXISTS audit_status ON audit(status);
CREATE INDEX IF NOT EXISTS audit_flagged ON audit(contradicted, unsupported);
PRAGMA user_version = 2;
";

const INSERT_SQL: &str =
    "INSERT INTO audit (request_id, ts, kind, question, status, grounded, refusal, regenerated,
   contradicted, unsupported, uncited, bad_ids, passage_ids, attempts, timings, report,
   client_request_id)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
 ON CONFLICT (request_id) DO NOTHING";

/// Is the record stored under this `request_id` the same record (a batch
/// written again), not another one (a conflict)?
const SAME_SQL: &str =
    "SELECT count(*) FROM audit WHERE request_id = ?1 AND ts = ?2 AND kind = ?3 AND report = ?4";

const UNVERIFIED_SQL: &str = "(status = 'unverified' OR bad_ids != '[]' OR refusal = 'validation')";
const COLUMNS: &str = "id, request_id, ts, kind, question, status, grounded, refusal, regenerated,
    contradicted, unsupported, uncited, bad_ids, passage_ids, attempts, timings, report";

/// The audit log in a SQLite file (WAL; one writer, any number of readers),
/// `request_id` unique (schema version [`SQLITE_SCHEMA_VERSION`]).
#[derive(Debug)]
pub struct SqliteAuditStore {
    conn: Connection,
    path: PathBuf,
    /// A version 1 file opened read-only has no `client_request_id`.
    client_column: bool,
}

fn has_client_column(conn: &Connection) -> Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('audit') WHERE name = 'client_request_id'",
        [],
        |row| row.get(0),
    )?;
    Ok(n > 0)
}

impl SqliteAuditStore {
    /// Opens the file for writing, creating it (and its parent directory)
    /// and the table when missing.
    pub fn open(path: &Path) -> Result<SqliteAuditStore> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let conn = Connection::open(path).map_err(|error| AuditError::Open {
            path: path.to_path_buf(),
            error,
        })?;
        conn.busy_timeout(Duration::from_secs(5))?;
        // 16 KiB pages hold a typical record (2-4 KB of JSON) without overflow
        // chains, and checkpoints every 64 MiB of WAL keep fsyncs rare: together
        // about 4x cheaper per record than the defaults on this workload. The
        // page size only applies to a new database.
        conn.pragma_update(None, "page_size", 16384)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", 4096)?;
        conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if version > SQLITE_SCHEMA_VERSION {
            return Err(AuditError::Backend(
                format!(
                    "audit database {}: schema version {version} is newer than this build's \
                     {SQLITE_SCHEMA_VERSION}",
                    path.display()
                )
                .into(),
            ));
        }
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(SCHEMA)?;
        if !has_client_column(&tx)? {
            tx.execute_batch(UPGRADE_1_TO_2)?;
        }
        tx.execute_batch(INDEXES)?;
        tx.commit()?;
        Ok(SqliteAuditStore {
            conn,
            path: path.to_path_buf(),
            client_column: true,
        })
    }

    /// Opens an existing file for reading only.
    pub fn open_read_only(path: &Path) -> Result<SqliteAuditStore> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|error| AuditError::Open {
            path: path.to_path_buf(),
            error,
        })?;
        conn.busy_timeout(Duration::from_secs(5))?;
        let client_column = has_client_column(&conn)?;
        Ok(SqliteAuditStore {
            conn,
            path: path.to_path_buf(),
            client_column,
        })
    }
}

impl AuditStore for SqliteAuditStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn write(&mut self, batch: &[AuditRecord]) -> Result<Written> {
        let tx = self.conn.transaction()?;
        let mut written = Written::default();
        {
            let mut stmt = tx.prepare_cached(INSERT_SQL)?;
            let mut same = tx.prepare_cached(SAME_SQL)?;
            for r in batch {
                let inserted = stmt.execute(params![
                    r.request_id,
                    r.ts,
                    r.kind,
                    r.question,
                    r.status,
                    r.grounded,
                    r.refusal,
                    r.regenerated,
                    r.contradicted,
                    r.unsupported,
                    r.uncited,
                    json_list(&r.bad_ids),
                    json_list(&r.passage_ids),
                    r.attempts.as_str(),
                    r.timings.as_str(),
                    r.report.as_str(),
                    r.client_request_id,
                ])?;
                if inserted == 0 {
                    let n: i64 = same.query_row(
                        params![r.request_id, r.ts, r.kind, r.report.as_str()],
                        |row| row.get(0),
                    )?;
                    if n == 0 {
                        written.conflicts += 1;
                    }
                }
            }
        }
        tx.commit()?;
        Ok(written)
    }

    fn list(&self, q: &AuditQuery) -> Result<Vec<AuditRecord>> {
        let client = if self.client_column {
            "client_request_id"
        } else {
            "NULL"
        };
        let sql = format!(
            "SELECT {COLUMNS}, {client} FROM audit{}",
            q.sql(UNVERIFIED_SQL, "?1")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = match &q.kind {
            Some(k) => stmt.query(params![k])?,
            None => stmt.query([])?,
        };
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(from_row(row)?);
        }
        Ok(out)
    }

    fn count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM audit", [], |row| row.get(0))?;
        Ok(n as u64)
    }

    fn prune(&mut self, retention: &Retention) -> Result<Pruned> {
        let tx = self.conn.transaction()?;
        let mut pruned = Pruned::default();
        if let Some(before) = &retention.before {
            pruned.by_age = tx.execute("DELETE FROM audit WHERE ts < ?1", params![before])? as u64;
        }
        if let Some(max) = retention.max_bytes {
            pruned.by_size = tx.execute(PRUNE_TO_SIZE_SQL, params![max as i64])? as u64;
        }
        tx.commit()?;
        Ok(pruned)
    }
}

/// Keeps the newest records whose variable text
/// ([`AuditRecord::stored_bytes`]; `CAST AS BLOB` counts bytes, not
/// characters) adds up to at most `?1` bytes.
const PRUNE_TO_SIZE_SQL: &str = "
DELETE FROM audit WHERE id IN (
  SELECT id FROM (
    SELECT id, sum(length(CAST(coalesce(question, '') AS BLOB)) + length(CAST(attempts AS BLOB))
               + length(CAST(timings AS BLOB)) + length(CAST(report AS BLOB)))
           OVER (ORDER BY id DESC) AS newer_bytes
    FROM audit)
  WHERE newer_bytes > ?1)";

fn json_list<T: serde::Serialize>(items: &[T]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

/// A JSON list column of record `id`.
fn decode_list<T: serde::de::DeserializeOwned>(
    row: &rusqlite::Row<'_>,
    id: i64,
    column: usize,
) -> Result<Vec<T>> {
    let text: String = row.get(column)?;
    serde_json::from_str(&text).map_err(|error| AuditError::Json { id, error })
}

fn from_row(row: &rusqlite::Row<'_>) -> Result<AuditRecord> {
    let id: i64 = row.get(0)?;
    let bad_ids: Vec<u64> = decode_list(row, id, 12)?;
    let passage_ids: Vec<String> = decode_list(row, id, 13)?;
    Ok(AuditRecord {
        id,
        request_id: row.get(1)?,
        client_request_id: row.get(17)?,
        ts: row.get(2)?,
        kind: row.get(3)?,
        question: row.get(4)?,
        status: row.get(5)?,
        grounded: row.get(6)?,
        refusal: row.get(7)?,
        regenerated: row.get(8)?,
        contradicted: row.get(9)?,
        unsupported: row.get(10)?,
        uncited: row.get(11)?,
        bad_ids,
        passage_ids,
        attempts: JsonText::new(row.get::<_, String>(14)?),
        timings: JsonText::new(row.get::<_, String>(15)?),
        report: JsonText::new(row.get::<_, String>(16)?),
    })
}
