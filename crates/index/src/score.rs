//! Score normalisation. Pure: no I/O.
//!
//! See the crate docs for the reasoning. The normalised score of a hit is its
//! IDF-weighted coverage of the query terms:
//!
//! ```text
//! score(hit) = Σ_{t ∈ Q, t ∈ hit} idf(t) / Σ_{t ∈ Q} idf(t)
//! idf(t)     = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))      (BM25's idf)
//! ```
//!
//! A query term that never occurs in the corpus has the largest idf
//! (`ln(2N + 2)`), so a question about something the corpus does not know
//! ("stipend", "dental") is pulled down even when its common words match.

/// One analysed query term with its inverse document frequency.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    /// The term as the analyzer produced it (as indexed).
    pub term: String,
    /// Its BM25 inverse document frequency over the index ([`idf`]).
    pub idf: f32,
}

/// BM25's idf (the one tantivy uses), for `df` documents out of `n`.
pub fn idf(df: u64, n: u64) -> f32 {
    let df = df as f32;
    let n = n.max(df as u64) as f32;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The IDF-weighted fraction of the query's terms present in the hit.
pub fn coverage(terms: &[QueryTerm], present: impl Fn(&str) -> bool) -> f32 {
    let total: f32 = terms.iter().map(|t| t.idf).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let got: f32 = terms
        .iter()
        .filter(|t| present(&t.term))
        .map(|t| t.idf)
        .sum();
    (got / total).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_weights_rare_terms() {
        let terms = vec![
            QueryTerm {
                term: "leav".into(),
                idf: idf(100, 1000),
            },
            QueryTerm {
                term: "stipend".into(),
                idf: idf(0, 1000),
            },
        ];
        let c = coverage(&terms, |t| t == "leav");
        assert!(c > 0.0 && c < 0.4, "{c}");
        assert_eq!(coverage(&terms, |_| true), 1.0);
        assert_eq!(coverage(&[], |_| true), 0.0);
    }
}
