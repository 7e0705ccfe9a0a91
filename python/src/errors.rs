//! Errors as Python exceptions, one class per kind, each with the stable
//! `code` of the HTTP service's error table (`groundcite.errors`).

use groundcite_engine::EngineError;
use pyo3::prelude::*;

/// The exception of `code` with `message`: the class is looked up in
/// `groundcite.errors` by the code's kind.
pub fn error(code: &str, message: String) -> PyErr {
    let class = match code {
        "invalid_body" => "InvalidInputError",
        "bad_request" | "empty_answer" | "empty_question" | "empty_query" | "invalid_parameter" => {
            "BadRequestError"
        }
        "limit_exceeded" => "LimitExceededError",
        "configuration" => "ConfigError",
        "index_unavailable" => "IndexUnavailableError",
        "internal" => "InternalError",
        c if c.starts_with("llm_") => "GeneratorError",
        _ => "GroundciteError",
    };
    Python::attach(|py| {
        let made = py
            .import("groundcite.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|cls| cls.call1((message.clone(), code)));
        match made {
            Ok(value) => PyErr::from_value(value),
            // The Python half of the package is missing (the extension
            // imported on its own): still an error with the message.
            Err(_) => pyo3::exceptions::PyRuntimeError::new_err(format!("{code}: {message}")),
        }
    })
}

/// A passage or argument of the wrong shape (`TypeError` too).
pub fn invalid_input(message: String) -> PyErr {
    error("invalid_body", message)
}

pub fn engine(e: EngineError) -> PyErr {
    error(e.code(), e.to_string())
}
