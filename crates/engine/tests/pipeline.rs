//! The pipeline policy with misbehaving generators: ids never sent,
//! regenerate once, refuse / strip; the sentinel; generator failures;
//! streaming that never shows an unchecked citation; an OpenAI-compatible
//! server on loopback that keeps citing [7].

use std::sync::Arc;

use futures::StreamExt;
use groundcite_core::Status;
use groundcite_core::finalize::BadIdPolicy;
use groundcite_engine::{
    AskEvent, AskOptions, Engine, EngineError, RefusalReason, Retraction, Retriever, Settings,
    StreamedSentence,
};
use groundcite_index::{Chunk, Hit};
use groundcite_llm::{Generator, LlmError, OpenAiConfig, OpenAiGenerator, ScriptedGenerator};

/// Three fixed passages, whatever the query.
struct Fixed;

impl Retriever for Fixed {
    fn search(&self, _query: &str, _k: usize) -> groundcite_index::Result<Vec<Hit>> {
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
            units: None,
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
    // Stated in its source; without a model relevance is not judged, so
    // the answer is supported but not certified as grounded.
    assert!(r.supported && !r.grounded, "{r:#?}");
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
    assert!(!r.supported && !r.grounded);
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
    // The passages passed the gate: the documents discuss the question, so
    // the refusal says they don't answer it and links them, never "Not
    // covered".
    assert_eq!(refusal.closest_passages.len(), 3, "{refusal:#?}");
    assert!(
        r.answer
            .starts_with("The sources found don't answer this directly."),
        "{}",
        r.answer
    );
    assert!(!r.answer.contains("Not covered"), "{}", r.answer);
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
    // Under the gate, but the best hit's topic ("Reimbursement") names the
    // question: the documents do discuss it, and the refusal links it.
    let refusal = r.refusal.unwrap();
    assert_eq!(refusal.reason, RefusalReason::NoDirectAnswer);
    assert_eq!(refusal.closest_passages[0].section, "Reimbursement");
    assert!(
        r.answer
            .starts_with("The sources found don't answer this directly.")
    );
    assert_eq!(g.calls(), 0);
    // Nothing relevant at all: "Not covered", and still no model call.
    let r = engine_with(
        Settings {
            gate_threshold: 0.95,
            ..Settings::default()
        },
        g.clone(),
    )
    .ask("Which dental plan covers pets?", &AskOptions::default())
    .await
    .unwrap();
    let refusal = r.refusal.unwrap();
    assert_eq!(refusal.reason, RefusalReason::Gate);
    assert!(refusal.closest_passages.is_empty());
    assert!(
        r.answer
            .starts_with("Not covered by the provided documents.")
    );
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
    // No source: the CLI prints `{err:#}`, which follows sources, and the
    // message already holds the cause (else it is printed twice).
    assert!(std::error::Error::source(&err).is_none());
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
    let mut retracted = None;
    let mut last = None;
    while let Some(e) = events.next().await {
        match e {
            AskEvent::Sentence(StreamedSentence {
                text, citations, ..
            }) => {
                assert!(
                    citations.iter().all(|&c| (1..=3).contains(&c)),
                    "unchecked citation shown: {text}"
                );
                shown.push(text);
            }
            AskEvent::Retract(Retraction { count, .. }) => retracted = Some(count),
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
    // The answer served is the second attempt: what was shown of the
    // first is withdrawn.
    assert_eq!(retracted, Some(1));
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

/// One reply of [`fake_openai_with`]: the message content and the
/// `finish_reason`.
type Reply = (String, &'static str);

/// An OpenAI-compatible server on loopback whose reply to the `n`th call
/// (from 0) is `respond(n, request body)`, always with status 200 (see
/// [`fake_openai_full`]). Returns its url and the request bodies it
/// received.
async fn fake_openai_with(
    respond: impl Fn(usize, &serde_json::Value) -> Reply + Send + Sync + 'static,
) -> (String, Arc<std::sync::Mutex<Vec<serde_json::Value>>>) {
    fake_openai_full(move |call, request| {
        let (content, finish) = respond(call, request);
        (200, content, finish)
    })
    .await
}

fn openai_at(url: String) -> Arc<OpenAiGenerator> {
    let config = OpenAiConfig {
        base_url: url,
        model: "fake".into(),
        ..OpenAiConfig::default()
    };
    Arc::new(OpenAiGenerator::new(config).unwrap())
}

/// A corrective call answered with `{"content": "", "finish_reason":
/// "stop"}` (as a llama.cpp server did) does not fail the request: the
/// first attempt already cited ids never sent, so this is a refusal.
#[tokio::test]
async fn an_empty_regeneration_is_a_validation_refusal() {
    let (url, bodies) = fake_openai_with(|call, _| match call {
        0 => ("Reimbursements settle in 30 days [6][7].".into(), "stop"),
        _ => (String::new(), "stop"),
    })
    .await;
    let r = engine_with(Settings::default(), openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .expect("a refusal, not an error");
    assert_eq!(bodies.lock().unwrap().len(), 2);
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Validation);
    assert_eq!(r.attempts.len(), 2);
    assert!(r.attempts[1].error.is_some(), "{:?}", r.attempts);
}

/// A reply cut at `max_tokens` is not served ending in "We strongly":
/// the cut sentence is dropped and the truncation reported.
#[tokio::test]
async fn a_reply_cut_at_max_tokens_loses_its_unfinished_sentence() {
    let (url, _) = fake_openai_with(|_, _| {
        (
            "Reimbursements settle within 30 days of approval [2]. We strongly".into(),
            "length",
        )
    })
    .await;
    let r = engine_with(Settings::default(), openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]."
    );
    assert_eq!(r.status, Status::Ok);
    assert!(r.truncated);
    assert_eq!(r.finish_reason.as_deref(), Some("length"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["truncated"], true);
}

/// A chat template that drops system messages (llama-cpp-python's `gemma`
/// format): the model sees only the user turns. It answers from a passage
/// only when the passage reached it, and refuses otherwise.
fn drops_system_messages(_: usize, request: &serde_json::Value) -> Reply {
    let seen: String = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    if seen.contains("Reimbursements settle within 30 days") && seen.contains("Rules:") {
        (
            "Reimbursements settle within 30 days of approval [2].".into(),
            "stop",
        )
    } else {
        ("Not covered by the provided documents.".into(), "stop")
    }
}

#[tokio::test]
async fn the_contract_survives_a_template_that_drops_system_messages() {
    let (url, bodies) = fake_openai_with(drops_system_messages).await;
    let settings = Settings {
        contract_role: groundcite_engine::ContractRole::User,
        ..Settings::default()
    };
    let r = engine_with(settings, openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert!(r.refusal.is_none(), "{:?}", r.refusal);
    assert_eq!(r.status, Status::Ok);
    let bodies = bodies.lock().unwrap();
    let messages = bodies[0]["messages"].as_array().unwrap();
    assert!(
        messages.iter().all(|m| m["role"] != "system"),
        "{messages:?}"
    );
    assert!(messages[0]["content"].as_str().unwrap().ends_with(Q));
}

/// Events of a stream, collected: the sentences shown (minus those
/// retracted), how many retractions, and the final result.
async fn collect(engine: &Engine) -> (Vec<String>, usize, Box<groundcite_engine::AskResult>) {
    let mut events = engine.ask_stream(Q, &AskOptions::default());
    let mut shown = Vec::new();
    let mut retractions = 0;
    let mut last = None;
    while let Some(e) = events.next().await {
        match e {
            AskEvent::Sentence(StreamedSentence { text, .. }) => shown.push(text),
            AskEvent::Retract(Retraction { count, .. }) => {
                assert_eq!(
                    count,
                    shown.len(),
                    "a retraction withdraws everything shown"
                );
                shown.clear();
                retractions += 1;
            }
            AskEvent::Final(r) => last = Some(r),
            AskEvent::Error(e) => panic!("{e}"),
        }
    }
    (shown, retractions, last.unwrap())
}

/// Sentences of a rejected first attempt do not stay on screen with the
/// regenerated answer after them: they are retracted.
#[tokio::test]
async fn a_rejected_first_attempt_is_retracted_from_the_stream() {
    let g = Arc::new(
        ScriptedGenerator::new(vec![
            "Claims are filed within 60 days of the expense [1]. Refunds take 14 days [7].".into(),
            "Reimbursements settle within 30 days of approval [2].".into(),
        ])
        .with_pacing(5, std::time::Duration::from_millis(1)),
    );
    let (shown, retractions, r) = collect(&engine_with(Settings::default(), g)).await;
    assert!(r.regenerated);
    assert_eq!(retractions, 1);
    assert!(shown.is_empty(), "{shown:?}");
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]."
    );
}

/// Under `unsupported_policy = "refuse"` a contradicted sentence is never
/// shown before the final refusal.
#[tokio::test]
async fn the_refuse_policy_applies_to_streams() {
    let mut settings = Settings::default();
    settings.check.unsupported_policy = groundcite_core::finalize::UnsupportedPolicy::Refuse;
    let g = Arc::new(
        ScriptedGenerator::new(vec![
            "Claims are filed within 60 days of the expense [1]. Reimbursements settle in 14 days [2]. Questions go to the finance help desk [3].".into(),
        ])
        .with_pacing(5, std::time::Duration::from_millis(1)),
    );
    let engine = engine_with(settings, g);
    let mut events = engine.ask_stream(Q, &AskOptions::default());
    while let Some(e) = events.next().await {
        if let AskEvent::Sentence(StreamedSentence { text, verdict, .. }) = &e {
            assert!(
                verdict != "contradicted" && !text.contains("14 days"),
                "shown under the refuse policy: {text}"
            );
        }
    }
    let (shown, retractions, r) = collect(&engine_with(
        {
            let mut s = Settings::default();
            s.check.unsupported_policy = groundcite_core::finalize::UnsupportedPolicy::Refuse;
            s
        },
        Arc::new(ScriptedGenerator::new(vec![
            "Claims are filed within 60 days of the expense [1]. Reimbursements settle in 14 days [2].".into(),
        ])),
    ))
    .await;
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Validation);
    assert_eq!(retractions, 1);
    assert!(shown.is_empty());
}

/// Under `unsupported_policy = "drop"` the stream never shows the dropped
/// sentence, and keeps the others.
#[tokio::test]
async fn the_drop_policy_applies_to_streams() {
    let mut settings = Settings::default();
    settings.check.unsupported_policy = groundcite_core::finalize::UnsupportedPolicy::Drop;
    let g = Arc::new(ScriptedGenerator::new(vec![
        "Claims are filed within 60 days of the expense [1]. Reimbursements settle in 14 days [2]."
            .into(),
    ]));
    let (shown, retractions, r) = collect(&engine_with(settings, g)).await;
    assert_eq!(
        shown,
        ["Claims are filed within 60 days of the expense [1]."]
    );
    assert_eq!(retractions, 0);
    assert_eq!(
        r.answer,
        "Claims are filed within 60 days of the expense [1]."
    );
}

/// Item 5: low coverage is a second chance. The corrective message names
/// the uncited factual sentence; a second uncited answer is refused under
/// `low_coverage_policy = "refuse"`.
#[tokio::test]
async fn low_coverage_is_regenerated_once_then_refused_by_policy() {
    let (url, bodies) = fake_openai_with(|_, _| {
        (
            "Claims are filed within 60 days of the expense [1]. Reimbursements settle within 30 days of approval.".into(),
            "stop",
        )
    })
    .await;
    let mut settings = Settings::default();
    settings.check.regenerate_on_low_coverage = true;
    settings.check.low_coverage_policy = groundcite_core::finalize::LowCoveragePolicy::Refuse;
    let r = engine_with(settings, openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    let bodies = bodies.lock().unwrap();
    assert_eq!(bodies.len(), 2);
    let corrective = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        corrective.contains("\"Reimbursements settle within 30 days of approval.\""),
        "{corrective}"
    );
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Validation);
}

/// Item 5: a corrected second answer is served, and under the default
/// `flag` policy a still-uncited one is served ungrounded.
#[tokio::test]
async fn low_coverage_corrected_or_flagged() {
    let mut settings = Settings::default();
    settings.check.regenerate_on_low_coverage = true;
    let g = scripted(&[
        "Reimbursements settle within 30 days of approval.",
        "Reimbursements settle within 30 days of approval [2].",
    ]);
    let r = engine_with(settings.clone(), g.clone())
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(g.calls(), 2);
    assert!(r.regenerated && r.supported, "{r:#?}");
    let g = scripted(&[
        "Reimbursements settle within 30 days of approval.",
        "Reimbursements settle within 30 days of approval.",
    ]);
    let r = engine_with(settings, g.clone())
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(g.calls(), 2);
    assert!(r.refusal.is_none() && !r.supported && !r.grounded);
}

/// What [`fake_openai_full`] answers one call with: a status, then the
/// message content (or, for an error status, the whole body), then the
/// `finish_reason`.
type FullReply = (u16, String, &'static str);

/// An OpenAI-compatible server on loopback that also streams (`"stream":
/// true`: the content in pieces of 7 bytes as SSE chunks, then `[DONE]`)
/// and answers errors: the reply to the `n`th call (from 0) is
/// `respond(n, request body)`. Returns its url and the request bodies.
async fn fake_openai_full(
    respond: impl Fn(usize, &serde_json::Value) -> FullReply + Send + Sync + 'static,
) -> (String, Arc<std::sync::Mutex<Vec<serde_json::Value>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let respond = Arc::new(respond);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let respond = respond.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (body_start, len) = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let head = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = head.find("\r\n\r\n") {
                        let l = head[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + l {
                            break (end + 4, l);
                        }
                    }
                };
                let request: serde_json::Value =
                    serde_json::from_slice(&buf[body_start..body_start + len]).unwrap();
                let call = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(request.clone());
                    seen.len() - 1
                };
                let (status, content, finish) = respond(call, &request);
                let response = if status != 200 {
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{content}",
                        content.len()
                    )
                } else if request["stream"] == true {
                    let mut events = String::new();
                    let mut rest = content.as_str();
                    while !rest.is_empty() {
                        let mut at = rest.len().min(7);
                        while !rest.is_char_boundary(at) {
                            at += 1;
                        }
                        let chunk = serde_json::json!({"model": "fake", "choices": [{"index": 0, "delta": {"content": &rest[..at]}, "finish_reason": null}]});
                        events.push_str(&format!("data: {chunk}\n\n"));
                        rest = &rest[at..];
                    }
                    let end = serde_json::json!({"model": "fake", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
                    events.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
                        events.len()
                    )
                } else {
                    let body = serde_json::json!({
                        "id": "x", "object": "chat.completion", "model": "fake",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]
                    })
                    .to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}"), bodies)
}

/// An answer under the schema: ids 1..=3, one of them cited.
const STRUCTURED: &str = r#"{"sentences": [{"text": "Reimbursements settle within 30 days of approval.", "citations": [2]}, {"text": "Claims are filed within 60 days of the expense.", "citations": [1]}], "refusal": null}"#;

/// The settings of an engine asking the OpenAI-compatible backend.
fn openai_settings() -> Settings {
    Settings {
        generator: groundcite_engine::GeneratorKind::Openai,
        ..Settings::default()
    }
}

/// Item 1: a structured answer is asked for with the schema of the
/// passages sent, rendered to markers, and checked like any answer.
#[tokio::test]
async fn a_structured_answer_is_rendered_to_markers_and_checked() {
    let (url, bodies) = fake_openai_full(|_, request| {
        assert_eq!(request["response_format"]["type"], "json_schema");
        (200, STRUCTURED.into(), "stop")
    })
    .await;
    let r = engine_with(openai_settings(), openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]. Claims are filed within 60 days of the expense [1]."
    );
    assert_eq!(r.status, Status::Ok);
    assert!(r.supported && !r.regenerated, "{r:#?}");
    assert_eq!(
        r.generation_mode,
        Some(groundcite_engine::GenerationMode::Structured)
    );
    assert_eq!(r.attempts[0].raw, STRUCTURED, "the audit keeps the JSON");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["generation_mode"], "structured");
    let bodies = bodies.lock().unwrap();
    let ids = &bodies[0]["response_format"]["json_schema"]["schema"]["properties"]["sentences"]["items"]
        ["properties"]["citations"]["items"]["enum"];
    assert_eq!(*ids, serde_json::json!([1, 2, 3]), "the passages sent");
}

/// Item 1: a server that rejects the schema (both forms) is answered in
/// free text, and the report says so; the next question goes straight to
/// free text.
#[tokio::test]
async fn a_server_that_rejects_the_schema_gets_free_text() {
    let (url, bodies) = fake_openai_full(|_, request| match request.get("response_format") {
        Some(_) => (
            400,
            r#"{"error": {"message": "Unrecognized request argument supplied: response_format"}}"#
                .into(),
            "stop",
        ),
        None => (
            200,
            "Reimbursements settle within 30 days of approval [2].".into(),
            "stop",
        ),
    })
    .await;
    let engine = engine_with(openai_settings(), openai_at(url));
    let r = engine.ask(Q, &AskOptions::default()).await.unwrap();
    assert_eq!(r.status, Status::Ok);
    assert_eq!(
        r.generation_mode,
        Some(groundcite_engine::GenerationMode::FreeText)
    );
    assert_eq!(bodies.lock().unwrap().len(), 3);
    let r = engine.ask(Q, &AskOptions::default()).await.unwrap();
    assert_eq!(r.status, Status::Ok);
    assert_eq!(bodies.lock().unwrap().len(), 4, "remembered");
}

/// Item 1: streaming a structured answer shows each sentence once its
/// object is complete, as marker text; the final result is the same text.
#[tokio::test]
async fn a_structured_answer_streams_sentence_by_sentence() {
    let (url, _) = fake_openai_full(|_, _| (200, STRUCTURED.into(), "stop")).await;
    let engine = engine_with(openai_settings(), openai_at(url));
    let (shown, retractions, r) = collect(&engine).await;
    assert_eq!(retractions, 0);
    assert_eq!(
        shown,
        [
            "Reimbursements settle within 30 days of approval [2].",
            "Claims are filed within 60 days of the expense [1]."
        ]
    );
    assert_eq!(r.answer, shown.join(" "));
    assert_eq!(
        r.generation_mode,
        Some(groundcite_engine::GenerationMode::Structured)
    );
}

/// A structured reply cut at `max_tokens` keeps its complete sentences,
/// streaming or not, and never shows the unfinished one.
#[tokio::test]
async fn a_structured_reply_cut_at_max_tokens_keeps_its_complete_sentences() {
    let cut = &STRUCTURED[..STRUCTURED.find("within 60").unwrap()];
    let (url, _) = fake_openai_full(move |_, _| (200, cut.to_string(), "length")).await;
    let engine = engine_with(openai_settings(), openai_at(url));
    let r = engine.ask(Q, &AskOptions::default()).await.unwrap();
    assert_eq!(
        r.answer,
        "Reimbursements settle within 30 days of approval [2]."
    );
    assert!(r.truncated);
    assert_eq!(r.status, Status::Ok);
    let (shown, retractions, r) = collect(&engine).await;
    assert_eq!(retractions, 0);
    assert_eq!(
        shown,
        ["Reimbursements settle within 30 days of approval [2]."]
    );
    assert!(r.truncated);
}

/// A structured refusal is the configured refusal.
#[tokio::test]
async fn a_structured_refusal_is_a_refusal() {
    let (url, _) = fake_openai_full(|_, _| {
        (
            200,
            r#"{"sentences": [], "refusal": {"needed": "the travel policy"}}"#.into(),
            "stop",
        )
    })
    .await;
    let r = engine_with(openai_settings(), openai_at(url))
        .ask(Q, &AskOptions::default())
        .await
        .unwrap();
    assert_eq!(r.refusal.unwrap().reason, RefusalReason::Sentinel);
}

/// The embedded index embeds the question while BM25 runs: the hits are
/// those of the question's vector given, and a failing embedding is the
/// engine's own error, not the index's.
#[test]
fn the_index_embeds_the_question_beside_bm25_and_keeps_its_error() {
    use groundcite_index::ChunkEmbedder;
    use groundcite_index::testing::HashEmbedder;
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for (name, text) in [
        (
            "leave.md",
            "# Leave\n\nAnnual leave is requested in the HR portal.\n",
        ),
        (
            "travel.md",
            "# Travel\n\nTravel is booked through the agency's tool.\n",
        ),
        ("pay.md", "# Pay\n\nSalaries are paid every other Friday.\n"),
    ] {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let embedder = HashEmbedder::new("hash");
    let mut index = groundcite_index::Index::open_or_create(&dir.path().join("index")).unwrap();
    index.set_embedder(embedder.clone());
    groundcite_index::ChunkIndex::ingest(&mut index, &[docs], &Default::default(), &mut |_| {})
        .unwrap();
    let question = "how do I request annual leave";
    let vector = embedder.embed_texts(&[question]).unwrap();
    let embed = || -> groundcite_index::Result<Vec<f32>> { Ok(vector.clone()) };
    let hits = Retriever::search_hybrid_embedding(&index, question, &embed, 3).unwrap();
    assert_eq!(
        hits,
        Retriever::search_hybrid(&index, question, &vector, 3).unwrap()
    );
    assert!(hits[0].chunk.text.contains("HR portal"), "{hits:?}");
    let failing = || -> groundcite_index::Result<Vec<f32>> {
        Err(groundcite_index::Error::Embedding("boom".into()))
    };
    match Retriever::search_hybrid_embedding(&index, question, &failing, 3) {
        Err(groundcite_index::Error::Embedding(message)) => {
            assert!(message.contains("boom"), "{message}")
        }
        other => panic!("expected the embedding's error, got {other:?}"),
    }
}
