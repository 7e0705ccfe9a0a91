//! A fake model server on loopback: answers each request with the next
//! scripted reply (the last one repeats) and records what it received.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A pseudo-chunk of [`Reply::Sse`]: the server stalls for 3 s there.
pub const STALL: &str = "\0stall";

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with a body.
    Body {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A 200 event stream in chunked encoding; one HTTP chunk per item,
    /// `delay` before each. `cut`: close the socket without the final
    /// chunk, like a dropped connection.
    Sse {
        chunks: Vec<String>,
        delay: Duration,
        cut: bool,
    },
    /// Waits, then answers.
    After(Duration, Box<Reply>),
    /// Accepts, reads the request, then drops the socket without a byte.
    Drop,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply::Body {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Body {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Body {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    pub fn sse(chunks: Vec<String>) -> Reply {
        Reply::Sse {
            chunks,
            delay: Duration::ZERO,
            cut: false,
        }
    }

    pub fn sse_cut(chunks: Vec<String>) -> Reply {
        Reply::Sse {
            chunks,
            delay: Duration::ZERO,
            cut: true,
        }
    }
}

/// One received request.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

pub struct FakeServer {
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeServer {
    pub async fn start(replies: Vec<Reply>) -> FakeServer {
        assert!(!replies.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            let mut count = 0usize;
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let reply = replies[count.min(replies.len() - 1)].clone();
                count += 1;
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let _ = serve(socket, reply, log).await;
                });
            }
        });
        FakeServer {
            base_url: format!("http://{address}"),
            received,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

async fn serve(
    mut socket: TcpStream,
    reply: Reply,
    log: Arc<Mutex<Vec<Received>>>,
) -> std::io::Result<()> {
    let request = read_request(&mut socket).await?;
    log.lock().unwrap().push(request);
    let mut reply = reply;
    while let Reply::After(wait, inner) = reply {
        tokio::time::sleep(wait).await;
        reply = *inner;
    }
    match reply {
        Reply::Drop => {
            drop(socket);
        }
        Reply::Body {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.flush().await?;
        }
        Reply::Sse { chunks, delay, cut } => {
            socket
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                )
                .await?;
            socket.flush().await?;
            for chunk in chunks {
                if chunk == STALL {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    continue;
                }
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                socket
                    .write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())
                    .await?;
                socket.flush().await?;
            }
            if !cut {
                socket.write_all(b"0\r\n\r\n").await?;
                socket.flush().await?;
            }
        }
        Reply::After(..) => unreachable!(),
    }
    Ok(())
}

async fn read_request(socket: &mut TcpStream) -> std::io::Result<Received> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    })
}

/// `data: {json}\n\n` for OpenAI chunks.
pub fn openai_chunk(content: Option<&str>, finish_reason: Option<&str>) -> String {
    let delta = match content {
        Some(text) => serde_json::json!({"content": text}),
        None => serde_json::json!({}),
    };
    let chunk = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    });
    format!("data: {chunk}\n\n")
}

pub fn openai_completion(content: Option<&str>) -> String {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
    .to_string()
}

/// `event: {type}\ndata: {json}\n\n` for Anthropic events.
pub fn anthropic_event(data: serde_json::Value) -> String {
    let kind = data["type"].as_str().unwrap().to_string();
    format!("event: {kind}\ndata: {data}\n\n")
}

pub fn anthropic_message(content: serde_json::Value) -> String {
    serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "fake-claude",
        "content": content, "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })
    .to_string()
}

/// The stream of a plain answer given as text pieces; `complete`: with the
/// closing events.
pub fn anthropic_text_stream(pieces: &[&str], complete: bool) -> Vec<String> {
    use serde_json::json;
    let mut events = vec![
        anthropic_event(json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "fake-claude",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})),
        anthropic_event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic_event(json!({"type": "ping"})),
    ];
    for piece in pieces {
        events.push(anthropic_event(
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    if complete {
        events.push(anthropic_event(
            json!({"type": "content_block_stop", "index": 0}),
        ));
        events.push(anthropic_event(json!({"type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}})));
        events.push(anthropic_event(json!({"type": "message_stop"})));
    }
    events
}
