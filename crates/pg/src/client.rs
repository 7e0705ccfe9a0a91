//! A connection pool on its own small runtime, usable from synchronous
//! callers and from inside another tokio runtime alike. Shared by the index
//! and the audit store.

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Pool, PoolError, TimeoutType};

use crate::config::Target;
use crate::{Error, PgOptions, db_message};

pub(crate) struct Client {
    /// `None` only while dropping.
    rt: Option<tokio::runtime::Runtime>,
    pub(crate) pool: Pool,
    pub(crate) target: Target,
    pub(crate) opts: PgOptions,
}

impl Client {
    /// Parses the url and builds the pool (connections open on demand).
    pub(crate) fn new(url: &str, opts: PgOptions, thread_name: &str) -> Result<Client, Error> {
        let target = Target::parse(url, &opts)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(thread_name)
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("cannot start a runtime: {e}")))?;
        let pool = target.pool(&opts)?;
        Ok(Client {
            rt: Some(rt),
            pool,
            target,
            opts,
        })
    }

    /// Runs `fut` to completion on the pool's runtime.
    pub(crate) fn block<T: Send>(&self, fut: impl Future<Output = T> + Send) -> T {
        let rt = self.rt.as_ref().expect("runtime present until drop");
        if tokio::runtime::Handle::try_current().is_ok() {
            // Called from async code: block a scoped thread, not the caller's runtime.
            std::thread::scope(|s| {
                s.spawn(|| rt.block_on(fut))
                    .join()
                    .expect("postgres worker thread panicked")
            })
        } else {
            rt.block_on(fut)
        }
    }

    /// Runs `f`, retrying the failures `transient` accepts, with back-off
    /// (50 ms, then 200 ms, … up to `read_attempts` tries).
    pub(crate) fn retry<T, F, Fut>(&self, transient: fn(&Error) -> bool, f: F) -> Result<T, Error>
    where
        T: Send,
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = Result<T, Error>> + Send,
    {
        let attempts = self.opts.read_attempts.max(1);
        self.block(async {
            let mut attempt = 1;
            loop {
                match f().await {
                    Err(e) if attempt < attempts && transient(&e) => {
                        let pause = Duration::from_millis(50 * 4u64.pow(attempt - 1));
                        tokio::time::sleep(pause).await;
                        attempt += 1;
                    }
                    other => return other,
                }
            }
        })
    }

    /// A pooled connection, with errors that name the database (never its
    /// password).
    pub(crate) async fn conn(&self) -> Result<deadpool_postgres::Object, Error> {
        self.pool.get().await.map_err(|e| {
            let target = self.target.redacted.clone();
            match e {
                PoolError::Timeout(TimeoutType::Wait) => Error::PoolTimeout(target),
                PoolError::Timeout(_) => Error::Connect {
                    target,
                    message: "timed out".into(),
                },
                PoolError::Backend(e) => Error::Connect {
                    target,
                    message: db_message(&e),
                },
                other => Error::Connect {
                    target,
                    message: other.to_string(),
                },
            }
        })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            // Dropping a runtime inside another one panics; let it go in the
            // background instead.
            rt.shutdown_background();
        }
    }
}
