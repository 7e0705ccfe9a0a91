//! Reading a sentence-transformers model folder: which files hold the
//! transformer, and what sentence-transformers does after it (pooling,
//! normalisation, truncation, lower-casing), decided exactly as
//! sentence-transformers decides it from the same files.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{EmbedError, Result};

/// How the token vectors of a text become one vector (sentence-transformers'
/// `Pooling` module; padding never counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token vectors (`pooling_mode_mean_tokens`).
    Mean,
    /// The vector of the first token, `[CLS]` (`pooling_mode_cls_token`).
    Cls,
    /// The component-wise maximum (`pooling_mode_max_tokens`).
    Max,
    /// The sum divided by the square root of the token count
    /// (`pooling_mode_mean_sqrt_len_tokens`).
    MeanSqrtLen,
}

/// Everything around the transformer that shapes the output vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    /// The folder holding `config.json`, `tokenizer.json`, `model.safetensors`
    /// (the model folder itself unless `modules.json` says otherwise).
    pub transformer_dir: PathBuf,
    /// How token vectors become one vector (the Pooling module's `config.json`).
    pub pooling: Pooling,
    /// Whether vectors are scaled to unit length (a `Normalize` module).
    pub normalize: bool,
    /// Tokens kept per text, `[CLS]` and `[SEP]` included; `None` until the
    /// model's own limits are known (see [`Pipeline::resolve_max_seq_length`]).
    pub max_seq_length: Option<usize>,
    /// Lower-case texts before tokenizing (`do_lower_case`).
    pub lowercase: bool,
    /// The pooling config's `word_embedding_dimension` and its file, to be
    /// checked against the transformer's hidden size.
    pub(crate) pooled_dimension: Option<(PathBuf, usize)>,
}

pub(crate) const MODULES: &str = "modules.json";
pub(crate) const SBERT_CONFIG: &str = "sentence_bert_config.json";
pub(crate) const POOLING_CONFIG: &str = "config.json";
pub(crate) const TOKENIZER_CONFIG: &str = "tokenizer_config.json";

const TRANSFORMER: &str = "sentence_transformers.models.Transformer";
const POOLING: &str = "sentence_transformers.models.Pooling";
const NORMALIZE: &str = "sentence_transformers.models.Normalize";

/// Reads a file, telling a missing file from an unreadable one.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => EmbedError::MissingFile {
            path: path.to_owned(),
        },
        _ => EmbedError::Unreadable {
            path: path.to_owned(),
            error: source,
        },
    })
}

/// Reads a file that may be absent.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(EmbedError::MissingFile { .. }) => Ok(None),
        Err(err) => Err(err),
    }
}

pub(crate) fn parse_json<'a, T: Deserialize<'a>>(path: &Path, bytes: &'a [u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|err| EmbedError::invalid(path, err))
}

#[derive(Deserialize)]
struct Module {
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct SbertConfig {
    max_seq_length: Option<usize>,
    #[serde(default)]
    do_lower_case: bool,
}

#[derive(Deserialize)]
struct PoolingConfig {
    word_embedding_dimension: Option<usize>,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

#[derive(Deserialize)]
struct TokenizerConfig {
    model_max_length: Option<f64>,
}

impl Pipeline {
    /// Reads `modules.json`, the pooling config and `sentence_bert_config.json`
    /// of `dir`. Without `modules.json` the folder is a plain transformer and
    /// sentence-transformers' defaults apply: mean pooling, no normalisation,
    /// no lower-casing, `max_seq_length` from the model's limits.
    pub fn read(dir: &Path) -> Result<Pipeline> {
        let modules_path = dir.join(MODULES);
        let (transformer_dir, pooling_dir, normalize) = match read_optional(&modules_path)? {
            None => (dir.to_owned(), None, false),
            Some(bytes) => {
                let modules: Vec<Module> = parse_json(&modules_path, &bytes)?;
                read_modules(dir, &modules_path, &modules)?
            }
        };
        let (pooling, pooled_dimension) = match pooling_dir {
            None => (Pooling::Mean, None),
            Some(pooling_dir) => {
                let path = pooling_dir.join(POOLING_CONFIG);
                let config: PoolingConfig = parse_json(&path, &read(&path)?)?;
                let dimension = config.word_embedding_dimension.map(|d| (path.clone(), d));
                (pooling_mode(&path, &config)?, dimension)
            }
        };
        let sbert_path = transformer_dir.join(SBERT_CONFIG);
        let (max_seq_length, lowercase) = match read_optional(&sbert_path)? {
            None => (None, false),
            Some(bytes) => {
                let config: SbertConfig = parse_json(&sbert_path, &bytes)?;
                (config.max_seq_length, config.do_lower_case)
            }
        };
        Ok(Pipeline {
            transformer_dir,
            pooling,
            normalize,
            max_seq_length,
            lowercase,
            pooled_dimension,
        })
    }

    /// The token limit once the transformer's `max_position_embeddings` is
    /// known: `max_seq_length` when set (it may not exceed the model's
    /// positions), else the smaller of the positions and the tokenizer's
    /// `model_max_length` (`tokenizer_config.json`), as sentence-transformers does.
    pub fn resolve_max_seq_length(&mut self, max_position_embeddings: usize) -> Result<usize> {
        let resolved = match self.max_seq_length {
            Some(0) => {
                return Err(EmbedError::invalid(
                    self.transformer_dir.join(SBERT_CONFIG),
                    "max_seq_length is 0",
                ));
            }
            Some(n) if n > max_position_embeddings => {
                return Err(EmbedError::invalid(
                    self.transformer_dir.join(SBERT_CONFIG),
                    format!(
                        "max_seq_length {n} exceeds the model's max_position_embeddings \
                         {max_position_embeddings} (config.json)"
                    ),
                ));
            }
            Some(n) => n,
            None => {
                let path = self.transformer_dir.join(TOKENIZER_CONFIG);
                let tokenizer_max = match read_optional(&path)? {
                    None => None,
                    Some(bytes) => parse_json::<TokenizerConfig>(&path, &bytes)?.model_max_length,
                };
                match tokenizer_max {
                    Some(m) if m >= 1.0 && m < max_position_embeddings as f64 => m as usize,
                    _ => max_position_embeddings,
                }
            }
        };
        self.max_seq_length = Some(resolved);
        Ok(resolved)
    }
}

/// The modules sentence-transformers would chain: a Transformer, a Pooling,
/// optionally a Normalize, in that order. Any other module (Dense, LayerNorm,
/// ...) changes the vectors and is refused rather than skipped.
fn read_modules(
    dir: &Path,
    modules_path: &Path,
    modules: &[Module],
) -> Result<(PathBuf, Option<PathBuf>, bool)> {
    let kinds: Vec<&str> = modules.iter().map(|m| m.kind.as_str()).collect();
    match kinds.as_slice() {
        [TRANSFORMER, POOLING] | [TRANSFORMER, POOLING, NORMALIZE] => Ok((
            dir.join(&modules[0].path),
            Some(dir.join(&modules[1].path)),
            kinds.len() == 3,
        )),
        _ => Err(EmbedError::unsupported(
            modules_path,
            format!(
                "the modules are {kinds:?}; groundcite-embed runs a Transformer, a Pooling and \
                 optionally a Normalize module, in that order"
            ),
        )),
    }
}

fn pooling_mode(path: &Path, config: &PoolingConfig) -> Result<Pooling> {
    if config.pooling_mode_weightedmean_tokens || config.pooling_mode_lasttoken {
        return Err(EmbedError::unsupported(
            path,
            "weighted-mean and last-token pooling are not supported (mean, cls, max and \
             mean_sqrt_len are)",
        ));
    }
    let modes = [
        (config.pooling_mode_mean_tokens, Pooling::Mean),
        (config.pooling_mode_cls_token, Pooling::Cls),
        (config.pooling_mode_max_tokens, Pooling::Max),
        (
            config.pooling_mode_mean_sqrt_len_tokens,
            Pooling::MeanSqrtLen,
        ),
    ];
    let mut chosen = modes.iter().filter(|(on, _)| *on).map(|(_, mode)| *mode);
    match (chosen.next(), chosen.next()) {
        (Some(mode), None) => Ok(mode),
        (None, _) => Err(EmbedError::invalid(path, "no pooling mode is enabled")),
        (Some(_), Some(_)) => Err(EmbedError::unsupported(
            path,
            "several pooling modes are enabled (their vectors would be concatenated); \
             exactly one is supported",
        )),
    }
}
