//! Prometheus metrics, one recorder per [`crate::AppState`].
//!
//! The recorder is local (never installed globally), so two states in one
//! process (tests) never share counters. Every series is registered once at
//! start-up and kept as a handle: recording is an atomic add, no lookup.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `groundcite_answers_total` | counter | `status`: ok, unverified, no_evidence |
//! | `groundcite_refusals_total` | counter | `cause`: gate, sentinel, validation, no_direct_answer |
//! | `groundcite_invalid_id_answers_total` | counter | answers where an attempt cited ids never sent |
//! | `groundcite_regenerations_total` | counter | answers regenerated once |
//! | `groundcite_sentences_total` | counter | `verdict`, `endpoint`: ask, check |
//! | `groundcite_judge_verdicts_total` | counter | `outcome`: supported, contradicted, unsupported (the LLM judge's verdicts, `check.verifier = "llm"`), unavailable (no verdict: backend error, deadline, unreadable reply; the rules' verdict stood); `endpoint`: ask, check |
//! | `groundcite_checks_total` | counter | `status` (`POST /v1/check`) |
//! | `groundcite_coverage` | histogram | citation coverage of non-refused answers |
//! | `groundcite_stage_seconds` | histogram | `stage`: retrieve, gate (the answerability judgement, with a model), generate, check, total |
//! | `groundcite_check_seconds` | histogram | `POST /v1/check` handling time |
//! | `groundcite_audit_write_failures_total` | counter | `reason`: open, write, queue_full, conflict |
//! | `groundcite_audit_records_total` | counter | records written |
//! | `groundcite_audit_late_total` | counter | commit waits that ran out (the answer was refused unless its write was already under way and committed) |
//! | `groundcite_audit_refused_total` | counter | answers refused with 503 `audit_unavailable` because their record did not commit (alert on any) |
//! | `groundcite_http_errors_total` | counter | `code`: the error table's code |
//! | `groundcite_http_requests_total` | counter | `route`: the matched route template (`/v1/ask`), `unmatched` for none; `status`: the HTTP status |
//! | `groundcite_http_request_duration_seconds` | histogram | `route`; time to the response head (for a stream: to its first byte, not its end) |
//! | `groundcite_build_info` | gauge | `version`, `profile` (debug, release); always 1 |
//! | `groundcite_connections_open` | gauge | connections being served (at most `GROUNDCITE_MAX_CONNECTIONS`) |
//! | `groundcite_connection_cap_reached_total` | counter | times the server stopped accepting because `GROUNDCITE_MAX_CONNECTIONS` were open (new connections wait in the listen queue) |
//! | `groundcite_connections_timed_out_total` | counter | connections closed because a request's head did not arrive within `GROUNDCITE_HEADER_TIMEOUT_SECS` (also: idle kept-alive connections) |
//! | `groundcite_blocking_work_total` | counter | `route`: requests whose work ran on the blocking pool, off the threads that serve connections (`/v1/check`, `/v1/prompt`) |
//! | `groundcite_checks_stopped_total` | counter | checks stopped before their end: their deadline passed or their client left |

use std::collections::HashMap;
use std::sync::Arc;

use metrics::{Counter, Gauge, Histogram, Key, Label, Metadata, Recorder, Unit};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

use groundcite_audit::{AuditObserver, LossReason};
use groundcite_core::Status;
use groundcite_core::check::SentenceOut;
use groundcite_engine::AskResult;

use crate::error::ErrorCode;

const STATUSES: [&str; 3] = ["ok", "unverified", "no_evidence"];
const CAUSES: [&str; 4] = ["gate", "sentinel", "validation", "no_direct_answer"];
const VERDICTS: [&str; 5] = [
    "supported",
    "contradicted",
    "unsupported",
    "uncited",
    "not_factual",
];
/// The LLM judge's reasons (their machine form, before the `:`) and the
/// `outcome` label each one counts under.
const JUDGE_REASONS: [(&str, &str); 4] = [
    ("judge_supported", "supported"),
    ("judge_contradicted", "contradicted"),
    ("judge_unsupported", "unsupported"),
    ("judge_unavailable", "unavailable"),
];
const STAGES: [&str; 5] = ["retrieve", "gate", "generate", "check", "total"];

/// Latency buckets, in seconds: 0.1 ms to 60 s.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];
/// Coverage buckets: tenths.
pub const COVERAGE_BUCKETS: &[f64] = &[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0];

/// The service's metrics: a local recorder and pre-registered handles.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    answers: HashMap<&'static str, Counter>,
    refusals: HashMap<&'static str, Counter>,
    invalid_id_answers: Counter,
    regenerations: Counter,
    sentences_ask: HashMap<&'static str, Counter>,
    sentences_check: HashMap<&'static str, Counter>,
    judge_ask: HashMap<&'static str, Counter>,
    judge_check: HashMap<&'static str, Counter>,
    checks: HashMap<&'static str, Counter>,
    coverage: Histogram,
    stages: HashMap<&'static str, Histogram>,
    check_seconds: Histogram,
    audit_failures: HashMap<&'static str, Counter>,
    audit_records: Counter,
    audit_late: Counter,
    audit_refused: Counter,
    http_errors: HashMap<&'static str, Counter>,
    /// Kept so the series stays registered for the process's life.
    _build_info: Gauge,
}

/// The `route` label of a request that matched no route: raw paths never
/// become labels (one series per probe of a scanner).
pub const UNMATCHED_ROUTE: &str = "unmatched";

const META: Metadata<'static> = Metadata::new(
    "groundcite_server",
    metrics::Level::INFO,
    Some(module_path!()),
);

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A fresh set of metrics, every series pre-registered, on its own
    /// local Prometheus recorder.
    pub fn new() -> Metrics {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("groundcite_coverage".into()),
                COVERAGE_BUCKETS,
            )
            .and_then(|b| {
                b.set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)
            })
            .expect("bucket lists are non-empty")
            .build_recorder();
        let handle = recorder.handle();

        let describe = |name: &'static str, unit: Option<Unit>, help: &'static str| {
            recorder.describe_counter(name.into(), unit, help.into());
            recorder.describe_histogram(name.into(), unit, help.into());
        };
        describe(
            "groundcite_answers_total",
            None,
            "Answers served, by status.",
        );
        describe(
            "groundcite_refusals_total",
            None,
            "Refusals, by cause (gate, sentinel, validation).",
        );
        describe(
            "groundcite_invalid_id_answers_total",
            None,
            "Answers where an attempt cited passage ids never sent.",
        );
        describe(
            "groundcite_regenerations_total",
            None,
            "Answers regenerated once after citing ids never sent.",
        );
        describe(
            "groundcite_sentences_total",
            None,
            "Answer sentences, by support verdict and endpoint.",
        );
        describe(
            "groundcite_judge_verdicts_total",
            None,
            "Sentences put to the LLM judge, by its outcome (unavailable: no verdict) and endpoint.",
        );
        describe(
            "groundcite_checks_total",
            None,
            "POST /v1/check reports, by status.",
        );
        describe(
            "groundcite_coverage",
            None,
            "Citation coverage of answers that are not refusals.",
        );
        describe(
            "groundcite_stage_seconds",
            Some(Unit::Seconds),
            "Latency of each answer stage.",
        );
        describe(
            "groundcite_check_seconds",
            Some(Unit::Seconds),
            "Time to check one answer in POST /v1/check.",
        );
        describe(
            "groundcite_audit_write_failures_total",
            None,
            "Audit records lost: database open or write failures, full queue.",
        );
        describe(
            "groundcite_audit_records_total",
            None,
            "Audit records written.",
        );
        describe(
            "groundcite_audit_late_total",
            None,
            "Commit waits that ran out (the answer was refused unless its write was already under way and committed).",
        );
        describe(
            "groundcite_audit_refused_total",
            None,
            "Answers refused (503 audit_unavailable) because their audit record did not commit.",
        );
        describe(
            "groundcite_http_errors_total",
            None,
            "Error responses, by error code.",
        );
        describe(
            "groundcite_http_requests_total",
            None,
            "HTTP requests, by matched route template and status.",
        );
        describe(
            "groundcite_http_request_duration_seconds",
            Some(Unit::Seconds),
            "Time from a request to its response head, by matched route template.",
        );
        recorder.describe_gauge(
            "groundcite_build_info".into(),
            None,
            "The build serving: version and profile as labels; always 1.".into(),
        );
        let build_info = recorder.register_gauge(
            &Key::from_parts(
                "groundcite_build_info",
                vec![
                    Label::new("version", env!("CARGO_PKG_VERSION")),
                    Label::new(
                        "profile",
                        if cfg!(debug_assertions) {
                            "debug"
                        } else {
                            "release"
                        },
                    ),
                ],
            ),
            &META,
        );
        build_info.set(1.0);

        let counter = |name: &'static str, labels: Vec<Label>| {
            recorder.register_counter(&Key::from_parts(name, labels), &META)
        };
        let histogram = |name: &'static str, labels: Vec<Label>| {
            recorder.register_histogram(&Key::from_parts(name, labels), &META)
        };
        let by = |name: &'static str, label: &'static str, values: &[&'static str]| {
            values
                .iter()
                .map(|&v| (v, counter(name, vec![Label::new(label, v)])))
                .collect::<HashMap<_, _>>()
        };
        // One counter per (key, label value) pair, all for one endpoint; looked up by key.
        let per_endpoint = |name: &'static str,
                            label: &'static str,
                            pairs: &[(&'static str, &'static str)],
                            endpoint: &'static str| {
            pairs
                .iter()
                .map(|&(key, value)| {
                    let labels = vec![Label::new(label, value), Label::new("endpoint", endpoint)];
                    (key, counter(name, labels))
                })
                .collect::<HashMap<_, _>>()
        };
        let verdicts = VERDICTS.map(|v| (v, v));
        let sentences =
            |endpoint| per_endpoint("groundcite_sentences_total", "verdict", &verdicts, endpoint);
        let judge = |endpoint| {
            per_endpoint(
                "groundcite_judge_verdicts_total",
                "outcome",
                &JUDGE_REASONS,
                endpoint,
            )
        };
        let error_names: Vec<&'static str> = ErrorCode::TABLE.iter().map(|r| r.name).collect();
        let inner = Inner {
            answers: by("groundcite_answers_total", "status", &STATUSES),
            refusals: by("groundcite_refusals_total", "cause", &CAUSES),
            invalid_id_answers: counter("groundcite_invalid_id_answers_total", vec![]),
            regenerations: counter("groundcite_regenerations_total", vec![]),
            sentences_ask: sentences("ask"),
            sentences_check: sentences("check"),
            judge_ask: judge("ask"),
            judge_check: judge("check"),
            checks: by("groundcite_checks_total", "status", &STATUSES),
            coverage: histogram("groundcite_coverage", vec![]),
            stages: STAGES
                .iter()
                .map(|&s| {
                    (
                        s,
                        histogram("groundcite_stage_seconds", vec![Label::new("stage", s)]),
                    )
                })
                .collect(),
            check_seconds: histogram("groundcite_check_seconds", vec![]),
            audit_failures: by(
                "groundcite_audit_write_failures_total",
                "reason",
                &LossReason::ALL.map(LossReason::as_str),
            ),
            audit_records: counter("groundcite_audit_records_total", vec![]),
            audit_late: counter("groundcite_audit_late_total", vec![]),
            audit_refused: counter("groundcite_audit_refused_total", vec![]),
            http_errors: by("groundcite_http_errors_total", "code", &error_names),
            _build_info: build_info,
            recorder,
            handle,
        };
        Metrics {
            inner: Arc::new(inner),
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        self.inner.handle.render()
    }

    /// The recorder, to record custom series in the same exposition.
    pub fn recorder(&self) -> &PrometheusRecorder {
        &self.inner.recorder
    }

    /// Records one answer.
    pub fn record_answer(&self, answer: &AskResult) {
        let m = &self.inner;
        if let Some(c) = m.answers.get(answer.status.as_str()) {
            c.increment(1);
        }
        if let Some(cause) = answer
            .refusal
            .as_ref()
            .and_then(|r| m.refusals.get(r.reason.as_str()))
        {
            cause.increment(1);
        }
        let invalid =
            !answer.bad_ids.is_empty() || answer.attempts.iter().any(|a| !a.bad_ids.is_empty());
        if invalid {
            m.invalid_id_answers.increment(1);
        }
        if answer.regenerated {
            m.regenerations.increment(1);
        }
        self.record_sentences(&answer.sentences, &m.sentences_ask, &m.judge_ask);
        if answer.status != Status::NoEvidence && answer.refusal.is_none() {
            m.coverage.record(answer.coverage);
        }
        let t = &answer.timings;
        for (stage, ms) in STAGES.into_iter().zip([
            t.retrieve_ms,
            t.gate_ms,
            t.generate_ms,
            t.check_ms,
            t.total_ms,
        ]) {
            if let Some(h) = m.stages.get(stage) {
                h.record(ms / 1000.0);
            }
        }
    }

    /// Records one `POST /v1/check` report.
    pub fn record_check(&self, report: &groundcite_core::CheckOutput, seconds: f64) {
        let m = &self.inner;
        if let Some(c) = m.checks.get(report.status.as_str()) {
            c.increment(1);
        }
        self.record_sentences(&report.sentences, &m.sentences_check, &m.judge_check);
        m.check_seconds.record(seconds);
    }

    fn record_sentences(
        &self,
        sentences: &[SentenceOut],
        by: &HashMap<&'static str, Counter>,
        judge: &HashMap<&'static str, Counter>,
    ) {
        for s in sentences {
            if let Some(c) = by.get(s.verdict.as_str()) {
                c.increment(1);
            }
            // A judged sentence carries one judge reason (`judge_...: "..."`).
            if let Some(c) = s
                .reasons
                .iter()
                .find_map(|r| judge.get(r.split(':').next().unwrap_or_default()))
            {
                c.increment(1);
            }
        }
    }

    /// One HTTP request: its matched route template (or
    /// [`UNMATCHED_ROUTE`]), its status and the time to its response head.
    /// The series are registered on first use (routes and statuses are a
    /// small closed set: templates, never raw paths).
    pub fn http_request(&self, route: &str, status: u16, seconds: f64) {
        let recorder = &self.inner.recorder;
        let route = Label::new("route", route.to_string());
        recorder
            .register_counter(
                &Key::from_parts(
                    "groundcite_http_requests_total",
                    vec![route.clone(), Label::new("status", status.to_string())],
                ),
                &META,
            )
            .increment(1);
        recorder
            .register_histogram(
                &Key::from_parts("groundcite_http_request_duration_seconds", vec![route]),
                &META,
            )
            .record(seconds);
    }

    /// One error response.
    pub fn http_error(&self, code: ErrorCode) {
        if let Some(c) = self.inner.http_errors.get(code.as_str()) {
            c.increment(1);
        }
    }
}

/// The audit writer's counters: `groundcite_audit_write_failures_total`
/// by reason, `groundcite_audit_records_total`, `groundcite_audit_late_total`
/// and `groundcite_audit_refused_total`.
impl AuditObserver for Metrics {
    fn lost(&self, reason: LossReason, n: u64) {
        if let Some(c) = self.inner.audit_failures.get(reason.as_str()) {
            c.increment(n);
        }
    }

    fn written(&self, n: u64) {
        self.inner.audit_records.increment(n);
    }

    fn late(&self) {
        self.inner.audit_late.increment(1);
    }

    fn refused(&self) {
        self.inner.audit_refused.increment(1);
    }
}

/// Connections and the work moved off the async workers: registered on first use.
impl Metrics {
    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.inner
            .recorder
            .register_counter(&Key::from_parts(name, labels), &META)
    }

    /// The gauge of connections being served.
    pub fn connections_open(&self) -> Gauge {
        self.inner
            .recorder
            .register_gauge(&Key::from_name("groundcite_connections_open"), &META)
    }

    /// The server stopped accepting: the connection cap is reached.
    pub fn connection_cap_reached(&self) {
        self.counter("groundcite_connection_cap_reached_total", vec![])
            .increment(1);
    }

    /// A connection was closed because a request's head was too slow to come.
    pub fn connection_timed_out(&self) {
        self.counter("groundcite_connections_timed_out_total", vec![])
            .increment(1);
    }

    /// A request's work ran on the blocking pool.
    pub fn blocking_work(&self, route: &'static str) {
        self.counter(
            "groundcite_blocking_work_total",
            vec![Label::new("route", route)],
        )
        .increment(1);
    }

    /// A check stopped before its end (deadline passed, client gone).
    pub fn check_stopped(&self) {
        self.counter("groundcite_checks_stopped_total", vec![])
            .increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_have_explicit_buckets_and_states_do_not_share() {
        let a = Metrics::new();
        let b = Metrics::new();
        // The demo: a first attempt cited [4] and was regenerated; one
        // sentence of five is contradicted.
        let answer = crate::fake::StaticAnswerer::demo().result("q");
        assert!(answer.regenerated && answer.counts.contradicted == 1);
        a.record_answer(&answer);
        let text = a.render();
        assert!(
            text.contains("groundcite_answers_total{status=\"ok\"} 1"),
            "{text}"
        );
        let coverage_bucket = format!(
            "groundcite_coverage_bucket{{le=\"{}\"}} 1",
            COVERAGE_BUCKETS
                .iter()
                .find(|&&b| b >= answer.coverage)
                .unwrap()
        );
        assert!(
            text.contains(&coverage_bucket),
            "{coverage_bucket} in {text}"
        );
        assert!(
            text.contains("groundcite_stage_seconds_count{stage=\"total\"} 1"),
            "{text}"
        );
        assert!(text.contains("groundcite_regenerations_total 1"));
        assert!(text.contains("groundcite_invalid_id_answers_total 1"));
        assert!(
            text.contains(
                "groundcite_sentences_total{verdict=\"contradicted\",endpoint=\"ask\"} 1"
            ),
            "{text}"
        );
        assert!(
            b.render()
                .contains("groundcite_answers_total{status=\"ok\"} 0")
        );
    }

    /// The judge's replies, in order: the first supports, the second is not JSON.
    struct TwoReplies;

    impl groundcite_verify::PairJudge for TwoReplies {
        fn judge(
            &self,
            requests: &[groundcite_verify::JudgeRequest],
        ) -> Vec<Result<String, String>> {
            assert_eq!(requests.len(), 2, "both cited claims are put to the judge");
            vec![
                Ok(r#"{"verdict": "supported", "quote": "", "explanation": "Stated."}"#.into()),
                Ok("I cannot tell.".into()),
            ]
        }
    }

    #[test]
    fn the_judges_outcomes_are_counted_per_endpoint() {
        let passages = [groundcite_core::Passage {
            id: "p".into(),
            text: "Expense claims must be filed within 60 days of the expense.".into(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }];
        let verifier = groundcite_verify::LlmVerifier::new(
            groundcite_verify::LexicalVerifier::default(),
            TwoReplies,
            groundcite_verify::JudgeLimits::default(),
        );
        let report = groundcite_core::check(
            None,
            &passages,
            "Expense claims are due within 60 days [1]. They are filed within 60 days of the expense [1]. Claims are due within 90 days [1].",
            &groundcite_core::CheckConfig::default(),
            &verifier,
        );
        let m = Metrics::new();
        m.record_check(&report, 0.01);
        let text = m.render();
        for (outcome, n) in [
            ("supported", 1),
            ("unavailable", 1),
            ("contradicted", 0),
            ("unsupported", 0),
        ] {
            let series = format!(
                "groundcite_judge_verdicts_total{{outcome=\"{outcome}\",endpoint=\"check\"}} {n}"
            );
            assert!(text.contains(&series), "{series} in {text}");
        }
        // The contradicted claim (90 vs 60 days) was never sent: the rules' verdict wins.
        assert!(
            text.contains(
                "groundcite_sentences_total{verdict=\"contradicted\",endpoint=\"check\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "groundcite_judge_verdicts_total{outcome=\"supported\",endpoint=\"ask\"} 0"
            ),
            "{text}"
        );
    }
}
