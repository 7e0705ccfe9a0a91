//! The full check of one answer: structure, support, resolution, and the
//! report's public JSON shape.
//!
//! **API boundary**: [`CheckOutput`] is a public contract read by clients,
//! the service and our own measurements. Field names documented here are
//! never renamed; fields may be added.
//!
//! ```text
//! {
//!   "id": "d02",                       // the case id, when checking cases
//!   "status": "ok",                    // ok | unverified | no_evidence (do all markers resolve?)
//!   "supported": false,                // the support claim: coverage >= threshold, no contradicted/unsupported sentence, status not unverified
//!   "grounded": false,                 // supported, and (for an answer to a question) judged to answer it
//!   "cited": [1],                      // every id cited, sorted, unique
//!   "bad_ids": [],                     // cited ids never sent
//!   "unmarked": [{"text", "start", "end"}],   // factual sentences without a marker
//!   "coverage": 1.0,                   // cited factual sentences / factual sentences (1.0 when none)
//!   "sentences": [{
//!     "text", "start", "end",          // byte span into the answer
//!     "kind": "prose",                 // prose | list_item | heading | table_row
//!     "citations": [1],                // ids this sentence cites
//!     "markers": [{"start", "end", "ids"}],  // its markers: byte spans into the answer, ids named
//!     "factual": true, "reason": "cited",
//!     "verdict": "contradicted",       // supported | contradicted | unsupported | uncited | not_factual
//!     "message": "The source says Wednesday, not Friday.",  // plain words ("" when not factual)
//!     "reasons": ["number_mismatch: \"Friday\" vs \"Wednesday\""],
//!     "evidence": {"passage": 1, "quote": "…", "start": 120, "end": 190} | null,
//!     "suggested": [],                 // passages that would support it (citation repair)
//!     "idle_citations": []             // cited passages that support nothing in it
//!   }],
//!   "verifier": "lexical",             // lexical | semantic | llm | null (no support check ran)
//!   "sources": [{"label", "url", "quote", "quote_passage", "quote_start", "quote_end", "passages", "markers"}],
//!   "refusal": null | {"form": "sentence" | "sentinel", "needed": "…" | null},
//!   "counts": {"sentences", "factual", "supported", "contradicted", "unsupported", "uncited"},
//!   "malformed_markers": 0
//! }
//! ```

use std::fmt::Write as _;

use groundcite_verify::{Claim, Judgement, Verdict, Verifier, VerifierKind};
use serde::Serialize;

use crate::config::CheckConfig;
use crate::factual::FactualReason;
use crate::passage::Passage;
use crate::plain;
use crate::refusal::RefusalForm;
use crate::resolve::{self, QuoteHint, Source};
use crate::sentence::SentenceKind;
use crate::validate::{Report, Status};

/// The verdict of one sentence, as reported.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SentenceVerdict {
    /// Stated in a passage it cites.
    Supported,
    /// Contradicted by a passage it cites.
    Contradicted,
    /// Not stated in any passage it cites, or every id it cites was never sent.
    Unsupported,
    /// Factual, but carries no marker.
    Uncited,
    /// States no fact (a question, a heading, the refusal, a connective); not checked.
    NotFactual,
}

impl SentenceVerdict {
    /// The verdict's name in the JSON report (`supported`, `not_factual`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SentenceVerdict::Supported => "supported",
            SentenceVerdict::Contradicted => "contradicted",
            SentenceVerdict::Unsupported => "unsupported",
            SentenceVerdict::Uncited => "uncited",
            SentenceVerdict::NotFactual => "not_factual",
        }
    }

    /// Contradicted or unsupported: never present it as verified.
    pub fn is_flagged(self) -> bool {
        matches!(
            self,
            SentenceVerdict::Contradicted | SentenceVerdict::Unsupported
        )
    }
}

/// A sentence of the answer and its byte span in it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpanText {
    /// The sentence, `answer[start..end]`.
    pub text: String,
    /// Byte offset of the sentence's start in the answer.
    pub start: usize,
    /// Byte offset just past the sentence's end in the answer.
    pub end: usize,
}

/// One citation marker of a sentence (`[2]`, `[1, 3]`, `[2-4]`): its byte
/// span in the answer and the ids it names, in the marker grammar's order
/// (ids never sent included). A reader renders chips from these and never
/// parses markers again.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MarkerOut {
    /// Byte offset of the marker's `[` in the answer.
    pub start: usize,
    /// Byte offset just past the marker's `]` in the answer.
    pub end: usize,
    /// The ids the marker names, ranges expanded, ids never sent included.
    pub ids: Vec<u64>,
}

impl MarkerOut {
    /// The markers of `markers` within `span`, as reported.
    pub fn within(
        markers: &crate::marker::Markers,
        found: &[crate::marker::Marker],
        span: std::ops::Range<usize>,
    ) -> Vec<MarkerOut> {
        found
            .iter()
            .filter(|m| m.start >= span.start && m.end <= span.end)
            .map(|m| MarkerOut {
                start: m.start,
                end: m.end,
                ids: markers.ids_of(m).collect(),
            })
            .collect()
    }
}

/// The span of a passage that decided a sentence's verdict.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceOut {
    /// The passage's number, 1-based (`[k]` is the k-th passage sent).
    pub passage: usize,
    /// The evidence, `passage_text[start..end]`.
    pub quote: String,
    /// Byte offset of the quote's start in the passage's text.
    pub start: usize,
    /// Byte offset just past the quote's end in the passage's text.
    pub end: usize,
}

/// One sentence of the answer, as reported: its span, markers and verdict.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceOut {
    /// The sentence, `answer[start..end]`.
    pub text: String,
    /// Byte offset of the sentence's start in the answer.
    pub start: usize,
    /// Byte offset just past the sentence's end in the answer.
    pub end: usize,
    /// Prose, list item, heading or table row.
    pub kind: SentenceKind,
    /// Every id the sentence cites, sorted, unique, ids never sent included.
    pub citations: Vec<u64>,
    /// The sentence's markers, byte spans into the answer.
    pub markers: Vec<MarkerOut>,
    /// The sentence makes a claim, so its support is checked.
    pub factual: bool,
    /// Why the sentence is or is not factual.
    pub reason: FactualReason,
    /// The support verdict.
    pub verdict: SentenceVerdict,
    /// The verdict in plain words, what a person reads, the correction
    /// first ("The source says 13 days, not 15 days."); empty when the
    /// sentence states no fact. `reasons` keeps the machine form.
    pub message: String,
    /// The verdict's reasons in machine form (`number_mismatch: "14 days" vs "30 days"`,
    /// `negation`, `invalid_citation: [9]`, ...).
    pub reasons: Vec<String>,
    /// The span of a passage that decided the verdict; `None` when none did.
    pub evidence: Option<EvidenceOut>,
    /// Passages (1-based) that would support the sentence, for citation repair.
    pub suggested: Vec<usize>,
    /// Cited passages (1-based) that support nothing in the sentence.
    pub idle_citations: Vec<usize>,
}

/// A recognised refusal, as reported.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusalOut {
    /// The refusal sentence or the `NOT_IN_SOURCES:` sentinel.
    pub form: RefusalForm,
    /// The text after `NOT_IN_SOURCES:`; `None` for the refusal sentence or an empty sentinel.
    pub needed: Option<String>,
}

/// How many sentences the answer has, and of each verdict.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    /// Sentences of the answer.
    pub sentences: usize,
    /// Factual sentences.
    pub factual: usize,
    /// Sentences judged supported.
    pub supported: usize,
    /// Sentences judged contradicted.
    pub contradicted: usize,
    /// Sentences judged unsupported.
    pub unsupported: usize,
    /// Factual sentences without a marker.
    pub uncited: usize,
}

/// What the check found in an answer: status, grounding, citations,
/// sentences and sources. The part of the report that an answer served by
/// the engine shares field for field (`groundcite_engine::AskResult`
/// flattens it next to [`Counts`]), so the two JSON shapes cannot drift.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Findings {
    /// Whether every marker resolves: `ok`, `unverified` (a marker names a passage never sent,
    /// or is malformed) or `no_evidence` (the answer is the refusal).
    pub status: Status,
    /// The support claim: the cited sentences are stated in the sources.
    /// Every marker resolves, no factual sentence is contradicted or
    /// unsupported by the passage it cites, and at least
    /// `grounded_threshold` of the factual sentences carry a citation.
    pub supported: bool,
    /// The claim a reader trusts. For a check of an answer on its own it
    /// is [`Findings::supported`]; for an answer served to a question
    /// (`groundcite_engine::AskResult`) it also requires that the answer
    /// was judged to answer the question (`answers_question` `yes`).
    pub grounded: bool,
    /// Every id cited, sorted, unique.
    pub cited: Vec<u64>,
    /// Cited ids never sent (outside `1..=n` for `n` passages), sorted, unique: a hard failure.
    pub bad_ids: Vec<u64>,
    /// The factual sentences without a marker.
    pub unmarked: Vec<SpanText>,
    /// Cited factual sentences / factual sentences, in `0.0..=1.0` (1.0 when there are none).
    pub coverage: f64,
    /// One entry per sentence of the answer, in order.
    pub sentences: Vec<SentenceOut>,
    /// One entry per document cited, with the quote that supports it.
    pub sources: Vec<Source>,
    /// Which verifier judged the sentences (`lexical`, `semantic`, `llm`); `None` (`null`) when
    /// no support check ran (a refusal before any answer, support checking off).
    pub verifier: Option<VerifierKind>,
}

impl Findings {
    /// Empties every source url that is not a safe link
    /// ([`crate::link::sanitize`]).
    pub fn sanitize_links(&mut self) {
        for source in &mut self.sources {
            crate::link::sanitize(&mut source.url);
        }
    }

    /// The findings of an answer that claims nothing (a refusal): no
    /// sentence, nothing cited, fully covered, nothing unsupported.
    pub fn nothing_claimed() -> Findings {
        Findings {
            status: Status::NoEvidence,
            supported: true,
            grounded: true,
            cited: Vec::new(),
            bad_ids: Vec::new(),
            unmarked: Vec::new(),
            coverage: 1.0,
            sentences: Vec::new(),
            sources: Vec::new(),
            verifier: None,
        }
    }
}

/// The full report of one answer (see the module docs for the JSON shape).
///
/// The [`Findings`] are flattened into the JSON object, and reachable as
/// fields of the report (`output.status`) through `Deref`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOutput {
    /// The case id when checking cases; `None` (omitted from the JSON) otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Status, grounding, citations, sentences and sources.
    #[serde(flatten)]
    pub findings: Findings,
    /// The refusal the answer is; `None` when it is not one.
    pub refusal: Option<RefusalOut>,
    /// How many sentences the answer has, and of each verdict.
    pub counts: Counts,
    /// Markers with a reversed or too-wide range, such as `[9-2]`.
    pub malformed_markers: usize,
}

impl std::ops::Deref for CheckOutput {
    type Target = Findings;

    fn deref(&self) -> &Findings {
        &self.findings
    }
}

impl std::ops::DerefMut for CheckOutput {
    fn deref_mut(&mut self) -> &mut Findings {
        &mut self.findings
    }
}

/// Checks one answer: structure, then support of every factual sentence
/// against the passages it cites, then resolution into sources.
/// `passages` are the passages sent, in order (`[k]` is `passages[k-1]`).
pub fn check(
    question: Option<&str>,
    passages: &[Passage],
    answer: &str,
    config: &CheckConfig,
    verifier: &dyn Verifier,
) -> CheckOutput {
    let report = Report::check(answer, passages.len());
    check_report(question, passages, answer, &report, config, verifier)
}

/// As [`check`], giving up when `stop()` turns true: `None` then. `stop` is asked before the
/// support check and between sentences (within one sentence's work), so a caller whose deadline
/// passed or whose client left does not keep a core busy for a result nobody reads.
pub fn check_until(
    question: Option<&str>,
    passages: &[Passage],
    answer: &str,
    config: &CheckConfig,
    verifier: &dyn Verifier,
    stop: &dyn Fn() -> bool,
) -> Option<CheckOutput> {
    let report = Report::check(answer, passages.len());
    check_report_until(question, passages, answer, &report, config, verifier, stop)
}

/// As [`check`], over a structural report already computed.
pub fn check_report(
    question: Option<&str>,
    passages: &[Passage],
    answer: &str,
    report: &Report,
    config: &CheckConfig,
    verifier: &dyn Verifier,
) -> CheckOutput {
    check_report_until(
        question,
        passages,
        answer,
        report,
        config,
        verifier,
        &|| false,
    )
    .expect("a check that never stops finishes")
}

/// As [`check_report`], giving up when `stop()` turns true ([`check_until`]).
pub fn check_report_until(
    question: Option<&str>,
    passages: &[Passage],
    answer: &str,
    report: &Report,
    config: &CheckConfig,
    verifier: &dyn Verifier,
    stop: &dyn Fn() -> bool,
) -> Option<CheckOutput> {
    if stop() {
        return None;
    }
    let texts: Vec<&str> = passages.iter().map(|p| p.text.as_str()).collect();

    // Every id each sentence cites, and the valid ones (the claims' citations).
    let mut cites: Vec<Vec<u64>> = report
        .sentences
        .iter()
        .map(|s| report.citations_of(s))
        .collect();
    let n = passages.len() as u64;
    // The valid ids of sentence `i` are `valid[ranges[i].0..ranges[i].1]`.
    let mut valid: Vec<usize> = Vec::with_capacity(cites.iter().map(Vec::len).sum());
    let ranges: Vec<(usize, usize)> = cites
        .iter()
        .map(|ids| {
            let from = valid.len();
            valid.extend(
                ids.iter()
                    .filter(|&&id| id >= 1 && id <= n)
                    .map(|&id| id as usize),
            );
            (from, valid.len())
        })
        .collect();
    let citations = |i: usize| &valid[ranges[i].0..ranges[i].1];
    let factual_idx: Vec<usize> = (0..report.sentences.len())
        .filter(|&i| report.sentences[i].factual())
        .collect();
    let judgements: Vec<Judgement> =
        if config.verify_support && report.refusal.is_none() && !factual_idx.is_empty() {
            let claims: Vec<Claim<'_>> = factual_idx
                .iter()
                .map(|&i| {
                    let s = &report.sentences[i];
                    Claim {
                        text: &answer[s.start..s.end],
                        cited: citations(i),
                    }
                })
                .collect();
            // The markers core parsed, relative to each claim: support does not look again.
            let markers: Vec<Vec<std::ops::Range<usize>>> = factual_idx
                .iter()
                .map(|&i| {
                    let s = &report.sentences[i];
                    let (from, to) = s.markers;
                    report.markers.markers[from as usize..to as usize]
                        .iter()
                        .filter(|m| m.start >= s.start && m.end <= s.end)
                        .map(|m| m.start - s.start..m.end - s.start)
                        .collect()
                })
                .collect();
            verifier.verify_until(question, &texts, &claims, Some(&markers), stop)?
        } else {
            Vec::new()
        };

    let mut counts = Counts {
        sentences: report.sentences.len(),
        ..Counts::default()
    };
    let mut hints: Vec<QuoteHint> = Vec::new();
    let mut sentences = Vec::with_capacity(report.sentences.len());
    let mut judged = judgements.into_iter();
    for (i, s) in report.sentences.iter().enumerate() {
        let factual = s.factual();
        // One judgement per factual sentence, in order; none at all when
        // support checking is off or the answer is a refusal.
        let judgement = if factual { judged.next() } else { None };
        let mut reasons = Vec::new();
        let mut bad_ids: Vec<u64> = Vec::new();
        let (verdict, evidence, suggested, idle) = if !factual {
            (SentenceVerdict::NotFactual, None, Vec::new(), Vec::new())
        } else {
            counts.factual += 1;
            bad_ids.extend(cites[i].iter().filter(|&&id| id == 0 || id > n));
            if !bad_ids.is_empty() {
                let bad: Vec<String> = bad_ids.iter().map(u64::to_string).collect();
                reasons.push(format!("invalid_citation: [{}]", bad.join(", ")));
            }
            match &judgement {
                Some(j) => {
                    reasons.extend(j.reasons.iter().map(|r| {
                        // Sized once: a reason is written in many small pieces.
                        let mut s = String::with_capacity(64);
                        let _ = write!(s, "{r}");
                        s
                    }));
                    let verdict = if !s.has_marker() {
                        SentenceVerdict::Uncited
                    } else if citations(i).is_empty() {
                        SentenceVerdict::Unsupported
                    } else {
                        match j.verdict {
                            Verdict::Supported => SentenceVerdict::Supported,
                            Verdict::Contradicted => SentenceVerdict::Contradicted,
                            Verdict::Unsupported => SentenceVerdict::Unsupported,
                        }
                    };
                    let evidence = j.evidence.as_ref().and_then(|e| {
                        let text = texts.get(e.passage.checked_sub(1)?)?;
                        text.get(e.start..e.end)?;
                        // A heading line is not part of the words behind
                        // the citation.
                        let start = resolve::skip_heading_lines(text, e.start, e.end);
                        Some(EvidenceOut {
                            passage: e.passage,
                            quote: text[start..e.end].to_string(),
                            start,
                            end: e.end,
                        })
                    });
                    if let Some(e) = &evidence
                        && citations(i).contains(&e.passage)
                        && verdict == SentenceVerdict::Supported
                    {
                        hints.push(QuoteHint {
                            passage: e.passage,
                            start: e.start,
                            end: e.end,
                        });
                    }
                    (
                        verdict,
                        evidence,
                        j.suggested.clone(),
                        j.idle_citations.clone(),
                    )
                }
                None if !s.has_marker() => (SentenceVerdict::Uncited, None, Vec::new(), Vec::new()),
                // Every marker names a passage never sent: nothing supports it.
                None if citations(i).is_empty() => {
                    (SentenceVerdict::Unsupported, None, Vec::new(), Vec::new())
                }
                // Support checking is off: a resolvable marker is taken at its word.
                None => (SentenceVerdict::Supported, None, Vec::new(), Vec::new()),
            }
        };
        match verdict {
            SentenceVerdict::Supported => counts.supported += 1,
            SentenceVerdict::Contradicted => counts.contradicted += 1,
            SentenceVerdict::Unsupported => counts.unsupported += 1,
            SentenceVerdict::Uncited => counts.uncited += 1,
            SentenceVerdict::NotFactual => {}
        }
        sentences.push(SentenceOut {
            text: answer[s.start..s.end].to_string(),
            start: s.start,
            end: s.end,
            kind: s.kind,
            citations: std::mem::take(&mut cites[i]),
            markers: MarkerOut::within(
                &report.markers,
                &report.markers.markers[s.markers.0 as usize..s.markers.1 as usize],
                s.start..s.end,
            ),
            factual,
            reason: s.reason,
            verdict,
            message: plain::note(&plain::NoteInput {
                verdict,
                reasons: judgement.as_ref().map_or(&[], |j| &j.reasons[..]),
                bad_ids: &bad_ids,
                cites_sent: !citations(i).is_empty(),
                judged: judgement.is_some(),
                evidence_passage: evidence.as_ref().map(|e| e.passage),
                suggested: &suggested,
            }),
            reasons,
            evidence,
            suggested,
            idle_citations: idle,
        });
    }

    let sources = resolve::resolve(report, passages, &hints, config.quote_max_chars);
    let supported = report.status != Status::Unverified
        && report.coverage >= config.grounded_threshold
        && counts.contradicted == 0
        && counts.unsupported == 0;
    Some(CheckOutput {
        id: None,
        findings: Findings {
            status: report.status,
            supported,
            grounded: supported,
            cited: report.cited.clone(),
            bad_ids: report.bad_ids.clone(),
            unmarked: report
                .unmarked()
                .map(|s| SpanText {
                    text: answer[s.start..s.end].to_string(),
                    start: s.start,
                    end: s.end,
                })
                .collect(),
            coverage: report.coverage,
            sentences,
            sources,
            verifier: config.verify_support.then(|| verifier.kind()),
        },
        refusal: report.refusal.map(|r| RefusalOut {
            form: r.form,
            needed: r.needed(answer).map(str::to_string),
        }),
        counts,
        malformed_markers: report.malformed,
    })
}
