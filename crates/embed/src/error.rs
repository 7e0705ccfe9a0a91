//! The one error type of the crate.

use std::path::PathBuf;

/// How to get a model, appended to the errors a user fixes by fetching one.
pub const FETCH_HINT: &str = "run scripts/fetch-model.sh to fetch all-MiniLM-L6-v2, then point \
     model_dir in groundcite.toml, GROUNDCITE_MODEL_DIR or --model-dir at the folder it prints";

/// Why a model folder could not be loaded or a text not embedded. Every
/// variant about a file names that file.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The configured model folder does not exist or is not a folder.
    #[error("model folder {path}: not found or not a folder; {FETCH_HINT}")]
    MissingFolder {
        /// The configured folder.
        path: PathBuf,
    },

    /// A file the model needs is absent from the folder.
    #[error("{path}: missing from the model folder; {FETCH_HINT}")]
    MissingFile {
        /// Where the file was expected.
        path: PathBuf,
    },

    /// A file is there but cannot be read.
    /// (The message includes the I/O error, which is not also the
    /// `source`: a printer of the chain would say it twice.)
    #[error("{path}: cannot be read: {error}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },

    /// A file is read but its content is not what it should be.
    #[error("{path}: invalid: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with its content.
        reason: String,
    },

    /// A well-formed file describes a model this crate does not run.
    #[error("{path}: unsupported model: {reason}")]
    Unsupported {
        /// The file that describes the model.
        path: PathBuf,
        /// What this crate does not support.
        reason: String,
    },

    /// The forward pass or the tokenizer failed on the given texts.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// A result whose error is an [`EmbedError`] by default.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;

impl EmbedError {
    pub(crate) fn invalid(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        EmbedError::Invalid {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn unsupported(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        EmbedError::Unsupported {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}

impl From<candle_core::Error> for EmbedError {
    fn from(err: candle_core::Error) -> Self {
        EmbedError::Inference(err.to_string())
    }
}
