//! The one audit record, written and read back.

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One audited answer or check: what the service writes, what the stores
/// keep and what the readers return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Insertion order, assigned by the store (0 until stored).
    pub id: i64,
    /// The `x-request-id` of the HTTP request.
    pub request_id: String,
    /// RFC 3339, UTC, milliseconds: `2026-11-30T14:50:07.123Z`.
    pub ts: String,
    /// `ask` or `check`.
    pub kind: String,
    pub question: Option<String>,
    /// `ok`, `unverified` or `no_evidence`.
    pub status: String,
    pub grounded: bool,
    /// The refusal's cause (`gate`, `sentinel`, `validation`) for answers;
    /// the refusal form (`sentence`, `sentinel`) for checks.
    pub refusal: Option<String>,
    pub regenerated: bool,
    pub contradicted: u32,
    pub unsupported: u32,
    pub uncited: u32,
    /// Ids never sent, cited by the answer or any attempt; sorted, unique.
    pub bad_ids: Vec<u64>,
    /// The passages sent, in order (`[k]` is `passage_ids[k-1]`).
    pub passage_ids: Vec<String>,
    /// `[{raw, bad_ids, error}]`, one per generation attempt.
    pub attempts: JsonText,
    /// `{retrieve_ms, generate_ms, check_ms, total_ms}` (checks: `check_ms`).
    pub timings: JsonText,
    /// The answer object or check report, exactly as served.
    pub report: JsonText,
}

impl AuditRecord {
    /// Markers that did not resolve, in the served answer or any attempt,
    /// or a refusal because they kept failing.
    pub fn is_unverified(&self) -> bool {
        self.status == "unverified"
            || !self.bad_ids.is_empty()
            || self.refusal.as_deref() == Some("validation")
    }

    /// A contradicted or unsupported sentence, or uncited factual
    /// sentences in an answer that is not grounded (issue 17: an answer
    /// whose sentences were all uncited was no incident).
    pub fn is_unsupported(&self) -> bool {
        self.contradicted + self.unsupported > 0 || (self.uncited > 0 && !self.grounded)
    }
}

/// A JSON document kept as the text it was written as: a response body is
/// stored without being parsed again, and read back byte for byte. It
/// serializes as the JSON value it holds (so an export line carries the
/// report as an object, not a string), and fails to serialize if the text
/// is not JSON.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct JsonText(Bytes);

impl JsonText {
    /// Text taken as it is (not checked: a store that parses its JSON
    /// columns refuses a record that is not JSON).
    pub fn new(text: impl Into<String>) -> JsonText {
        JsonText(Bytes::from(text.into()))
    }

    /// `value` serialized.
    pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<JsonText> {
        serde_json::to_string(value).map(JsonText::new)
    }

    pub fn as_str(&self) -> &str {
        // Built only from `String`s: always UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The text as shared bytes (a response body without a copy).
    pub fn bytes(&self) -> Bytes {
        self.0.clone()
    }

    /// The document as a JSON value.
    pub fn parse(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(self.as_str())
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for JsonText {
    fn from(text: String) -> JsonText {
        JsonText::new(text)
    }
}

impl From<&str> for JsonText {
    fn from(text: &str) -> JsonText {
        JsonText::new(text)
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.parse()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<JsonText, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(JsonText::new(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_serializes_as_the_value_it_holds() {
        let text = JsonText::new(r#"{"b": 1, "a": [true, null]}"#);
        assert_eq!(text.as_str(), r#"{"b": 1, "a": [true, null]}"#);
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            r#"{"a":[true,null],"b":1}"#
        );
        let back: JsonText = serde_json::from_str(r#"{"x": 2}"#).unwrap();
        assert_eq!(back.as_str(), r#"{"x":2}"#);
        assert!(serde_json::to_string(&JsonText::new("not json")).is_err());
    }
}
