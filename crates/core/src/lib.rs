//! # groundcite-core: the citation contract
//!
//! Pure functions over borrowed text: no I/O, no async, no clock, no global
//! state. Everything an answer goes through between the retriever and the
//! reader lives here:
//!
//! | step | module | what it does |
//! |---|---|---|
//! | context assembly | [`passage`] | trim ranked passages to a token budget, then number them densely `[1]..[n]` |
//! | prompt contract | [`prompt`] | the rules of the citation contract and the refusal form, rendered for any model |
//! | markers | [`marker`] | `[2]`, `[1][3]`, `[1, 3]`, `[2-4]` with byte spans |
//! | sentences | [`sentence`] | segmentation with byte spans, right on real answers |
//! | factual | [`factual`] | which sentences claim something, and why |
//! | validation | [`validate`] | cited ids, bad ids, unmarked sentences, coverage, status |
//! | refusal | [`refusal`] | the exact sentence and the `NOT_IN_SOURCES:` sentinel |
//! | resolution | [`resolve`] | markers → sources (label, url, quote), one per document |
//! | structured answers | [`structured`] | the JSON schema whose citation ids are the passages sent; JSON replies (whole or streamed) rendered to marker text |
//! | policy | [`finalize`] | bad ids: regenerate once, then refuse / strip / drop; flagged sentences: flag / drop / refuse |
//!
//! ```
//! use groundcite_core::validate::{Report, Status};
//!
//! let report = Report::check("Refunds take 14 days [7]. Reimbursements settle in 14 days.", 3);
//! assert_eq!(report.cited, [7]);
//! assert_eq!(report.bad_ids, [7]);
//! assert_eq!(report.status, Status::Unverified);
//! assert_eq!(report.unmarked().count(), 1);
//! ```
//!
//! **Architecture invariant**: offsets are truth. Every sentence, marker
//! and quote carries byte spans into the text it came from, and the spans
//! always slice that text on character boundaries.

pub mod case;
pub mod check;
pub mod config;
pub mod factual;
pub mod finalize;
pub mod gate;
pub mod limits;
pub mod link;
pub mod marker;
pub mod passage;
pub mod plain;
pub mod prompt;
pub mod refusal;
pub mod resolve;
pub mod sentence;
pub mod stream;
pub mod structured;
pub mod unit;
pub mod validate;

pub use check::{CheckOutput, Findings, SentenceVerdict, check};
pub use config::CheckConfig;
pub use passage::{Context, Passage};
pub use refusal::{REFUSAL_SENTENCE, RefusalForm, SENTINEL_PREFIX};
pub use validate::{Report, Status};
