//! The connection loop over real loopback sockets, and where the work of a
//! check runs: slow or idle clients are closed after the header timeout,
//! at most `max_connections` are served at once, `/healthz` keeps
//! answering, and a check runs on the blocking pool and stops when nobody
//! waits for it. Every wait here is bounded.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use groundcite_server::{AppState, ServerConfig, serve_on};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server on an ephemeral loopback port, stopped when the sender drops.
async fn start(config: ServerConfig) -> (AppState, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let state = state_with(config, None);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve_on(state.clone(), listener, async {
        let _ = stopped.await;
    }));
    (state, addr, stop)
}

/// `GET /healthz` on a new connection, its reply within `within`.
async fn healthz(addr: SocketAddr, within: Duration) -> String {
    tokio::time::timeout(within, async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    })
    .await
    .expect("/healthz answered in time")
}

/// Whether the server closes `s` within `within` (reads until the end).
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// Polls the metrics until `ok` holds (at most 10 s).
async fn wait_for_metrics(state: &AppState, ok: impl Fn(&str) -> bool) -> String {
    for _ in 0..200 {
        let text = state.metrics().render();
        if ok(&text) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    state.metrics().render()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_header_clients_are_closed_and_healthz_keeps_answering() {
    let (state, addr, _stop) = start(ServerConfig {
        header_timeout: Duration::from_secs(1),
        max_connections: 64,
        ..config()
    })
    .await;
    // 50 clients sending their request head a byte every 200 ms.
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(s);
    }
    let (mut readers, writers): (Vec<_>, Vec<_>) =
        slow.into_iter().map(TcpStream::into_split).unzip();
    let drip = tokio::spawn(async move {
        let mut writers = writers;
        for _ in 0..25 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            for w in &mut writers {
                let _ = w.write_all(b"a").await;
            }
        }
    });
    // While they are open, /healthz answers at once.
    let reply = healthz(addr, Duration::from_secs(1)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    // Each slow client is closed after the header timeout, still dripping.
    for r in &mut readers {
        let mut buf = [0u8; 1024];
        let closed = tokio::time::timeout(Duration::from_secs(4), async {
            loop {
                match r.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await
        .is_ok();
        assert!(closed, "a slow client was left open");
    }
    drip.abort();
    let text = wait_for_metrics(&state, |t| {
        metric(t, "groundcite_connections_timed_out_total") == Some(50.0)
    })
    .await;
    assert_eq!(
        metric(&text, "groundcite_connections_timed_out_total"),
        Some(50.0),
        "{text}"
    );
    let reply = healthz(addr, Duration::from_secs(1)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let (_state, addr, _stop) = start(ServerConfig {
        header_timeout: Duration::from_secs(1),
        ..config()
    })
    .await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    // Kept alive, then idle: closed once the header timeout runs out.
    assert!(closed_within(&mut s, Duration::from_secs(4)).await);
    // A connection that never sends a byte is closed too.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(4)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_connection_cap_new_connections_wait_for_a_free_slot() {
    let (state, addr, _stop) = start(ServerConfig {
        header_timeout: Duration::from_secs(30),
        max_connections: 4,
        ..config()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    let text = wait_for_metrics(&state, |t| {
        metric(t, "groundcite_connections_open") == Some(4.0)
            && metric(t, "groundcite_connection_cap_reached_total") >= Some(1.0)
    })
    .await;
    assert_eq!(
        metric(&text, "groundcite_connections_open"),
        Some(4.0),
        "{text}"
    );
    assert!(
        metric(&text, "groundcite_connection_cap_reached_total") >= Some(1.0),
        "{text}"
    );
    // A fifth waits in the listen queue...
    let mut fifth = TcpStream::connect(addr).await.unwrap();
    fifth
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    let early =
        tokio::time::timeout(Duration::from_millis(300), fifth.read_to_string(&mut out)).await;
    assert!(early.is_err(), "served over the cap: {out}");
    assert_eq!(
        metric(&state.metrics().render(), "groundcite_connections_open"),
        Some(4.0)
    );
    // ...and is served once a slot frees.
    drop(held.pop());
    tokio::time::timeout(Duration::from_secs(5), fifth.read_to_string(&mut out))
        .await
        .expect("served once a slot freed")
        .unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
}

#[tokio::test]
async fn checks_and_prompts_run_on_the_blocking_pool() {
    let state = state_with(config(), None);
    let small = contradicted_check();
    assert!(small.to_string().len() < 1024);
    let reply = send(&state, post_json("/v1/check", &small)).await;
    assert_eq!(reply.status, 200);
    let prompt = serde_json::json!({"question": "How long?", "passages": small["passages"]});
    let reply = send(&state, post_json("/v1/prompt", &prompt)).await;
    assert_eq!(reply.status, 200);
    let text = state.metrics().render();
    assert_eq!(
        metric(&text, "groundcite_blocking_work_total{route=\"/v1/check\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            "groundcite_blocking_work_total{route=\"/v1/prompt\"}"
        ),
        Some(1.0),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_past_its_deadline_answers_504_and_stops() {
    let state = state_with(
        ServerConfig {
            timeout: Duration::from_millis(1),
            ..config()
        },
        None,
    );
    // Inside the limits (500 sentences × 245 KB), and far more than a millisecond of work.
    let passage = "Refunds take 30 days from the date of purchase. ".repeat(5_000);
    let answer: String = (0..500)
        .map(|k| format!("Refunds take {k} days [1]. "))
        .collect();
    let body = serde_json::json!({
        "passages": [{"id": "p1", "text": passage}],
        "answer": answer,
    });
    let reply = send(&state, post_json("/v1/check", &body)).await;
    assert_eq!(reply.status, 504, "{}", reply.text());
    assert_eq!(reply.error_code(), "timeout");
    // The work stopped, within one sentence of the deadline.
    let text = wait_for_metrics(&state, |t| {
        metric(t, "groundcite_checks_stopped_total") == Some(1.0)
    })
    .await;
    assert_eq!(
        metric(&text, "groundcite_checks_stopped_total"),
        Some(1.0),
        "{text}"
    );
}

#[test]
fn the_connection_settings_come_from_the_environment() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let defaults = ServerConfig::default();
    assert_eq!(
        (defaults.max_connections, defaults.header_timeout),
        (512, Duration::from_secs(10))
    );
    let c = ServerConfig::default()
        .with_env(env(&[
            ("GROUNDCITE_MAX_CONNECTIONS", "64"),
            ("GROUNDCITE_HEADER_TIMEOUT_SECS", "2.5"),
        ]))
        .unwrap();
    assert_eq!(
        (c.max_connections, c.header_timeout),
        (64, Duration::from_millis(2500))
    );
    for bad in [
        &[("GROUNDCITE_MAX_CONNECTIONS", "0")][..],
        &[("GROUNDCITE_MAX_CONNECTIONS", "many")][..],
        &[("GROUNDCITE_HEADER_TIMEOUT_SECS", "0")][..],
        &[("GROUNDCITE_HEADER_TIMEOUT_SECS", "-1")][..],
    ] {
        let err = ServerConfig::default().with_env(env(bad)).unwrap_err();
        assert!(err.to_string().contains(bad[0].0), "{err}");
    }
}

#[tokio::test]
async fn a_check_that_would_align_too_much_is_refused_before_any_work() {
    let state = state_with(config(), None);
    // 4,000 sentences over a 250 KB passage: a billion bytes to align.
    let passage = "Refunds take 30 days from the date of purchase. ".repeat(5_000);
    let answer: String = (0..4_000)
        .map(|k| format!("Refunds take {k} days [1]. "))
        .collect();
    let body = serde_json::json!({
        "passages": [{"id": "p1", "text": passage}],
        "answer": answer,
    });
    let reply = send(&state, post_json("/v1/check", &body)).await;
    assert_eq!(reply.status, 422, "{}", reply.text());
    assert_eq!(reply.error_code(), "limit_exceeded");
    assert!(
        reply.text().contains("sentences × passage bytes"),
        "{}",
        reply.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_whose_client_leaves_stops() {
    let (state, addr, _stop) = start(config()).await;
    // Inside the limits, and seconds of work in a debug build.
    let passage = "Refunds take 30 days from the date of purchase. ".repeat(5_000);
    let answer: String = (0..500)
        .map(|k| format!("Refunds take {k} days [1]. "))
        .collect();
    let body = serde_json::json!({
        "passages": [{"id": "p1", "text": passage}],
        "answer": answer,
    })
    .to_string();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!(
            "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // Once the check is running, the client leaves.
    let running = wait_for_metrics(&state, |t| {
        metric(t, "groundcite_blocking_work_total{route=\"/v1/check\"}") == Some(1.0)
    })
    .await;
    assert_eq!(
        metric(
            &running,
            "groundcite_blocking_work_total{route=\"/v1/check\"}"
        ),
        Some(1.0),
        "{running}"
    );
    drop(s);
    let text = wait_for_metrics(&state, |t| {
        metric(t, "groundcite_checks_stopped_total") == Some(1.0)
    })
    .await;
    assert_eq!(
        metric(&text, "groundcite_checks_stopped_total"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(&text, "groundcite_checks_total{status=\"ok\"}"),
        Some(0.0)
    );
}
