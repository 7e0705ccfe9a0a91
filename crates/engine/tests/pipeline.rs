//! The pipeline policy with misbehaving generators: ids never sent,
//! regenerate once, refuse / strip; the sentinel; generator failures;
//! streaming that never shows an unchecked citation; an OpenAI-compatible
//! server on loopback that keeps citing [7].

use std::sync::Arc;

use futures::StreamExt;
use groundcite_core::Status;
use groundcite_core::finalize::BadIdPolicy;
use groundcite_engine::{
    AskEvent, AskOptions, Engine, EngineError, RefusalReason, Retriever, Settings,
};
use groundcite_index::{Chunk, Hit};
use groundcite_llm::{Generator, LlmError, OpenAiConfig, OpenAiGenerator, ScriptedGenerator};

/// Three fixed passages, whatever the query.
struct Fixed;

impl Retriever for Fixed {
    fn search(&self, _query: &str, _k: usize) -> Result<Vec<Hit>, EngineError> {
        let hit = |id: &str, section: &str, url: &str, text: &str, score: f32| Hit {
            chunk: Chunk {
                id: id.into(),
                path: id.into(),
                title: section.into(),
                section: section.into(),
                source_url: url.into(),
                text: text.into(),
                start: 0,
                end: text.len(),
                metadata: serde_json::Value::Null,
            },
            score,
            raw_score: score * 10.0,
        };
        Ok(vec![
            hit(
                "hr-1",
                "Filing",
                "https://hr.example/policy#filing",
                "Expense claims must be filed within 60 days of the expense.",
                0.9,
            ),
            hit(
                "hr-2",
                "Reimbursement",
                "https://hr.example/policy#reimbursement",
                "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
                0.8,
            ),
            hit(
                "hr-3",
                "Help",
                "https://hr.example/faq",
                "Questions about reimbursement go to the finance help desk.",
                0.7,
            ),
        ])
    }
}

fn engine_with(settings: Settings, generator: Arc<dyn Generator>) -> Engine {
    Engine::new(settings, Arc::new(Fixed), generator)
}

fn scripted(outputs: &[&str]) -> Arc<ScriptedGenerator> {
    Arc::new(ScriptedGenerator::new(
        outputs.iter().map(|s| s.to_string()).collect(),
    ))
}

const Q: &str = "How long does reimbursement take?";

#[tokio::test]
async fn a_good_answer_is_served_with_sources() {
    let g = scripted(&["Reimbursements settle within 30 days of approval [2]."]);
    let r = engine_with(Settings::default(), g.clone())
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(r.status, Status::Ok);
    assert!(r.grounded);
    assert_eq!(r.sources.len(), 1);
    assert_eq!(
        r.sources[0].quote,
        "Reimbursements settle within 30 days of approval."
    );
    assert_eq!(r.passages.len(), 3);
    assert_eq!(g.calls(), 1);
    assert!(!r.regenerated);
}

#[tokio::test]
async fn a_model_that_keeps_citing_7_is_regenerated_once_then_refused() {
    let g = scripted(&["Refunds take 14 days [7].", "Refunds take 14 days [7]."]);
    let r = engine_with(Settings::default(), g.clone())
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(g.calls(), 2, "exactly one regeneration");
    // The corrective message names the id that does not exist.
    let second = &g.requests()[1];
    let last = second.messages.last().unwrap();
    assert!(
        last.content.contains("[7]") && last.content.contains("[1] to [3]"),
        "{}",
        last.content
    );
    assert_eq!(
        r.refusal.as_ref().unwrap().reason,
        RefusalReason::Validation
    );
    assert_eq!(r.status, Status::NoEvidence);
    assert!(
        !r.answer.contains("[7]"),
        "never serve an unverified marker: {}",
        r.answer
    );
    assert_eq!(r.attempts.len(), 2);
    assert_eq!(r.attempts[0].bad_ids, [7]);
}

#[tokio::test]
async fn a_corrected_second_answer_is_served() {
    let g = scripted(&[
        "Refunds take 14 days [7].",
        "Reimbursements settle within 30 days of approval [2].",
    ]);
    let r = engine_with(Settings::default(), g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert!(r.regenerated);
    assert_eq!(r.status, Status::Ok);
    assert!(r.refusal.is_none());
}

#[tokio::test]
async fn strip_policy_serves_only_resolvable_markers() {
    let mut settings = Settings::default();
    settings.check.bad_id_policy = BadIdPolicy::Strip;
    let g = scripted(&[
        "Reimbursements settle within 30 days of approval [2][7].",
        "Reimbursements settle within 30 days of approval [2][7].",
    ]);
    let r = engine_with(settings, g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]."
    );
    assert_eq!(r.status, Status::Ok);
    assert!(r.bad_ids.is_empty());
}

#[tokio::test]
async fn a_contradicted_sentence_is_flagged_never_verified() {
    let g = scripted(&["Reimbursements settle in 14 days [2]."]);
    let r = engine_with(Settings::default(), g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(r.sentences[0].verdict.as_str(), "contradicted");
    assert!(!r.grounded);
}

#[tokio::test]
async fn the_sentinel_is_a_helpful_refusal() {
    let g = scripted(&["NOT_IN_SOURCES: the contractor reimbursement schedule"]);
    let r = engine_with(Settings::default(), g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    let refusal = r.refusal.unwrap();
    assert_eq!(refusal.reason, RefusalReason::Sentinel);
    assert_eq!(
        refusal.needed.as_deref(),
        Some("the contractor reimbursement schedule")
    );
    assert_eq!(refusal.nearest_topics, ["Filing", "Reimbursement", "Help"]);
    assert!(
        r.answer
            .starts_with("Not covered by the provided documents.")
    );
}

#[tokio::test]
async fn the_gate_refuses_without_calling_the_model() {
    let settings = Settings {
        gate_threshold: 0.95,
        ..Settings::default()
    };
    let g = scripted(&["Reimbursements settle within 30 days of approval [2]."]);
    let r = engine_with(settings, g.clone())
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Gate);
    assert_eq!(g.calls(), 0);
}

#[tokio::test]
async fn a_generator_failure_is_a_clear_error() {
    let g = Arc::new(ScriptedGenerator::from_results(vec![Err(LlmError::Http {
        status: 500,
        message: "boom".into(),
    })]));
    let err = engine_with(Settings::default(), g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Generation(_)), "{err}");
    assert!(err.to_string().contains("500"), "{err}");
}

#[tokio::test]
async fn an_empty_question_is_bad_input() {
    let err = engine_with(Settings::default(), scripted(&["x"]))
        .ask("  ", &AskOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::BadRequest(_)));
}

#[tokio::test]
async fn streaming_releases_only_validated_sentences() {
    let g = Arc::new(
        ScriptedGenerator::new(vec![
            "Reimbursements settle within 30 days of approval [2]. Refunds take 14 days [7]. Claims are filed within 60 days [1].".into(),
            "Reimbursements settle within 30 days of approval [2].".into(),
        ])
        .with_pacing(5, std::time::Duration::from_millis(1)),
    );
    let engine = engine_with(Settings::default(), g);
    let mut events = engine.ask_stream(Q, &AskOptions::default());
    let mut shown = Vec::new();
    let mut last = None;
    while let Some(e) = events.next().await {
        match e {
            AskEvent::Sentence {
                text, citations, ..
            } => {
                assert!(
                    citations.iter().all(|&c| (1..=3).contains(&c)),
                    "unchecked citation shown: {text}"
                );
                shown.push(text);
            }
            AskEvent::Final(r) => last = Some(r),
            AskEvent::Error(e) => panic!("{e}"),
        }
    }
    // The first sentence is shown; the one citing [7] and everything after
    // it are held back.
    assert_eq!(
        shown,
        ["Reimbursements settle within 30 days of approval [2]."]
    );
    let r = last.unwrap();
    assert!(r.regenerated);
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]."
    );
    assert!(r.timings.first_sentence_ms.is_some());
}

/// A minimal OpenAI-compatible server on loopback that always answers
/// `text`.
async fn fake_openai(text: &'static str) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut read = 0;
                // Read headers and the body (Content-Length).
                loop {
                    let n = socket.read(&mut buf[read..]).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    read += n;
                    let head = String::from_utf8_lossy(&buf[..read]);
                    if let Some(end) = head.find("\r\n\r\n") {
                        let len = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if read >= end + 4 + len {
                            break;
                        }
                    }
                }
                let body = serde_json::json!({
                    "id": "x", "object": "chat.completion", "model": "fake",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
                })
                .to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn an_openai_server_that_keeps_citing_7_ends_in_a_refusal() {
    let (url, hits) = fake_openai("Reimbursements settle in 30 days [7].").await;
    let config = OpenAiConfig {
        base_url: url,
        model: "fake".into(),
        ..OpenAiConfig::default()
    };
    let g = Arc::new(OpenAiGenerator::new(config).unwrap());
    let r = engine_with(Settings::default(), g)
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Validation);
    assert!(!r.answer.contains("[7]"));
}
