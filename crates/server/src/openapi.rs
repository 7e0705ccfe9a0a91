//! The OpenAPI 3.1 document of the service (`GET /openapi.json`), derived
//! from the Rust types: every operation comes from the `#[utoipa::path]` of
//! its handler, registered by [`crate::api_routes`] together with the
//! route itself (so the router and the document list the same routes),
//! and every schema from `ToSchema` on the type that is serialized (the
//! report types of core and engine, under their `openapi` feature).

use std::sync::LazyLock;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use utoipa::Modify;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};

use crate::error::ErrorCode;
use crate::routes::json_bytes;

/// The document, built once.
pub static DOCUMENT: LazyLock<OpenApi> = LazyLock::new(document);
static BYTES: LazyLock<Bytes> =
    LazyLock::new(|| Bytes::from(serde_json::to_vec(&*DOCUMENT).expect("the document serializes")));

/// This document.
#[utoipa::path(
    get, path = "/openapi.json", operation_id = "openapi",
    responses((status = 200, description = "OpenAPI 3.1.", content_type = "application/json", body = Object))
)]
pub async fn handler() -> Response {
    json_bytes(StatusCode::OK, BYTES.clone())
}

/// The parts of the document that are not a route: the description (with
/// the error table), the license, the bearer scheme, and the schemas only
/// events use.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "groundcite", license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0")),
    servers((url = "http://127.0.0.1:8080")),
    components(schemas(groundcite_engine::StreamedSentence, groundcite_engine::Retraction)),
    modifiers(&Extras),
)]
struct Base;

struct Extras;

impl Modify for Extras {
    fn modify(&self, openapi: &mut OpenApi) {
        openapi.info.description = Some(description());
        openapi.info.version = env!("CARGO_PKG_VERSION").to_string();
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut bearer = Http::new(HttpAuthScheme::Bearer);
        bearer.description = Some("The value of GROUNDCITE_API_KEY, when set.".into());
        components.add_security_scheme("bearer", SecurityScheme::Http(bearer));
    }
}

fn description() -> String {
    let mut table = String::from("| code | HTTP | type | meaning |\n|---|---|---|---|\n");
    for row in ErrorCode::TABLE {
        table.push_str(&format!(
            "| `{}` | {} | `{}` | {} |\n",
            row.name,
            row.status.as_u16(),
            row.kind.as_str(),
            row.summary
        ));
    }
    format!(
        "Trustworthy retrieval-augmented answers: retrieve passages, number them [1]..[n], generate, then check every citation marker (ids never sent: regenerate once, then refuse) and the support of every factual sentence by its cited passage, and resolve markers into sources.\n\n\
         **Auth**: when the environment variable `GROUNDCITE_API_KEY` is set, `/v1/*` and `/metrics` require `Authorization: Bearer <key>`.\n\n\
         **Ingest** is a CLI step (`groundcite ingest`): index writes need a single writer, while the server holds the index open for reading. There is no ingest route.\n\n\
         **Audit**: every answer (and every `/v1/check` report unless turned off) is written to the audit log off the request path; `groundcite audit` reads it.\n\n\
         **Errors** all have the shape `{{\"error\": {{\"code\", \"message\", \"type\"}}}}` (schema `Error`); every response carries `x-request-id`.\n\n{table}"
    )
}

/// The whole document: the base (`Base`) and every route of [`crate::api_routes`].
pub fn document() -> OpenApi {
    let mut doc = <Base as utoipa::OpenApi>::openapi();
    let (_, routes) = crate::api_routes().split_for_parts();
    doc.merge(routes);
    doc
}
