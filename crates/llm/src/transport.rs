//! The transport settings both HTTP backends share: timeouts and the retry
//! policy, read from the backend's section of `groundcite.toml`.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::LlmError;
use crate::http::HttpCore;
use crate::retry::RetryPolicy;

/// How an HTTP backend talks to its server: timeouts and retries.
///
/// [`OpenAiConfig`](crate::OpenAiConfig) and
/// [`AnthropicConfig`](crate::AnthropicConfig) embed it flattened, so its
/// keys sit directly in their TOML sections (`[openai] timeout_secs = 30`).
/// Every field has a default, so any subset may be given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransportConfig {
    /// Seconds to wait for a complete answer; when streaming, for the first
    /// chunk, then for each next chunk. Default `60`.
    pub timeout_secs: f64,
    /// Seconds to wait for the TCP/TLS connection. Default `10`.
    pub connect_timeout_secs: f64,
    /// Retries after the first attempt, for retryable failures (429, 5xx
    /// including Anthropic's 529 overloaded, connection errors; see the
    /// crate docs). Default `2`.
    pub max_retries: u32,
    /// The first backoff in milliseconds; doubles per retry. Default `500`.
    pub backoff_ms: u64,
    /// The longest backoff in milliseconds. Default `8000`.
    pub max_backoff_ms: u64,
    /// The longest `Retry-After` (seconds) the client waits; a longer one
    /// fails at once with `RateLimited`. Default `30`.
    pub max_retry_after_secs: f64,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            timeout_secs: 60.0,
            connect_timeout_secs: 10.0,
            max_retries: 2,
            backoff_ms: 500,
            max_backoff_ms: 8000,
            max_retry_after_secs: 30.0,
        }
    }
}

impl TransportConfig {
    /// The retry policy these settings describe; `Config` when
    /// `max_retry_after_secs` is negative or not a number.
    pub fn retry_policy(&self) -> Result<RetryPolicy, LlmError> {
        let max_retry_after_secs = self.max_retry_after_secs;
        if !(max_retry_after_secs.is_finite() && max_retry_after_secs >= 0.0) {
            return Err(LlmError::Config(format!(
                "max_retry_after_secs must be a number of seconds >= 0, got {max_retry_after_secs}"
            )));
        }
        Ok(RetryPolicy {
            max_retries: self.max_retries,
            backoff: Duration::from_millis(self.backoff_ms),
            max_backoff: Duration::from_millis(self.max_backoff_ms.max(self.backoff_ms)),
            max_retry_after: Duration::from_secs_f64(max_retry_after_secs.min(1e9)),
        })
    }

    /// The endpoint's client with these timeouts and retries; `Config` for
    /// an invalid setting. `headers` must already hold the auth header
    /// (marked sensitive).
    pub(crate) fn core(
        &self,
        url: String,
        loopback: bool,
        headers: HeaderMap,
    ) -> Result<HttpCore, LlmError> {
        HttpCore::new(
            url,
            loopback,
            headers,
            seconds("timeout_secs", self.timeout_secs)?,
            seconds("connect_timeout_secs", self.connect_timeout_secs)?,
            self.retry_policy()?,
        )
    }
}

/// Converts a configured number of seconds into a duration.
fn seconds(name: &str, value: f64) -> Result<Duration, LlmError> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(LlmError::Config(format!(
            "{name} must be a positive number of seconds, got {value}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{AnthropicConfig, OpenAiConfig, TransportConfig};

    /// The keys of a section written before the transport settings were
    /// shared: the same flat keys, read into `transport`, and written back
    /// flat.
    #[test]
    fn transport_keys_stay_flat_in_both_sections() {
        let section = json!({
            "model": "m",
            "timeout_secs": 12.5,
            "connect_timeout_secs": 3,
            "max_retries": 4,
            "backoff_ms": 100,
            "max_backoff_ms": 900,
            "max_retry_after_secs": 7,
        });
        let expected = TransportConfig {
            timeout_secs: 12.5,
            connect_timeout_secs: 3.0,
            max_retries: 4,
            backoff_ms: 100,
            max_backoff_ms: 900,
            max_retry_after_secs: 7.0,
        };
        let openai: OpenAiConfig = serde_json::from_value(section.clone()).unwrap();
        let anthropic: AnthropicConfig = serde_json::from_value(section).unwrap();
        assert_eq!(
            (&openai.model, &openai.transport),
            (&"m".to_string(), &expected)
        );
        assert_eq!(anthropic.transport, expected);
        for written in [
            serde_json::to_value(&openai).unwrap(),
            serde_json::to_value(&anthropic).unwrap(),
        ] {
            assert!(written.get("transport").is_none(), "{written}");
            assert_eq!(written["max_retries"], 4, "{written}");
            assert_eq!(written["timeout_secs"], 12.5, "{written}");
        }
    }

    #[test]
    fn invalid_durations_are_config_errors() {
        for transport in [
            TransportConfig {
                timeout_secs: 0.0,
                ..TransportConfig::default()
            },
            TransportConfig {
                connect_timeout_secs: f64::NAN,
                ..TransportConfig::default()
            },
            TransportConfig {
                max_retry_after_secs: -1.0,
                ..TransportConfig::default()
            },
        ] {
            let result = transport.core(
                "http://127.0.0.1:1/v1/messages".into(),
                true,
                Default::default(),
            );
            assert!(matches!(result, Err(crate::LlmError::Config(_))));
        }
    }
}
