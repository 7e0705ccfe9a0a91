//! API keys that never show up in logs, errors or `Debug` output.

use std::fmt;

use crate::LlmError;

/// A secret string (an API key). `Debug` and `Display` print `"***"`; the
/// value is only reachable through [`Secret::expose`], which the HTTP
/// backends call when they set the auth header.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// Reads the secret from the environment variable `var`.
    ///
    /// Returns `Ok(None)` when the variable is unset or empty (after
    /// trimming whitespace) and `Config` when it is not valid Unicode.
    pub fn from_env(var: &str) -> Result<Option<Self>, LlmError> {
        match std::env::var(var) {
            Ok(value) if value.trim().is_empty() => Ok(None),
            Ok(value) => Ok(Some(Secret(value.trim().to_string()))),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(LlmError::Config(format!(
                "the environment variable {var} is not valid Unicode"
            ))),
        }
    }

    /// Reads the secret from `var`, failing with
    /// [`LlmError::MissingApiKey`] naming the variable when it is unset.
    pub fn require_env(var: &str) -> Result<Self, LlmError> {
        Secret::from_env(var)?.ok_or_else(|| LlmError::MissingApiKey {
            var: var.to_string(),
        })
    }

    /// The secret value. Only put it where it must go (a request header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}
