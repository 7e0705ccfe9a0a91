//! The retrieval gate: no good context, no answer. If the best
//! retrieval score is under the threshold, the model is not called.

/// Should the model be called for these retrieval scores? True when there
/// is at least one score and the best reaches `min_best`.
pub fn should_answer(scores: &[f32], min_best: f32) -> bool {
    best(scores).is_some_and(|b| b >= min_best)
}

/// The best score, ignoring NaN.
pub fn best(scores: &[f32]) -> Option<f32> {
    scores
        .iter()
        .copied()
        .filter(|s| !s.is_nan())
        .reduce(f32::max)
}
