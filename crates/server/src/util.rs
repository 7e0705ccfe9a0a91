//! Small helpers: timestamps and request ids.

use axum::http::{HeaderValue, Request};

/// A new request id (the audit id), defined once in `groundcite-audit`.
pub use groundcite_audit::new_request_id;
/// The audit record's time format (`2026-11-30T14:50:07.123Z`), defined
/// once in `groundcite-audit`.
pub use groundcite_audit::rfc3339;

/// The client's `x-request-id`, moved out of the way by [`assign_request_id`]
/// (a request extension): recorded in the audit log, never used as an id.
#[derive(Debug, Clone)]
pub struct ClientRequestId(pub String);

/// Longest client request id kept (longer ones are cut, on a char boundary).
pub const MAX_CLIENT_REQUEST_ID: usize = 128;

/// Middleware: every request gets a new [`new_request_id`] as its
/// `x-request-id` (what the response, the logs and the audit record
/// carry); the client's own `x-request-id`, if any, is kept as a
/// [`ClientRequestId`] extension.
pub async fn assign_request_id(
    mut request: Request<axum::body::Body>,
) -> Request<axum::body::Body> {
    let headers = request.headers_mut();
    let client = headers
        .get_all("x-request-id")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::trim)
        .find(|v| !v.is_empty())
        .map(|v| {
            let mut end = v.len().min(MAX_CLIENT_REQUEST_ID);
            while !v.is_char_boundary(end) {
                end -= 1;
            }
            v[..end].to_string()
        });
    headers.remove("x-request-id");
    if let Ok(id) = HeaderValue::from_str(&new_request_id()) {
        headers.insert("x-request-id", id);
    }
    if let Some(client) = client {
        request.extensions_mut().insert(ClientRequestId(client));
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_millis(1_796_050_207_123)),
            "2026-11-30T14:50:07.123Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
    }
}
