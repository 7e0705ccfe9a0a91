//! The LLM judge (`check.verifier = "llm"`) against loopback fake servers: what it is asked,
//! how its verdicts combine with the rules', and what happens when it fails, is slow or
//! rambles.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use groundcite_core::check::SentenceVerdict;
use groundcite_core::{CheckConfig, Passage};
use groundcite_engine::{Checker, GeneratorJudge, JudgeSettings, Settings};
use groundcite_llm::{
    AnthropicConfig, AnthropicGenerator, Generator, OpenAiConfig, OpenAiGenerator, Secret,
    TransportConfig,
};
use groundcite_verify::VerifierKind;

/// What the fake answers: (HTTP status, the reply text); it may sleep first.
type Respond = dyn Fn(&serde_json::Value) -> (u16, String) + Send + Sync;

struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<serde_json::Value>>>,
    most_in_flight: Arc<AtomicUsize>,
}

/// A loopback server in its own threads, speaking OpenAI's chat completions or Anthropic's
/// messages (by path), one connection per request.
fn fake(respond: impl Fn(&serde_json::Value) -> (u16, String) + Send + Sync + 'static) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most_in_flight = Arc::new(AtomicUsize::new(0));
    let respond: Arc<Respond> = Arc::new(respond);
    let (seen, most) = (requests.clone(), most_in_flight.clone());
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            let (seen, respond, in_flight, most) = (
                seen.clone(),
                respond.clone(),
                in_flight.clone(),
                most.clone(),
            );
            std::thread::spawn(move || {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (head_end, len) = loop {
                    let n = socket.read(&mut chunk).unwrap_or(0);
                    if n == 0 {
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let head = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = head.find("\r\n\r\n") {
                        let len = head[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break (end, len);
                        }
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let request: serde_json::Value =
                    serde_json::from_slice(&buf[head_end + 4..head_end + 4 + len]).unwrap();
                seen.lock().unwrap().push(request.clone());
                let (status, text) = respond(&request);
                let body = if status != 200 {
                    text
                } else if head.starts_with("POST /v1/messages") {
                    serde_json::json!({
                        "id": "msg", "type": "message", "role": "assistant", "model": "fake",
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": 1, "output_tokens": 1}
                    })
                    .to_string()
                } else {
                    serde_json::json!({
                        "id": "x", "object": "chat.completion", "model": "fake",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
                    })
                    .to_string()
                };
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let _ = socket.write_all(
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                );
            });
        }
    });
    Fake {
        url,
        requests,
        most_in_flight,
    }
}

fn openai(url: &str) -> Arc<dyn Generator> {
    Arc::new(
        OpenAiGenerator::new(OpenAiConfig {
            base_url: url.into(),
            model: "judge".into(),
            transport: TransportConfig {
                max_retries: 0,
                ..TransportConfig::default()
            },
            ..OpenAiConfig::default()
        })
        .unwrap(),
    )
}

fn llm_checker(generator: Arc<dyn Generator>, judge: &JudgeSettings) -> Checker {
    let config = CheckConfig {
        verifier: VerifierKind::Llm,
        ..CheckConfig::default()
    };
    let judge = GeneratorJudge::new(generator, judge).unwrap();
    Checker::configured(config, None, Some(judge)).unwrap()
}

fn passages() -> Vec<Passage> {
    let p = |id: &str, text: &str| Passage {
        id: id.into(),
        text: text.into(),
        source_url: format!("https://example.com/{id}"),
        section: String::new(),
        score: None,
    };
    vec![
        p(
            "claims",
            "Expense claims must be filed within 60 days of the expense. Your supervisor approves each claim before finance pays it.",
        ),
        p(
            "leave",
            "Unused travel compensatory time is forfeited when you leave the agency.",
        ),
    ]
}

/// The sentence a judge request is about.
fn sentence(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    user.rsplit("Sentence: ").next().unwrap().to_string()
}

fn reply(verdict: &str, quote: &str, explanation: &str) -> String {
    serde_json::json!({"verdict": verdict, "quote": quote, "explanation": explanation}).to_string()
}

const ANSWER: &str = "Expense claims must be filed within 90 days of the expense [1]. \
Finance approves each claim before your supervisor pays it [1]. \
Leftover travel comp time does not carry over when you quit [2].";

#[test]
fn the_judge_decides_what_the_rules_cannot_and_never_overrules_a_contradiction() {
    let fake = fake(|request| {
        let s = sentence(request);
        let text = if s.starts_with("Finance approves") {
            // Wrapped in prose and a code fence, as small models do.
            format!(
                "Here is my verdict:\n```json\n{}\n```",
                reply(
                    "contradicted",
                    "your supervisor approves each claim",
                    "The supervisor approves, and finance pays."
                )
            )
        } else {
            reply(
                "supported",
                "is forfeited when you leave",
                "Forfeited means it is lost.",
            )
        };
        (200, text)
    });
    let checker = llm_checker(openai(&fake.url), &JudgeSettings::default());
    let out = checker.check(Some("How do expense claims work?"), &passages(), ANSWER);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["verifier"], "llm");

    let requests = fake.requests.lock().unwrap().clone();
    // The rules' number contradiction is never sent; the other two are.
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let mut asked: Vec<String> = requests.iter().map(sentence).collect();
    asked.sort();
    assert_eq!(
        asked,
        [
            "Finance approves each claim before your supervisor pays it .",
            "Leftover travel comp time does not carry over when you quit ."
        ]
    );
    for r in &requests {
        assert_eq!(r["temperature"], 0.0);
        assert_eq!(r["model"], "judge");
        let system = r["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("Reply with one JSON object"), "{system}");
        let user = r["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap();
        assert!(user.starts_with("Question (context only): How do expense claims work?"));
    }

    let s = &json["sentences"];
    assert_eq!(s[0]["verdict"], "contradicted");
    assert_eq!(
        s[0]["reasons"][0],
        "number_mismatch: \"90 days\" vs \"60 days\""
    );
    assert_eq!(s[1]["verdict"], "contradicted");
    assert_eq!(
        s[1]["reasons"][0],
        "judge_contradicted: \"The supervisor approves, and finance pays.\""
    );
    assert_eq!(
        s[1]["message"],
        "The judge model found that the source says otherwise: The supervisor approves, and finance pays."
    );
    assert_eq!(s[2]["verdict"], "supported");
    assert_eq!(
        s[2]["reasons"][0],
        "judge_supported: \"Forfeited means it is lost.\""
    );
    // The evidence is the judge's quote, found in the passage.
    let judged: Vec<_> = out
        .sentences
        .iter()
        .filter(|s| s.verdict != SentenceVerdict::NotFactual)
        .collect();
    let quote = judged[1].evidence.as_ref().unwrap();
    let text = &passages()[quote.passage - 1].text;
    assert_eq!(
        &text[quote.start..quote.end],
        "Your supervisor approves each claim"
    );
}

#[test]
fn a_failing_slow_or_rambling_judge_leaves_the_rules_verdict_and_says_why() {
    let answer = "Expense claims must be filed within 60 days of the expense [1].";
    // The backend errors.
    let down = fake(|_| (500, r#"{"error": {"message": "boom"}}"#.into()));
    let out =
        llm_checker(openai(&down.url), &JudgeSettings::default()).check(None, &passages(), answer);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["sentences"][0]["verdict"], "supported");
    let reason = json["sentences"][0]["reasons"][0].as_str().unwrap();
    assert!(reason.starts_with("judge_unavailable: "), "{reason}");
    assert!(reason.contains("500"), "{reason}");
    assert!(
        json["sentences"][0]["message"]
            .as_str()
            .unwrap()
            .contains("The judge model gave no verdict"),
        "{json:#}"
    );

    // Nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = llm_checker(openai(&url), &JudgeSettings::default()).check(None, &passages(), answer);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["sentences"][0]["verdict"], "supported");
    assert!(
        json["sentences"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("judge_unavailable: "),
        "{json:#}"
    );

    // Slower than the deadline.
    let slow = fake(|_| {
        std::thread::sleep(Duration::from_secs(3));
        (200, reply("contradicted", "", "late"))
    });
    let settings = JudgeSettings {
        deadline_secs: 0.3,
        ..JudgeSettings::default()
    };
    let out = llm_checker(openai(&slow.url), &settings).check(None, &passages(), answer);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["sentences"][0]["verdict"], "supported");
    assert_eq!(
        json["sentences"][0]["reasons"][0],
        "judge_unavailable: \"no verdict within the 0.3 s deadline\""
    );

    // A reply that is not the JSON asked for.
    let rambling = fake(|_| (200, "The sentence looks right to me.".into()));
    let out = llm_checker(openai(&rambling.url), &JudgeSettings::default()).check(
        None,
        &passages(),
        answer,
    );
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["sentences"][0]["verdict"], "supported");
    assert_eq!(
        json["sentences"][0]["reasons"][0],
        "judge_unavailable: \"the reply is not JSON: The sentence looks right to me.\""
    );
}

#[test]
fn requests_in_flight_stay_within_the_concurrency() {
    let fake = fake(|_| {
        std::thread::sleep(Duration::from_millis(150));
        (200, reply("supported", "", ""))
    });
    let settings = JudgeSettings {
        concurrency: 2,
        ..JudgeSettings::default()
    };
    let answer = (0..6)
        .map(|i| format!("Expense claims must be filed within 60 days, rule {i} [1]."))
        .collect::<Vec<_>>()
        .join(" ");
    let out = llm_checker(openai(&fake.url), &settings).check(None, &passages(), &answer);
    assert_eq!(fake.requests.lock().unwrap().len(), 6);
    let most = fake.most_in_flight.load(Ordering::SeqCst);
    assert!((1..=2).contains(&most), "{most} requests in flight at once");
    assert!(
        out.sentences
            .iter()
            .filter(|s| s.verdict != SentenceVerdict::NotFactual)
            .all(|s| s.verdict == SentenceVerdict::Supported)
    );
}

#[test]
fn anthropic_judges_too() {
    let fake = fake(|_| {
        (
            200,
            reply("not_stated", "", "The passage has no such rule."),
        )
    });
    let generator = AnthropicGenerator::with_api_key(
        AnthropicConfig {
            base_url: fake.url.clone(),
            model: "judge".into(),
            ..AnthropicConfig::default()
        },
        Secret::new("test-key"),
    )
    .unwrap();
    let checker = llm_checker(Arc::new(generator), &JudgeSettings::default());
    let out = checker.check(
        None,
        &passages(),
        "Expense claims must be filed within 60 days of the expense [1].",
    );
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["sentences"][0]["verdict"], "unsupported");
    assert_eq!(
        json["sentences"][0]["reasons"][0],
        "judge_unsupported: \"The passage has no such rule.\""
    );
    let requests = fake.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]["system"]
            .as_str()
            .unwrap()
            .contains("not_stated")
    );
}

/// A check inside async code (the server's handlers, the engine's `ask`) waits for the judge
/// without stalling its runtime, whichever flavour it is.
#[test]
fn a_check_inside_a_runtime_waits_for_the_judge() {
    let fake = fake(|_| (200, reply("contradicted", "", "no")));
    let checker = llm_checker(openai(&fake.url), &JudgeSettings::default());
    let answer = "Expense claims must be filed within 60 days of the expense [1].";
    for runtime in [
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    ] {
        let checker = checker.clone();
        let out = runtime.block_on(async move {
            let ticker = tokio::spawn(async { tokio::time::sleep(Duration::from_millis(1)).await });
            let out = checker.check(None, &passages(), answer);
            ticker.await.unwrap();
            out
        });
        assert_eq!(out.sentences[0].verdict, SentenceVerdict::Contradicted);
        // The checker (and its judge's runtime) may be dropped inside async code.
        runtime.block_on(async { drop(llm_checker(openai(&fake.url), &JudgeSettings::default())) });
    }
}

#[test]
fn the_llm_verifier_needs_a_backend_and_sane_limits() {
    let mut settings = Settings::default();
    settings.check.verifier = VerifierKind::Llm;
    let e = settings.validate().unwrap_err().to_string();
    assert!(e.contains("judge.backend"), "{e}");
    assert!(e.contains("the generator is extractive"), "{e}");
    settings.judge.backend = Some(groundcite_engine::JudgeBackend::Openai);
    settings.validate().unwrap();
    settings.judge.concurrency = 0;
    let e = settings.validate().unwrap_err().to_string();
    assert!(e.contains("judge.concurrency = 0"), "{e}");
    settings.judge.concurrency = 4;
    settings.judge.deadline_secs = 0.0;
    assert!(settings.validate().is_err());
    // Without a judge the checker cannot be built: never a silent fallback.
    let config = CheckConfig {
        verifier: VerifierKind::Llm,
        ..CheckConfig::default()
    };
    assert!(Checker::configured(config, None, None).is_err());
}
