//! The OpenAPI 3.1 document of the service (`GET /openapi.json`).

use std::sync::LazyLock;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use crate::error::ErrorCode;
use crate::routes::json_bytes;

/// The document, built once.
pub static DOCUMENT: LazyLock<Value> = LazyLock::new(document);
static BYTES: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(DOCUMENT.to_string()));

pub async fn handler() -> Response {
    json_bytes(StatusCode::OK, BYTES.clone())
}

fn error_ref(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

fn ok_json(description: &str, schema: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
    })
}

fn json_body(schema: &str) -> Value {
    json!({
        "required": true,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
    })
}

/// The common error responses of a protected JSON route.
fn protected_errors(body: bool) -> Vec<(&'static str, Value)> {
    let mut out = vec![
        (
            "401",
            error_ref("Missing or wrong bearer token (`missing_api_key`, `invalid_api_key`)."),
        ),
        (
            "405",
            error_ref("Method not allowed (`method_not_allowed`)."),
        ),
        ("504", error_ref("Timeout (`timeout`).")),
        (
            "500",
            error_ref("Internal error (`internal`); the detail is logged with the request id."),
        ),
    ];
    if body {
        out.push(("400", error_ref("Invalid request: `malformed_json`, `invalid_body`, `empty_question`, `empty_answer`, `invalid_parameter`.")));
        out.push((
            "413",
            error_ref("Body larger than the configured limit (`payload_too_large`)."),
        ));
        out.push((
            "415",
            error_ref("Content-Type set and not JSON (`unsupported_media_type`)."),
        ));
    }
    out
}

fn responses(mut list: Vec<(&'static str, Value)>, extra: Vec<(&'static str, Value)>) -> Value {
    list.extend(extra);
    Value::Object(list.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn error_table() -> String {
    let mut s = String::from("| code | HTTP | type | meaning |\n|---|---|---|---|\n");
    for row in ErrorCode::TABLE {
        s.push_str(&format!(
            "| `{}` | {} | `{}` | {} |\n",
            row.name,
            row.status.as_u16(),
            row.kind.as_str(),
            row.summary
        ));
    }
    s
}

fn document() -> Value {
    let security = json!([{"bearer": []}, {}]);
    let codes: Vec<&str> = ErrorCode::TABLE.iter().map(|r| r.name).collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "groundcite",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!(
                "Trustworthy retrieval-augmented answers: retrieve passages, number them [1]..[n], generate, then check every citation marker (ids never sent: regenerate once, then refuse) and the support of every factual sentence by its cited passage, and resolve markers into sources.\n\n\
                 **Auth**: when the environment variable `GROUNDCITE_API_KEY` is set, `/v1/*` and `/metrics` require `Authorization: Bearer <key>`.\n\n\
                 **Ingest** is a CLI step (`groundcite ingest`): index writes need a single writer, while the server holds the index open for reading; `POST /v1/ingest` answers 501 `ingest_not_supported`.\n\n\
                 **Audit**: every answer (and every `/v1/check` report unless turned off) is written to the SQLite audit log off the request path; `groundcite audit` reads it.\n\n\
                 **Errors** all have the shape `{{\"error\": {{\"code\", \"message\", \"type\"}}}}`; every response carries `x-request-id`.\n\n{}",
                error_table()
            ),
            "license": {"name": "MIT OR Apache-2.0", "identifier": "MIT OR Apache-2.0"}
        },
        "servers": [{"url": "http://127.0.0.1:8080"}],
        "paths": {
            "/": {"get": {
                "operationId": "page",
                "summary": "The web page: ask, see cited and checked answers.",
                "responses": {"200": {"description": "HTML.", "content": {"text/html": {"schema": {"type": "string"}}}}}
            }},
            "/openapi.json": {"get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}
            }},
            "/healthz": {"get": {
                "operationId": "healthz",
                "summary": "The process is up.",
                "responses": {"200": ok_json("Up.", "Health")}
            }},
            "/readyz": {"get": {
                "operationId": "readyz",
                "summary": "The index is open and a generator is configured.",
                "responses": {
                    "200": ok_json("Ready.", "Ready"),
                    "503": error_ref("Not ready (`not_ready`).")
                }
            }},
            "/metrics": {"get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics: answers by status, refusals by cause, invalid-id answers, regenerations, sentences by verdict, coverage, stage latencies, audit write failures.",
                "security": security,
                "responses": responses(protected_errors(false), vec![
                    ("200", json!({"description": "Prometheus text format 0.0.4.", "content": {"text/plain": {"schema": {"type": "string"}}}}))
                ])
            }},
            "/v1/ask": {"post": {
                "operationId": "ask",
                "summary": "Answer a question from the index, with checked citations.",
                "description": "With `stream: true`, the response is `text/event-stream`: one `sentence` event per sentence whose markers validated (data: SentenceEvent; never a sentence with an id never sent, nor, under the `refuse` or `drop` unsupported policy, a contradicted or unsupported one), then one `final` event (data: AskResult) or one `error` event (data: Error). When the attempt the sentences came from is rejected (regenerated, refused, or sentences dropped), a `retract` event (data: {count, reason}) comes before `final` or `error`: every sentence shown so far is withdrawn and the final answer replaces them.",
                "security": security,
                "requestBody": json_body("AskRequest"),
                "responses": responses(protected_errors(true), vec![
                    ("200", json!({
                        "description": "The answer object, or (stream) server-sent events.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/AskResult"}},
                            "text/event-stream": {"schema": {"type": "string", "description": "event: sentence|retract|final|error; data: JSON (SentenceEvent, {count, reason}, AskResult or Error)."}}
                        }
                    })),
                    ("502", error_ref("The language model call failed (`upstream_error`).")),
                    ("503", error_ref("No index or generator (`not_ready`)."))
                ])
            }},
            "/v1/check": {"post": {
                "operationId": "check",
                "summary": "Check an answer against the passages it was given: markers, sentences, support, sources.",
                "security": security,
                "requestBody": json_body("CheckRequest"),
                "responses": responses(protected_errors(true), vec![
                    ("200", ok_json("The check report.", "CheckOutput"))
                ])
            }},
            "/v1/prompt": {"post": {
                "operationId": "prompt",
                "summary": "Render the contract and the numbered context for a question.",
                "security": security,
                "requestBody": json_body("PromptRequest"),
                "responses": responses(protected_errors(true), vec![
                    ("200", ok_json("The rendered prompt.", "PromptResponse"))
                ])
            }},
            "/v1/search": {"get": {
                "operationId": "search",
                "summary": "Search the index.",
                "security": security,
                "parameters": [
                    {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1}, "description": "The query."},
                    {"name": "k", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": crate::routes::MAX_K, "default": 5}, "description": "How many hits."}
                ],
                "responses": responses(protected_errors(false), vec![
                    ("200", ok_json("Hits, best first.", "SearchResponse")),
                    ("400", error_ref("`invalid_query`, `empty_query`, `invalid_parameter`.")),
                    ("503", error_ref("No index (`not_ready`)."))
                ])
            }},
            "/v1/ingest": {"post": {
                "operationId": "ingest",
                "summary": "Not served: ingest is a CLI step.",
                "description": "Index writes need a single writer, and the server holds the index open for reading. Run `groundcite ingest DIR --index DIR` and restart the server. Always 501 `ingest_not_supported`.",
                "security": security,
                "responses": responses(protected_errors(false), vec![
                    ("501", error_ref("`ingest_not_supported`."))
                ])
            }}
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "The value of GROUNDCITE_API_KEY, when set."}
            },
            "schemas": schemas(&codes)
        }
    })
}

fn schemas(codes: &[&str]) -> Value {
    let span = json!({
        "type": "object",
        "required": ["text", "start", "end"],
        "properties": {
            "text": {"type": "string"},
            "start": {"type": "integer", "minimum": 0, "description": "Byte offset into the answer."},
            "end": {"type": "integer", "minimum": 0}
        }
    });
    let ids = json!({"type": "array", "items": {"type": "integer", "minimum": 0}});
    json!({
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {
                "type": "object",
                "required": ["code", "message", "type"],
                "properties": {
                    "code": {"type": "string", "enum": codes, "description": "Stable; see the error table in the description."},
                    "message": {"type": "string", "description": "For people; may change."},
                    "type": {"type": "string", "enum": ["invalid_request", "auth", "not_found", "internal", "upstream", "unavailable"]}
                }
            }}
        },
        "Health": {
            "type": "object", "required": ["status", "version"],
            "properties": {"status": {"const": "ok"}, "version": {"type": "string"}}
        },
        "Ready": {
            "type": "object", "required": ["status", "index", "generator"],
            "properties": {
                "status": {"const": "ready"},
                "index": {"type": "boolean"},
                "generator": {"type": ["string", "null"]},
                "passages": {"type": ["integer", "null"]},
                "audit": {"type": "boolean"}
            }
        },
        "Passage": {
            "type": "object",
            "required": ["id", "text"],
            "properties": {
                "id": {"type": "string", "description": "A stable id, e.g. `path.md#L9-L22`."},
                "text": {"type": "string"},
                "source_url": {"type": "string", "description": "Where a reader opens it (alias `url`)."},
                "section": {"type": "string", "description": "The section label of the source chip (alias `label`)."},
                "score": {"type": ["number", "null"]}
            }
        },
        "AskRequest": {
            "type": "object",
            "required": ["question"],
            "properties": {
                "question": {"type": "string", "minLength": 1},
                "top_k": {"type": ["integer", "null"], "minimum": 1, "maximum": crate::routes::MAX_K},
                "stream": {"type": "boolean", "default": false}
            }
        },
        "CheckRequest": {
            "type": "object",
            "required": ["passages", "answer"],
            "properties": {
                "question": {"type": ["string", "null"]},
                "passages": {"type": "array", "items": {"$ref": "#/components/schemas/Passage"}, "description": "In the order they were numbered: `[k]` is passages[k-1]."},
                "answer": {"type": "string", "minLength": 1}
            }
        },
        "PromptRequest": {
            "type": "object",
            "required": ["question", "passages"],
            "properties": {
                "question": {"type": "string", "minLength": 1},
                "passages": {"type": "array", "items": {"$ref": "#/components/schemas/Passage"}, "description": "Ranked; assembly trims them to the budget, then numbers them."}
            }
        },
        "PromptResponse": {
            "type": "object",
            "required": ["system", "user", "passages"],
            "properties": {
                "system": {"type": "string", "description": "The rules and the numbered passages."},
                "user": {"type": "string", "description": "The question."},
                "passages": {"type": "array", "items": {
                    "type": "object",
                    "required": ["n", "id"],
                    "properties": {
                        "n": {"type": "integer", "minimum": 1},
                        "id": {"type": "string"},
                        "source_url": {"type": "string"},
                        "section": {"type": "string"},
                        "trimmed": {"type": "boolean"}
                    }
                }}
            }
        },
        "SearchResponse": {
            "type": "object",
            "required": ["query", "k", "hits"],
            "properties": {
                "query": {"type": "string"},
                "k": {"type": "integer"},
                "hits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "section": {"type": "string"},
                        "source_url": {"type": "string"},
                        "text": {"type": "string"},
                        "score": {"type": "number", "description": "Normalised to 0..1."}
                    }
                }}
            }
        },
        "Evidence": {
            "type": ["object", "null"],
            "required": ["passage", "quote", "start", "end"],
            "properties": {
                "passage": {"type": "integer", "minimum": 1},
                "quote": {"type": "string"},
                "start": {"type": "integer", "description": "Byte offset into the passage text."},
                "end": {"type": "integer"}
            }
        },
        "Sentence": {
            "type": "object",
            "required": ["text", "start", "end", "kind", "citations", "factual", "verdict", "reasons"],
            "properties": {
                "text": {"type": "string"},
                "start": {"type": "integer"},
                "end": {"type": "integer"},
                "kind": {"type": "string", "enum": ["prose", "list_item", "heading", "table_row"]},
                "citations": ids,
                "factual": {"type": "boolean"},
                "reason": {"type": "string"},
                "verdict": {"type": "string", "enum": ["supported", "contradicted", "unsupported", "uncited", "not_factual"]},
                "message": {"type": "string", "description": "The verdict in plain words, the correction first (\"The source says 13 days, not 15 days.\"); empty when not factual"},
                "reasons": {"type": "array", "items": {"type": "string"}, "description": "e.g. `number_mismatch: \"14 days\" vs \"30 days\"`."},
                "evidence": {"$ref": "#/components/schemas/Evidence"},
                "suggested": {"type": "array", "items": {"type": "integer"}},
                "idle_citations": {"type": "array", "items": {"type": "integer"}}
            }
        },
        "Source": {
            "type": "object",
            "required": ["label", "url", "quote", "passages", "markers"],
            "properties": {
                "label": {"type": "string"},
                "url": {"type": "string"},
                "quote": {"type": "string"},
                "quote_passage": {"type": "integer"},
                "quote_start": {"type": "integer"},
                "quote_end": {"type": "integer"},
                "passages": {"type": "array", "items": {"type": "integer"}},
                "markers": {"type": "array", "items": {
                    "type": "object", "required": ["start", "end"],
                    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}}
                }}
            }
        },
        "Counts": {
            "type": "object",
            "properties": {
                "sentences": {"type": "integer"}, "factual": {"type": "integer"},
                "supported": {"type": "integer"}, "contradicted": {"type": "integer"},
                "unsupported": {"type": "integer"}, "uncited": {"type": "integer"}
            }
        },
        "CheckOutput": {
            "type": "object",
            "required": ["status", "grounded", "cited", "bad_ids", "unmarked", "coverage", "sentences", "sources", "refusal", "counts"],
            "properties": {
                "id": {"type": "string"},
                "status": {"type": "string", "enum": ["ok", "unverified", "no_evidence"]},
                "grounded": {"type": "boolean", "description": "Coverage at or above the threshold, no contradicted or unsupported sentence, status not unverified."},
                "cited": ids,
                "bad_ids": ids,
                "unmarked": {"type": "array", "items": span},
                "coverage": {"type": "number", "minimum": 0, "maximum": 1},
                "sentences": {"type": "array", "items": {"$ref": "#/components/schemas/Sentence"}},
                "sources": {"type": "array", "items": {"$ref": "#/components/schemas/Source"}},
                "verifier": {"type": ["string", "null"], "enum": ["lexical", "semantic", "llm", null], "description": "Which verifier judged the sentences; null when no support check ran."},
                "refusal": {
                    "type": ["object", "null"],
                    "properties": {"form": {"type": "string", "enum": ["sentence", "sentinel"]}, "needed": {"type": ["string", "null"]}}
                },
                "counts": {"$ref": "#/components/schemas/Counts"},
                "malformed_markers": {"type": "integer"}
            }
        },
        "Refusal": {
            "type": ["object", "null"],
            "required": ["reason"],
            "properties": {
                "reason": {"type": "string", "enum": ["gate", "sentinel", "validation", "no_direct_answer"], "description": "no_direct_answer (with an embedding model): a strong passage was found but no sentence in it answers; closest_passages lists the closest."},
                "searched": {"description": "What was searched."},
                "needed": {"type": ["string", "null"], "description": "What would be needed to answer."},
                "nearest_topics": {"type": "array", "description": "Adjacent topics the corpus does cover."},
                "handoff": {"type": ["string", "null"], "description": "Where to go next (a person, a team)."},
                "closest_passages": {"type": "array", "description": "no_direct_answer only: the closest passages sent, best first (n, id, source_url, section, score)."}
            }
        },
        "SentenceEvent": {
            "type": "object",
            "required": ["index", "text", "citations", "verdict"],
            "properties": {
                "index": {"type": "integer"},
                "text": {"type": "string"},
                "start": {"type": "integer"},
                "end": {"type": "integer"},
                "citations": ids,
                "verdict": {"type": "string"}
            }
        },
        "AskResult": {
            "type": "object",
            "required": ["question", "answer", "status", "grounded", "sentences", "sources", "passages", "refusal", "timings"],
            "properties": {
                "question": {"type": "string"},
                "answer": {"type": "string", "description": "The text served; sentence and marker spans are byte offsets into it."},
                "status": {"type": "string", "enum": ["ok", "unverified", "no_evidence"]},
                "grounded": {"type": "boolean"},
                "cited": ids,
                "bad_ids": ids,
                "unmarked": {"type": "array", "items": span},
                "coverage": {"type": "number"},
                "sentences": {"type": "array", "items": {"$ref": "#/components/schemas/Sentence"}},
                "sources": {"type": "array", "items": {"$ref": "#/components/schemas/Source"}},
                "verifier": {"type": ["string", "null"], "enum": ["lexical", "semantic", "llm", null], "description": "Which verifier judged the sentences; null when no support check ran."},
                "counts": {"$ref": "#/components/schemas/Counts"},
                "passages": {"type": "array", "items": {
                    "type": "object", "required": ["n", "id"],
                    "properties": {
                        "n": {"type": "integer"}, "id": {"type": "string"},
                        "source_url": {"type": "string"}, "section": {"type": "string"},
                        "score": {"type": ["number", "null"]}
                    }
                }},
                "refusal": {"$ref": "#/components/schemas/Refusal"},
                "answers_question": {
                    "type": ["object", "null"],
                    "description": "Does the answer served address the question? null for a refusal. With an embedding model, grounded requires verdict yes; without one the verdict is unchecked (method lexical).",
                    "properties": {
                        "score": {"type": ["number", "null"], "description": "The best answer sentence's similarity to the question, adjusted by the answer type."},
                        "verdict": {"type": "string", "enum": ["yes", "no", "unchecked"]},
                        "method": {"type": "string", "enum": ["semantic", "lexical"]}
                    }
                },
                "timings": {
                    "type": "object",
                    "properties": {
                        "retrieve_ms": {"type": "number"}, "generate_ms": {"type": "number"},
                        "check_ms": {"type": "number"}, "total_ms": {"type": "number"}
                    }
                },
                "attempts": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"raw": {"type": "string"}, "bad_ids": ids, "error": {"type": ["string", "null"]}, "finish_reason": {"type": "string", "description": "Why the model stopped; absent when the call failed."}}
                }},
                "generator": {"type": "string"},
                "retrieval": {"type": "string", "enum": ["lexical", "hybrid"], "description": "Which retrieval found the passages: BM25 alone, or dense vectors of the configured embedding model fused with BM25."},
                "regenerated": {"type": "boolean"},
                "finish_reason": {"type": ["string", "null"], "description": "Why the model stopped on the attempt served (stop, length, end_turn, max_tokens, ...); null when nothing was generated or served."},
                "truncated": {"type": "boolean", "description": "The attempt served was cut at the token limit; its unfinished last sentence was dropped."}
            }
        }
    })
}
