//! Every threshold of the check in one place, with documented defaults.

use serde::{Deserialize, Serialize};

pub use crate::finalize::{BadIdPolicy, LowCoveragePolicy, UnsupportedPolicy};
use crate::passage::AssemblyConfig;
use crate::refusal::RefusalForm;

/// The configuration of the contract and its checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckConfig {
    /// `grounded` needs at least this citation coverage. Default 0.9 (the
    /// citation contract's threshold).
    pub grounded_threshold: f64,
    /// The refusal form the prompt asks for; both are always recognised.
    /// Default `sentence`.
    pub refusal_form: RefusalForm,
    /// Regenerate once, with a corrective message, when an answer cites
    /// ids never sent. Default true.
    pub regenerate_once: bool,
    /// What to do when the last attempt still cites ids never sent.
    /// Default `refuse`.
    pub bad_id_policy: BadIdPolicy,
    /// Regenerate once, with a corrective message quoting the uncited
    /// factual sentences, when an answer's citation coverage is under
    /// `grounded_threshold`. Default false (an uncited answer is served,
    /// reported not grounded).
    pub regenerate_on_low_coverage: bool,
    /// What to serve when coverage is still low after that regeneration:
    /// `flag` (serve it, not grounded) or `refuse`. Default `flag`.
    pub low_coverage_policy: LowCoveragePolicy,
    /// What to serve when a sentence is contradicted or unsupported.
    /// Default `flag`.
    pub unsupported_policy: UnsupportedPolicy,
    /// Run support checking. Default true.
    pub verify_support: bool,
    /// Which verifier checks support: `lexical` (default), or `semantic`
    /// (the lexical rules, then sentence similarity for sentences they
    /// find only words missing from; needs `model_dir`). Measured on
    /// paraphrase-dev's held-out half the semantic verifier does not yet
    /// beat the lexical one (BENCHMARKS.md), so it is opt-in.
    pub verifier: groundcite_verify::VerifierKind,
    /// Length of a source quote excerpt, in characters. Default 160.
    pub quote_max_chars: usize,
    /// Context assembly limits.
    pub assembly: AssemblyConfig,
    /// The most one check reads (answer, markers, sentences, passages).
    pub limits: crate::limits::Limits,
    /// Support checking thresholds.
    pub support: groundcite_verify::SupportConfig,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            grounded_threshold: 0.9,
            refusal_form: RefusalForm::Sentence,
            regenerate_once: true,
            bad_id_policy: BadIdPolicy::Refuse,
            regenerate_on_low_coverage: false,
            low_coverage_policy: LowCoveragePolicy::Flag,
            unsupported_policy: UnsupportedPolicy::Flag,
            verify_support: true,
            verifier: groundcite_verify::VerifierKind::Lexical,
            quote_max_chars: 160,
            assembly: AssemblyConfig::default(),
            limits: crate::limits::Limits::default(),
            support: groundcite_verify::SupportConfig::default(),
        }
    }
}
