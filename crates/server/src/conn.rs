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
//!
//! [`ServerConfig::max_connections`]: crate::ServerConfig::max_connections
//! [`ServerConfig::header_timeout`]: crate::ServerConfig::header_timeout

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
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
            let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
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

/// Errors of one connection that does not concern the others.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
