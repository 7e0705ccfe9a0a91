//! `serve_on` over a real loopback socket: answers, then shuts down
//! gracefully when asked and drains the audit queue.

mod common;

use std::sync::Arc;

use common::*;
use groundcite_server::fake::StaticAnswerer;
use groundcite_server::{AppState, AuditConfig, ServerConfig, serve_on};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn http(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn serves_on_loopback_and_shuts_down_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.sqlite");
    let state = AppState::new(
        ServerConfig {
            audit: AuditConfig::at(&path),
            ..config()
        },
        Some(Arc::new(StaticAnswerer::demo())),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_on(state, listener, async {
        let _ = stopped.await;
    }));

    let health = http(
        addr,
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let body = r#"{"question":"How long does reimbursement take?"}"#;
    let ask = http(
        addr,
        &format!("POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()),
    )
    .await;
    assert!(ask.starts_with("HTTP/1.1 200"), "{ask}");
    assert!(ask.to_ascii_lowercase().contains("x-request-id: "));

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    // The audit queue was drained on the way out.
    assert_eq!(audit_records(&path).len(), 1);
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the socket is closed"
    );
}

/// An early 413 is readable: a client that sends its whole
/// too-large body before reading (Python's http.client, browsers) reads the
/// 413, with `Connection: close`, instead of a reset connection.
#[tokio::test]
async fn a_body_over_the_limit_gets_a_readable_413() {
    let config = ServerConfig {
        body_limit: 64 * 1024,
        ..config()
    };
    let state = AppState::new(config, Some(Arc::new(StaticAnswerer::demo())));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_on(state, listener, async {
        let _ = stopped.await;
    }));
    // Far over (drained) and just over the limit.
    for body_len in [3 * 1024 * 1024, 100 * 1024] {
        let body = format!("{{\"question\": \"{}\"}}", "x".repeat(body_len));
        let head = format!(
            "POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream
            .write_all(body.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{body_len}: the body could not be sent: {e}"));
        let mut out = Vec::new();
        stream
            .read_to_end(&mut out)
            .await
            .unwrap_or_else(|e| panic!("{body_len}: no readable response: {e}"));
        let out = String::from_utf8_lossy(&out).to_ascii_lowercase();
        assert!(out.starts_with("http/1.1 413"), "{out}");
        assert!(out.contains("connection: close"), "{out}");
        assert!(out.contains("payload_too_large"), "{out}");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// A client that declares a body over the limit and waits for
/// `100 Continue` is refused with 413 at once, never invited to send it.
#[tokio::test]
async fn a_declared_body_over_the_limit_is_413_without_100_continue() {
    let config = ServerConfig {
        body_limit: 64 * 1024,
        ..config()
    };
    let state = AppState::new(config, Some(Arc::new(StaticAnswerer::demo())));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_on(state, listener, async {
        let _ = stopped.await;
    }));
    let head = "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                Content-Length: 10000000\r\nExpect: 100-continue\r\n\r\n";
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    // The first response is the final one; the body is never sent.
    let mut out = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut out),
    )
    .await
    .expect("the server answers without waiting for the body")
    .unwrap();
    let out = String::from_utf8_lossy(&out).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 413"), "{out}");
    assert!(!out.contains("100 continue"), "{out}");
    assert!(out.contains("payload_too_large"), "{out}");
    // Within the limit, the client is invited to send its body.
    let body = r#"{"question":"How long does reimbursement take?"}"#;
    let head = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut first = [0u8; 64];
    let n = stream.read(&mut first).await.unwrap();
    let first = String::from_utf8_lossy(&first[..n]).to_ascii_lowercase();
    assert!(first.starts_with("http/1.1 100 continue"), "{first}");
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut rest = String::new();
    stream.read_to_string(&mut rest).await.unwrap();
    assert!(
        rest.contains("http/1.1 200") || rest.contains("HTTP/1.1 200"),
        "{rest}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
