//! # groundcite-audit: the audit log's record and its stores
//!
//! Every answer the service sends (and, unless turned off, every
//! `POST /v1/check` report) becomes one [`AuditRecord`]: the question, the
//! ids of the passages sent, the raw model output of every attempt, the
//! full report exactly as served, the status, the timings, the request id
//! and a timestamp.
//!
//! Storage is a trait, [`AuditStore`], with two implementations: the
//! SQLite file of this crate ([`SqliteAuditStore`]) and PostgreSQL
//! (`groundcite_pg::PgAuditStore`, the `audit` table of migration
//! `0003_audit`). One contract suite ([`contract`]) runs against both. The
//! read side ([`incidents`], [`each`], [`export_jsonl`],
//! [`export_incidents_jsonl`]) is written once, over the trait.
//!
//! The write side is [`AuditLog`] ([`writer`]): a bounded queue and one
//! writer thread that drains it into a store, a batch per transaction,
//! with the commit wait (an answer is served only once its record has
//! committed), pruning and reopening after a failure. It opens its store
//! through a [`StoreOpener`] (this crate's [`SqliteFiles`], or
//! `groundcite_engine::audit::Stores`, which also knows PostgreSQL) and
//! reports what it does to an [`AuditObserver`] (the service's metrics).
//!
//! This crate knows nothing of HTTP or of the answers: `groundcite-engine`
//! builds the records from its answers (`groundcite_engine::audit`), the
//! service (`groundcite-server`) and `groundcite ask` hand them to an
//! [`AuditLog`], and `groundcite audit` reads through the same trait.
//!
//! ## The SQLite schema
//!
//! PostgreSQL has the same columns (`bigint` identity `id`, unique
//! `request_id`, `timestamptz`, `boolean`, `jsonb` id lists, `json`
//! documents kept verbatim; `client_request_id` from migration
//! `0004_audit_client_id`). SQLite (`PRAGMA user_version = 2`):
//!
//! ```sql
//! CREATE TABLE audit (
//!   id INTEGER PRIMARY KEY,      -- insertion order
//!   request_id TEXT NOT NULL,    -- the server's audit id (unique index audit_request_id)
//!   ts TEXT NOT NULL,            -- RFC 3339, UTC, milliseconds
//!   kind TEXT NOT NULL,          -- ask | check
//!   question TEXT,
//!   status TEXT NOT NULL,        -- ok | unverified | no_evidence
//!   grounded INTEGER NOT NULL,
//!   refusal TEXT,                -- refusal cause (gate | sentinel | validation), or the refusal form for checks
//!   regenerated INTEGER NOT NULL,
//!   contradicted INTEGER NOT NULL, unsupported INTEGER NOT NULL, uncited INTEGER NOT NULL,
//!   bad_ids TEXT NOT NULL,       -- JSON: ids never sent, cited by any attempt
//!   passage_ids TEXT NOT NULL,   -- JSON: ids of the passages sent, in order ([k] is k-1)
//!   attempts TEXT NOT NULL,      -- JSON: [{raw, bad_ids, error}] per generation attempt
//!   timings TEXT NOT NULL,       -- JSON: {retrieve_ms, gate_ms, generate_ms, check_ms, total_ms}
//!   report TEXT NOT NULL,        -- JSON: the full answer object (ask) or check report (check)
//!   client_request_id TEXT       -- the client's x-request-id, if any (version 2)
//! );
//! ```
//!
//! A version 1 file is upgraded when opened for writing: the column is
//! added, every old `request_id` (then the client's id, or a generated one)
//! is copied into it, and a repeated old `request_id` gets its row id
//! appended (`dup~17`) so that the unique index can be built.
//!
//! ## Audit ids and conflicts
//!
//! The service generates every `request_id` ([`new_request_id`]: a 48-bit
//! millisecond time and 80 random bits): a client
//! cannot choose, replay or predict one. A store never overwrites a
//! record: a record whose `request_id` is already stored with the same
//! content (a batch sent again after an ambiguous commit) is skipped, and
//! one stored with *different* content is a **conflict**, reported by
//! [`AuditStore::write`] in [`Written::conflicts`] (the service counts it
//! as `groundcite_audit_write_failures_total{reason="conflict"}` and logs
//! it at error level: it means a broken id generator, never traffic).
//!
//! ## The export
//!
//! [`export_jsonl`] writes one record per line, oldest first, as
//! [`AuditRecord`] serializes: the columns by name, the JSON columns as
//! JSON values (not strings).

pub mod contract;
mod id;
mod record;
mod sqlite;
pub mod writer;

use std::io::Write;

pub use id::new_request_id;
pub use record::{AuditRecord, JsonText};
pub use sqlite::{SQLITE_SCHEMA_VERSION, SqliteAuditStore};
pub use writer::{
    AuditConfig, AuditLog, AuditObserver, DEFAULT_AUDIT_PATH, DEFAULT_COMMIT_WAIT_MS, LossReason,
    NoObserver, PRUNE_INTERVAL, REOPEN_INTERVAL, SqliteFiles, StoreOpener, Unrecorded,
};

/// Errors of the audit stores. Each message already includes the error it
/// wraps, which is therefore not also its `source`: a printer of the
/// chain (`{:#}`) would say it twice.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The SQLite file could not be opened.
    #[error("audit database {path}: {error}")]
    Open {
        /// The file's path.
        path: std::path::PathBuf,
        /// SQLite's error.
        error: rusqlite::Error,
    },
    /// A SQLite statement failed.
    #[error("audit database: {0}")]
    Sqlite(rusqlite::Error),
    /// A record's JSON column could not be read back, or the record could
    /// not be serialized for an export.
    #[error("audit record {id}: {error}")]
    Json {
        /// The record's [`AuditRecord::id`].
        id: i64,
        /// The JSON error.
        error: serde_json::Error,
    },
    /// Writing the export (or creating the database's folder) failed.
    #[error("writing the export: {0}")]
    Io(std::io::Error),
    /// A failure of another store (PostgreSQL), with its own message.
    #[error("audit database: {0}")]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl From<rusqlite::Error> for AuditError {
    fn from(e: rusqlite::Error) -> Self {
        AuditError::Sqlite(e)
    }
}

impl From<std::io::Error> for AuditError {
    fn from(e: std::io::Error) -> Self {
        AuditError::Io(e)
    }
}

/// A result whose error is an [`AuditError`] by default.
pub type Result<T, E = AuditError> = std::result::Result<T, E>;

/// What [`AuditStore::write`] did with a batch: every record not counted
/// here is stored (or was already, identical).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Records the database refused (not valid JSON, say).
    pub rejected: u64,
    /// Records whose `request_id` is stored with other content: not stored.
    pub conflicts: u64,
}

impl Written {
    /// Records of the batch that are not stored.
    pub fn lost(&self) -> u64 {
        self.rejected + self.conflicts
    }
}

/// Which records a store reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only incidents: with `unverified` and/or `unsupported` (neither: both
    /// kinds).
    pub incidents: bool,
    /// Markers that did not all resolve ([`AuditRecord::is_unverified`]).
    pub unverified: bool,
    /// A contradicted or unsupported sentence, or an ungrounded answer
    /// with uncited factual sentences ([`AuditRecord::is_unsupported`]).
    pub unsupported: bool,
    /// Only `ask` or `check` records.
    pub kind: Option<String>,
    /// Only records with an id above this (keyset paging, oldest first).
    pub after_id: Option<i64>,
    /// Only records with an id below this (keyset paging, newest first).
    pub before_id: Option<i64>,
    /// Newest first (else oldest first).
    pub newest_first: bool,
    /// At most this many records; all when `None`.
    pub limit: Option<usize>,
}

impl AuditQuery {
    /// What follows `FROM audit` in a store's `SELECT`: the filter, the
    /// order and the limit, in the store's SQL. `unverified` is its
    /// predicate for [`AuditRecord::is_unverified`] (the id list's empty
    /// value differs by dialect); `kind_param` its placeholder for
    /// [`AuditQuery::kind`], bound as the only parameter.
    pub fn sql(&self, unverified: &str, kind_param: &str) -> String {
        const UNSUPPORTED: &str =
            "(contradicted + unsupported > 0 OR (uncited > 0 AND NOT grounded))";
        let mut clauses = Vec::new();
        if self.incidents {
            clauses.push(match (self.unverified, self.unsupported) {
                (true, false) => unverified.to_string(),
                (false, true) => UNSUPPORTED.to_string(),
                _ => format!("({unverified} OR {UNSUPPORTED})"),
            });
        }
        if self.kind.is_some() {
            clauses.push(format!("kind = {kind_param}"));
        }
        if let Some(after) = self.after_id {
            clauses.push(format!("id > {after}"));
        }
        if let Some(before) = self.before_id {
            clauses.push(format!("id < {before}"));
        }
        let mut sql = String::new();
        if !clauses.is_empty() {
            sql = format!(" WHERE {}", clauses.join(" AND "));
        }
        let order = if self.newest_first { "DESC" } else { "ASC" };
        sql.push_str(&format!(" ORDER BY id {order}"));
        if let Some(n) = self.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        sql
    }
}

/// Which incidents to list. Neither flag: every incident (either kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncidentFilter {
    /// Answers whose markers did not all resolve (status `unverified`, a
    /// regenerated attempt that cited ids never sent, or a refusal for that
    /// reason).
    pub unverified: bool,
    /// Answers with a contradicted or unsupported sentence.
    pub unsupported: bool,
    /// Only `ask` or `check` records.
    pub kind: Option<String>,
    /// At most this many, newest first; all when `None`.
    pub limit: Option<usize>,
}

impl IncidentFilter {
    /// The store query: these incidents, newest first.
    pub fn query(&self) -> AuditQuery {
        AuditQuery {
            incidents: true,
            unverified: self.unverified,
            unsupported: self.unsupported,
            kind: self.kind.clone(),
            after_id: None,
            before_id: None,
            newest_first: true,
            limit: self.limit,
        }
    }
}

/// How much the audit log keeps (`[audit]` in groundcite.toml): a cap on
/// each record, and a retention that the service applies as it writes and
/// `groundcite audit prune` applies on demand.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditPolicy {
    /// Records served more than this many days ago are removed. Default:
    /// none (kept).
    pub max_age_days: Option<u32>,
    /// The oldest records are removed while the log's variable text
    /// ([`AuditRecord::stored_bytes`]) is over this many bytes. Default:
    /// none. (A SQLite file keeps the freed pages for new records; it
    /// does not shrink.)
    pub max_bytes: Option<u64>,
    /// A record whose report and attempts are over this many bytes is
    /// stored as a summary ([`AuditRecord::capped`]). Default 64 KiB.
    pub max_record_bytes: usize,
}

impl Default for AuditPolicy {
    fn default() -> Self {
        AuditPolicy {
            max_age_days: None,
            max_bytes: None,
            max_record_bytes: 64 * 1024,
        }
    }
}

impl AuditPolicy {
    /// The retention at `now`; `None` when nothing is ever removed.
    pub fn retention(&self, now: std::time::SystemTime) -> Option<Retention> {
        if self.max_age_days.is_none() && self.max_bytes.is_none() {
            return None;
        }
        let before = self.max_age_days.map(|days| {
            let age = std::time::Duration::from_secs(u64::from(days) * 86_400);
            rfc3339(now.checked_sub(age).unwrap_or(std::time::UNIX_EPOCH))
        });
        Some(Retention {
            before,
            max_bytes: self.max_bytes,
        })
    }
}

/// What [`AuditStore::prune`] removes: first every record served before a
/// time, then the oldest records until the rest fit in a size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retention {
    /// Remove the records whose `ts` is before this time (RFC 3339, UTC,
    /// as records write it: see [`rfc3339`]).
    pub before: Option<String>,
    /// Then remove the oldest records until the variable text of the
    /// others (question, attempts, timings and report:
    /// [`AuditRecord::stored_bytes`]) is at most this many bytes.
    pub max_bytes: Option<u64>,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Records older than [`Retention::before`].
    pub by_age: u64,
    /// Oldest records removed to fit [`Retention::max_bytes`].
    pub by_size: u64,
}

/// `t` as an audit record's `ts`: RFC 3339, UTC, milliseconds
/// (`2026-11-30T14:50:07.123Z`). Such strings order as the times do.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (y, m, d).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Where audit records are kept. Implementations: [`SqliteAuditStore`]
/// and `groundcite_pg::PgAuditStore`; both pass [`contract`].
///
/// A store is used from one thread at a time (the service's writer
/// thread, or a reader).
pub trait AuditStore: Send {
    /// Where the records are, for logs and messages: a file path, or a URL
    /// without its password.
    fn location(&self) -> String;

    /// Stores a batch in one transaction (the records' `id`s are ignored;
    /// the store assigns them in batch order). Returns how many records
    /// the database refused and how many conflicted: every other one is
    /// stored. `request_id` is unique: a record already stored with the
    /// same content is skipped (a batch sent again never duplicates a
    /// record), one stored with other content is a conflict, never
    /// overwritten and never silent. An error means nothing was stored;
    /// the caller should open the store again.
    fn write(&mut self, batch: &[AuditRecord]) -> Result<Written>;

    /// The records matching `query`, in its order.
    fn list(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>>;

    /// How many records are stored.
    fn count(&self) -> Result<u64>;

    /// Removes what `retention` says, in one transaction, oldest first.
    fn prune(&mut self, retention: &Retention) -> Result<Pruned>;
}

/// Records read per round trip by [`each`].
pub const PAGE: usize = 1000;

/// The incident log: unverified and/or unsupported answers, newest first,
/// all in memory: for a bounded `filter.limit`; [`each_incident`] streams.
pub fn incidents(store: &dyn AuditStore, filter: &IncidentFilter) -> Result<Vec<AuditRecord>> {
    let mut out = Vec::new();
    each_incident(store, filter, |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` on each incident matching `filter`, newest first (at most
/// `filter.limit`), reading at most [`PAGE`] records at a time: memory
/// does not grow with the log. Returns how many.
pub fn each_incident(
    store: &dyn AuditStore,
    filter: &IncidentFilter,
    mut f: impl FnMut(AuditRecord) -> Result<()>,
) -> Result<usize> {
    let mut query = filter.query();
    let mut n = 0;
    loop {
        let want = filter.limit.map_or(PAGE, |l| l.saturating_sub(n).min(PAGE));
        if want == 0 {
            return Ok(n);
        }
        query.limit = Some(want);
        let page = store.list(&query)?;
        let len = page.len();
        for record in page {
            query.before_id = Some(record.id);
            f(record)?;
            n += 1;
        }
        if len < want {
            return Ok(n);
        }
    }
}

/// Writes the incidents matching `filter` as one pretty JSON array,
/// newest first, a page at a time (see [`each_incident`]); returns how
/// many.
pub fn write_incidents_json(
    store: &dyn AuditStore,
    filter: &IncidentFilter,
    writer: impl Write,
) -> Result<usize> {
    let mut out = std::io::BufWriter::new(writer);
    out.write_all(b"[")?;
    let mut first = true;
    let n = each_incident(store, filter, |record| {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer_pretty(&mut out, &record).map_err(|error| AuditError::Json {
            id: record.id,
            error,
        })?;
        Ok(())
    })?;
    out.write_all(if n == 0 { b"]\n" } else { b"\n]\n" })?;
    out.flush()?;
    Ok(n)
}

/// Calls `f` on every record, oldest first, reading [`PAGE`] records at a
/// time; returns how many.
pub fn each(store: &dyn AuditStore, mut f: impl FnMut(AuditRecord) -> Result<()>) -> Result<usize> {
    let mut after = None;
    let mut n = 0;
    loop {
        let page = store.list(&AuditQuery {
            after_id: after,
            limit: Some(PAGE),
            ..AuditQuery::default()
        })?;
        let len = page.len();
        for record in page {
            after = Some(record.id);
            f(record)?;
            n += 1;
        }
        if len < PAGE {
            return Ok(n);
        }
    }
}

/// Every record, oldest first.
pub fn list_all(store: &dyn AuditStore) -> Result<Vec<AuditRecord>> {
    let mut out = Vec::new();
    each(store, |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// Writes every record as JSON lines, oldest first; returns how many.
pub fn export_jsonl(store: &dyn AuditStore, writer: impl Write) -> Result<usize> {
    let mut out = std::io::BufWriter::new(writer);
    let n = each(store, |record| write_line(&mut out, &record))?;
    out.flush()?;
    Ok(n)
}

/// Writes the incidents matching `filter` as JSON lines, newest first;
/// returns how many.
pub fn export_incidents_jsonl(
    store: &dyn AuditStore,
    filter: &IncidentFilter,
    writer: impl Write,
) -> Result<usize> {
    let mut out = std::io::BufWriter::new(writer);
    let n = each_incident(store, filter, |record| write_line(&mut out, &record))?;
    out.flush()?;
    Ok(n)
}

fn write_line(out: &mut impl Write, record: &AuditRecord) -> Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(|error| AuditError::Json {
        id: record.id,
        error,
    })?;
    out.write_all(b"\n")?;
    Ok(())
}
