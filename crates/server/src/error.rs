//! The one error table of the service.
//!
//! **API boundary**: every error leaves the service with the same JSON shape
//!
//! ```json
//! {"error": {"code": "empty_answer", "message": "the answer is empty", "type": "invalid_request"}}
//! ```
//!
//! `code` is stable (clients switch on it), `type` is one of
//! `invalid_request | auth | not_found | internal | upstream | unavailable`,
//! and the HTTP status comes from the same row of [`ErrorCode::TABLE`]. 5xx
//! messages never carry internals: the detail is logged with the request id,
//! and the message names the request id instead.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The class of an error, as reported in `error.type`.
#[derive(utoipa::ToSchema, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The request is wrong; fix it before retrying.
    InvalidRequest,
    /// Missing or wrong bearer token.
    Auth,
    /// No such route.
    NotFound,
    /// A bug or an unexpected failure on our side.
    Internal,
    /// The LLM (or another upstream) failed or timed out.
    Upstream,
    /// The service is not ready (index closed, no generator); retry later.
    Unavailable,
}

impl ErrorType {
    /// The name sent in `error.type`, e.g. `invalid_request`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::InvalidRequest => "invalid_request",
            ErrorType::Auth => "auth",
            ErrorType::NotFound => "not_found",
            ErrorType::Internal => "internal",
            ErrorType::Upstream => "upstream",
            ErrorType::Unavailable => "unavailable",
        }
    }
}

/// Every error code the service can return. One row each in [`ErrorCode::TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The body is not syntactically valid JSON.
    MalformedJson,
    /// The body is JSON but not the expected shape (missing field, wrong type).
    InvalidBody,
    /// The body's `Content-Type` is missing or not JSON.
    UnsupportedMediaType,
    /// `question` is empty or white space.
    EmptyQuestion,
    /// `answer` is empty or white space.
    EmptyAnswer,
    /// `q` is empty or white space.
    EmptyQuery,
    /// A query string that does not parse.
    InvalidQuery,
    /// A parameter out of range (`top_k`, `k`).
    InvalidParameter,
    /// The body is larger than the configured limit.
    PayloadTooLarge,
    /// The request target (path and query) is longer than the limit.
    UriTooLong,
    /// The answer or passages are over a check limit (`check.limits`).
    LimitExceeded,
    /// An API key is configured and the request has no bearer token.
    MissingApiKey,
    /// The bearer token is not the configured key.
    InvalidApiKey,
    /// No such route.
    NotFound,
    /// The route exists, with other methods.
    MethodNotAllowed,
    /// The LLM call failed.
    UpstreamError,
    /// The request took longer than the configured timeout.
    Timeout,
    /// No answerer configured, or the index is not open.
    NotReady,
    /// The answer's audit record did not commit in time: not served.
    AuditUnavailable,
    /// Anything else; details are logged, never returned.
    Internal,
}

/// One row of the error table.
#[derive(Debug, Clone, Copy)]
pub struct ErrorRow {
    /// The error code.
    pub code: ErrorCode,
    /// The code as sent in `error.code`, e.g. `empty_answer`.
    pub name: &'static str,
    /// The HTTP status returned with it.
    pub status: StatusCode,
    /// Its class, sent in `error.type`.
    pub kind: ErrorType,
    /// What it means: the error table of the OpenAPI description, and the
    /// message of an error that left a layer as a bare status.
    pub summary: &'static str,
}

macro_rules! rows {
    ($($code:ident, $name:literal, $status:ident, $kind:ident, $summary:literal;)*) => {
        impl ErrorCode {
            /// The error table: code, HTTP status, type, meaning.
            pub const TABLE: &'static [ErrorRow] = &[
                $(ErrorRow { code: ErrorCode::$code, name: $name, status: StatusCode::$status, kind: ErrorType::$kind, summary: $summary },)*
            ];

            fn row(self) -> &'static ErrorRow {
                match self {
                    $(ErrorCode::$code => &ErrorRow { code: ErrorCode::$code, name: $name, status: StatusCode::$status, kind: ErrorType::$kind, summary: $summary },)*
                }
            }
        }
    };
}

rows! {
    MalformedJson, "malformed_json", BAD_REQUEST, InvalidRequest, "The body is not valid JSON.";
    InvalidBody, "invalid_body", BAD_REQUEST, InvalidRequest, "The body is JSON but not the expected shape (missing field, wrong type).";
    UnsupportedMediaType, "unsupported_media_type", UNSUPPORTED_MEDIA_TYPE, InvalidRequest, "Content-Type is missing or not application/json.";
    EmptyQuestion, "empty_question", BAD_REQUEST, InvalidRequest, "`question` is empty.";
    EmptyAnswer, "empty_answer", BAD_REQUEST, InvalidRequest, "`answer` is empty.";
    EmptyQuery, "empty_query", BAD_REQUEST, InvalidRequest, "`q` is empty.";
    InvalidQuery, "invalid_query", BAD_REQUEST, InvalidRequest, "The query string does not parse (missing `q`, `k` not a number).";
    InvalidParameter, "invalid_parameter", BAD_REQUEST, InvalidRequest, "A parameter is out of range (`top_k`, `k`: 1 to 50).";
    PayloadTooLarge, "payload_too_large", PAYLOAD_TOO_LARGE, InvalidRequest, "The body is larger than the configured limit.";
    UriTooLong, "uri_too_long", URI_TOO_LONG, InvalidRequest, "The request target (path and query) is longer than 8 KiB.";
    LimitExceeded, "limit_exceeded", UNPROCESSABLE_ENTITY, InvalidRequest, "The answer or passages are over a check limit (`[check.limits]`: answer bytes, markers, sentences, passages, passage bytes); the message names which.";
    MissingApiKey, "missing_api_key", UNAUTHORIZED, Auth, "An API key is required: `Authorization: Bearer <key>`.";
    InvalidApiKey, "invalid_api_key", UNAUTHORIZED, Auth, "The bearer token is not the configured API key.";
    NotFound, "not_found", NOT_FOUND, NotFound, "No such route.";
    MethodNotAllowed, "method_not_allowed", METHOD_NOT_ALLOWED, InvalidRequest, "The route exists with other methods.";
    UpstreamError, "upstream_error", BAD_GATEWAY, Upstream, "The LLM call failed.";
    Timeout, "timeout", GATEWAY_TIMEOUT, Upstream, "The request took longer than the configured timeout (`GROUNDCITE_TIMEOUT_SECS`, default 60 s; an answer with one regeneration on a local CPU model can take longer: raise it).";
    NotReady, "not_ready", SERVICE_UNAVAILABLE, Unavailable, "The index is not open or no generator is configured.";
    AuditUnavailable, "audit_unavailable", SERVICE_UNAVAILABLE, Unavailable, "The answer's audit record could not be committed within the commit wait (the audit database is slow or down), so the answer was not served; retry after `Retry-After` seconds.";
    Internal, "internal", INTERNAL_SERVER_ERROR, Internal, "An internal error; the detail is logged with the request id.";
}

impl ErrorCode {
    /// The code as sent in `error.code`, e.g. `empty_answer`.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The HTTP status returned with this code.
    pub fn status(self) -> StatusCode {
        self.row().status
    }

    /// The class of this code, sent in `error.type`.
    pub fn kind(self) -> ErrorType {
        self.row().kind
    }

    /// The code used when a bare status leaves a layer (timeout, limit)
    /// without our shape.
    pub fn for_status(status: StatusCode) -> ErrorCode {
        match status {
            StatusCode::BAD_REQUEST => ErrorCode::InvalidBody,
            StatusCode::UNAUTHORIZED => ErrorCode::MissingApiKey,
            StatusCode::NOT_FOUND => ErrorCode::NotFound,
            StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
            StatusCode::URI_TOO_LONG => ErrorCode::UriTooLong,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedMediaType,
            StatusCode::REQUEST_TIMEOUT | StatusCode::GATEWAY_TIMEOUT => ErrorCode::Timeout,
            StatusCode::BAD_GATEWAY => ErrorCode::UpstreamError,
            StatusCode::SERVICE_UNAVAILABLE => ErrorCode::NotReady,
            s if s.is_client_error() => ErrorCode::InvalidBody,
            _ => ErrorCode::Internal,
        }
    }
}

/// An error on its way out. Build with [`ApiError::new`]; 5xx details go
/// through [`ApiError::internal`] so they are logged, not returned.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The error code, which sets the HTTP status and `error.type`.
    pub code: ErrorCode,
    /// The message sent in `error.message`, for people.
    pub message: String,
}

/// The wire shape (`Error` in the OpenAPI document).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub(crate) struct Envelope<'a> {
    error: Body<'a>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ErrorBody)]
struct Body<'a> {
    /// Stable: clients switch on it. See the error table.
    #[schema(value_type = ErrorCode)]
    code: &'a str,
    /// For people; may change.
    message: &'a str,
    #[serde(rename = "type")]
    #[schema(value_type = ErrorType)]
    kind: &'a str,
}

/// The code's schema: a string, one of the table's names.
impl utoipa::PartialSchema for ErrorCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(ErrorCode::TABLE.iter().map(|r| r.name)))
            .description(Some("Stable; see the error table in the description."))
            .into()
    }
}

impl utoipa::ToSchema for ErrorCode {}

impl ApiError {
    /// An error with `code` and a message the client sees as is.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// An internal error: the detail is logged with the request id; the
    /// client sees only the id.
    pub fn internal(request_id: &str, detail: impl std::fmt::Display) -> ApiError {
        tracing::error!(request_id, error = %detail, "internal error");
        ApiError::new(
            ErrorCode::Internal,
            format!("internal error (request id {request_id})"),
        )
    }

    /// The JSON body, as bytes.
    pub fn body(&self) -> Vec<u8> {
        serde_json::to_vec(&Envelope {
            error: Body {
                code: self.code.as_str(),
                message: &self.message,
                kind: self.code.kind().as_str(),
            },
        })
        .unwrap_or_default()
    }

    /// The JSON body, as a value (for SSE `error` events).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({"error": {"code": self.code.as_str(), "message": self.message, "type": self.code.kind().as_str()}})
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.code.status(), self.body()).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response.extensions_mut().insert(self.code);
        if self.code == ErrorCode::PayloadTooLarge {
            // The rest of the body may be unread: this connection ends here,
            // and the client is told so before it tries to reuse it.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if self.code == ErrorCode::AuditUnavailable {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(crate::audit::RETRY_AFTER_SECS),
            );
        }
        if matches!(
            self.code,
            ErrorCode::MissingApiKey | ErrorCode::InvalidApiKey
        ) {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"groundcite\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_agree_with_accessors_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for row in ErrorCode::TABLE {
            assert_eq!(row.code.as_str(), row.name);
            assert_eq!(row.code.status(), row.status);
            assert!(names.insert(row.name), "duplicate code {}", row.name);
            assert!(row.status.is_client_error() || row.status.is_server_error());
        }
    }

    #[test]
    fn body_has_the_one_shape() {
        let e = ApiError::new(ErrorCode::EmptyAnswer, "the answer is empty");
        let v: serde_json::Value = serde_json::from_slice(&e.body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error": {"code": "empty_answer", "message": "the answer is empty", "type": "invalid_request"}})
        );
    }
}
