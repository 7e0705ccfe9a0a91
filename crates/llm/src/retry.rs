//! When and how long to wait before trying a request again.

use std::time::{Duration, SystemTime};

/// The retry policy of the HTTP backends; see the crate docs for the table
/// of what is retried.
///
/// Backoff is deterministic (no random jitter): retry `i` (0-based) waits
/// `backoff * 2^i`, capped at `max_backoff`, unless the server sent
/// `Retry-After` (or `retry-after-ms`), in which case exactly that long is
/// waited. A `Retry-After` longer than `max_retry_after` is not waited for:
/// the error is returned at once so the caller can tell the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so at most `max_retries + 1`
    /// requests).
    pub max_retries: u32,
    /// The first backoff.
    pub backoff: Duration,
    /// The longest backoff.
    pub max_backoff: Duration,
    /// The longest `Retry-After` the client agrees to wait.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry `retry_index` (0 for the first retry) when
    /// the server gave no `Retry-After`.
    pub fn backoff_for(&self, retry_index: u32) -> Duration {
        let factor = 1u32.checked_shl(retry_index.min(31)).unwrap_or(u32::MAX);
        self.backoff
            .checked_mul(factor)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff)
    }
}

/// Parses a `Retry-After` header value: delta-seconds (`"120"`, fractional
/// values accepted) or an HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`,
/// measured from `now`; a date in the past means no wait).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(1),
        };
        let waits: Vec<u128> = (0..5).map(|i| policy.backoff_for(i).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
        assert_eq!(policy.backoff_for(40), Duration::from_millis(500));
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after(" 0.5 ", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
