//! The connection loop: how many connections are served at once, and how
//! long a connection may take to send a request's head.
//!
//! - At most [`ServerConfig::max_connections`] connections are served at
//!   once. At the cap the loop stops accepting: new connections wait in the
//!   kernel's listen queue (holding no file of this process) until one closes
//!   (`groundcite_connection_cap_reached_total` counts each time).
//! - A request's head (request line and headers) must arrive within
//!   [`ServerConfig::header_timeout`] of its first byte being awaited, which
//!   is also when a kept-alive connection goes idle: a client that sends a
//!   header a byte at a time, or keeps a connection open without asking
//!   anything, is closed (`groundcite_connections_timed_out_total`). The body
//!   and the answer are bounded by the request timeout.
//! - A response the client stops reading (a write that makes no progress)
//!   closes the connection after the request timeout ([`StallTimeout`]), so
//!   a client that asks for large reports and never reads them cannot keep
//!   its connections, and their slots, forever.
//!
//! [`ServerConfig::max_connections`]: crate::ServerConfig::max_connections
//! [`ServerConfig::header_timeout`]: crate::ServerConfig::header_timeout

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;

use crate::AppState;

/// Serves `router` on `listener` until `shutdown` resolves, then stops
/// accepting and waits for the open connections to finish their requests.
pub(crate) async fn serve(
    state: &AppState,
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let config = state.config();
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let header_timeout = config.header_timeout;
    let write_stall = config.timeout;
    let open = state.metrics().connections_open();
    open.set(0.0);
    // Dropped when shutdown is asked: every connection then finishes its
    // request and closes.
    let (signal_tx, signal_rx) = watch::channel(());
    tokio::spawn(async move {
        shutdown.await;
        drop(signal_rx);
    });
    // Each connection holds a receiver; all dropped: all closed.
    let (close_tx, close_rx) = watch::channel(());
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                state.metrics().connection_cap_reached();
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break,
                    },
                    () = signal_tx.closed() => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // Out of files, most likely: let some close.
                        tracing::warn!(error = %e, "cannot accept a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                }
            },
            () = signal_tx.closed() => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(
            router
                .clone()
                .map_request(|req: Request<Incoming>| req.map(axum::body::Body::new)),
        );
        let signal_tx = signal_tx.clone();
        let close_rx = close_rx.clone();
        let metrics = state.metrics().clone();
        let open = open.clone();
        open.increment(1.0);
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let io = TokioIo::new(StallTimeout::new(stream, write_stall));
            let mut conn = pin!(builder.serve_connection(io, service));
            let mut signalled = pin!(signal_tx.closed());
            let mut shutting_down = false;
            loop {
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(e) = result {
                            if e.is_timeout() {
                                metrics.connection_timed_out();
                            }
                            tracing::debug!(error = %e, "connection ended");
                        }
                        break;
                    }
                    () = &mut signalled, if !shutting_down => {
                        shutting_down = true;
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
            open.decrement(1.0);
            drop(slot);
            drop(close_rx);
        });
    }
    drop(close_rx);
    drop(listener);
    close_tx.closed().await;
}

/// A stream whose writes fail with `TimedOut` once one has made no progress
/// for `limit`: the peer stopped reading. Reads pass through.
pub(crate) struct StallTimeout<S> {
    inner: S,
    limit: Duration,
    /// Set when a write is first pending; cleared by any progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> StallTimeout<S> {
    pub(crate) fn new(inner: S, limit: Duration) -> Self {
        StallTimeout {
            inner,
            limit,
            stalled: None,
        }
    }

    /// After a pending write: `TimedOut` once the stall has lasted `limit`.
    fn check_stall(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let limit = self.limit;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the response in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallTimeout<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.check_stall(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.check_stall(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.check_stall(cx).map_ok(|_| ()),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Errors of one connection that does not concern the others.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_write_the_peer_never_reads_fails_after_the_limit() {
        let (near, _far) = tokio::io::duplex(64);
        let mut io = StallTimeout::new(near, Duration::from_millis(300));
        // The buffer fills, then the write waits for a reader that never comes.
        io.write_all(&[0u8; 64]).await.unwrap();
        let started = std::time::Instant::now();
        let err = tokio::time::timeout(Duration::from_secs(10), io.write_all(&[0u8; 64]))
            .await
            .expect("the stalled write ends")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[tokio::test]
    async fn a_peer_that_keeps_reading_never_trips_it() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut io = StallTimeout::new(near, Duration::from_secs(5));
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let mut total = 0;
            while total < 64 * 10 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                total += far.read(&mut buf).await.unwrap();
            }
        });
        io.write_all(&[0u8; 64 * 10]).await.unwrap();
        reader.await.unwrap();
    }
}
