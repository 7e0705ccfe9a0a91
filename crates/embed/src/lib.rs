//! In-process sentence embeddings for groundcite.
//!
//! [`Embedder::load`] reads a sentence-transformers folder of a BERT-family
//! model (all-MiniLM-L6-v2 is the one groundcite ships a fetch script for:
//! `scripts/fetch-model.sh`) and runs it on the CPU with candle:
//!
//! ```no_run
//! # fn main() -> Result<(), groundcite_embed::EmbedError> {
//! let embedder = groundcite_embed::Embedder::load(".groundcite/models/all-MiniLM-L6-v2")?;
//! let vectors = embedder.embed(&["The weather is lovely today.", "It's so sunny outside!"])?;
//! let similarity = groundcite_embed::cosine(vectors.row(0), vectors.row(1));
//! assert!((similarity - 0.6660).abs() < 1e-3);
//! # Ok(()) }
//! ```
//!
//! # What is read, and the defaults
//!
//! From the model folder, as sentence-transformers reads it:
//! - `modules.json` (optional): must list a `Transformer`, a `Pooling` and
//!   optionally a `Normalize` module, in that order. Any other module (a
//!   `Dense` layer, say) is refused, never skipped. Absent: the folder is a
//!   plain transformer with mean pooling and no normalisation,
//!   sentence-transformers' own fallback.
//! - the Pooling module's `config.json`: exactly one of mean, cls, max and
//!   mean-sqrt-len pooling. Padding never counts.
//! - `sentence_bert_config.json` (optional, in the Transformer's folder):
//!   `max_seq_length` (tokens per text, `[CLS]` and `[SEP]` included; longer
//!   texts are truncated) and `do_lower_case`. Absent `max_seq_length`: the
//!   smaller of the model's `max_position_embeddings` and the tokenizer's
//!   `model_max_length` (`tokenizer_config.json`).
//! - `config.json` (`model_type` `bert`), `tokenizer.json` (its own padding
//!   and truncation settings are replaced by the above), `model.safetensors`.
//!
//! Every error names the file at fault and what is wrong with it; a missing
//! folder or file also says how to fetch a model ([`FETCH_HINT`]).
//!
//! # Speed
//!
//! Texts are tokenized in parallel, sorted by length and run in batches of
//! similar lengths (at most [`MAX_BATCH_TEXTS`] texts and
//! [`MAX_BATCH_TOKENS`] padded tokens), so little work goes to padding;
//! candle spreads each matrix product over all cores (`RAYON_NUM_THREADS`
//! caps them). The query, key and value products are one product; each
//! text's attention runs in one pass on one thread (padding skipped), the
//! feed-forward activation in one pass with its bias, and each block's
//! bias, skip connection and layer norm in one pass, all compiled for the
//! CPU's widest vectors at run time. A text's vector does not depend on
//! the batch it is in beyond float rounding (about 1e-6).

pub mod bert;
mod error;
mod folder;
mod groups;
mod judges;
mod kernels;
mod parts;

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::bert::{Bert, Config};
use candle_core::{D, DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

pub use error::{EmbedError, FETCH_HINT, Result};
pub use folder::{Pipeline, Pooling};
pub use groups::GroupVectors;
pub use judges::{
    JUDGES_DIR_ENV, JUDGES_MANIFEST, JUDGES_WEIGHTS, Judges, RELEASED_JUDGES_DIR, SUPPORT_LABELS,
};
pub use parts::{Part, PartVectors};

/// The environment variable naming the model folder.
pub const MODEL_DIR_ENV: &str = "GROUNDCITE_MODEL_DIR";

/// Where `scripts/fetch-model.sh` puts all-MiniLM-L6-v2, relative to the
/// repository root.
pub const DEFAULT_MODEL_DIR: &str = ".groundcite/models/all-MiniLM-L6-v2";

/// The one line to print when no model is configured: what is lost and how
/// to get a model.
pub const NO_MODEL_HINT: &str = "no embedding model: running lexical-only; run \
     scripts/fetch-model.sh (into .groundcite/models/all-MiniLM-L6-v2, used from then on) or set \
     model_dir, GROUNDCITE_MODEL_DIR or --model-dir for semantic matching";

/// At most this many texts go through the model at once.
pub const MAX_BATCH_TEXTS: usize = 32;

/// At most this many tokens, padding included, go through the model at once.
/// Small enough that a batch's activations stay near the CPU's caches: on
/// the texts an ingest of the handbook embeds, 32 texts / 2,048 tokens ran
/// about 10% faster than 64 / 4,096, and 128 / 8,192 about 20% slower
/// (`bench/src/bin/embed_texts.rs`, 2 cores).
pub const MAX_BATCH_TOKENS: usize = 2048;

const CONFIG: &str = "config.json";
const TOKENIZER: &str = "tokenizer.json";
const WEIGHTS: &str = "model.safetensors";

/// A loaded model: a BERT-family transformer, its tokenizer, and
/// sentence-transformers' pooling and normalisation. Immutable, `Send` and
/// `Sync`: share one across threads.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
    pipeline: Pipeline,
    max_seq_length: usize,
    dim: usize,
    pad_id: u32,
    model_id: String,
    device: Device,
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("pooling", &self.pipeline.pooling)
            .field("normalize", &self.pipeline.normalize)
            .field("max_seq_length", &self.max_seq_length)
            .finish_non_exhaustive()
    }
}

/// Vectors of equal length, one row per text, in the order of the texts.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    dim: usize,
    data: Vec<f32>,
}

impl Embeddings {
    /// The number of vectors.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The length of each vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The vector of the `index`-th text.
    pub fn row(&self, index: usize) -> &[f32] {
        &self.data[index * self.dim..(index + 1) * self.dim]
    }

    /// The vectors, in the order of the texts.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[f32]> {
        self.data.chunks_exact(self.dim.max(1))
    }

    /// All vectors, row after row.
    pub fn as_flat(&self) -> &[f32] {
        &self.data
    }

    /// All vectors, row after row, as one owned buffer.
    pub fn into_flat(self) -> Vec<f32> {
        self.data
    }
}

/// Scales `row` to unit length, as a model's `Normalize` module does (rows
/// of norm below 1e-12 are divided by 1e-12, as torch's `normalize` does).
pub fn normalize_row(row: &mut [f32]) {
    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    row.iter_mut().for_each(|x| *x /= norm);
}

/// The cosine similarity of two vectors (the dot product when both are
/// unit-length, as a normalising model's are); 0 when either is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "cosine of vectors of different lengths");
    let (mut dot, mut norm_a, mut norm_b) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    let norms = (norm_a * norm_b).sqrt();
    if norms == 0.0 { 0.0 } else { dot / norms }
}

impl Embedder {
    /// Loads the sentence-transformers folder `dir`. See the crate docs for
    /// the files read and the defaults.
    pub fn load(dir: impl AsRef<Path>) -> Result<Embedder> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(EmbedError::MissingFolder {
                path: dir.to_owned(),
            });
        }
        let mut pipeline = Pipeline::read(dir)?;
        let transformer_dir = pipeline.transformer_dir.clone();

        let config_path = transformer_dir.join(CONFIG);
        let config_bytes = folder::read(&config_path)?;
        let config = bert_config(&config_path, &config_bytes)?;
        let max_seq_length = pipeline.resolve_max_seq_length(config.max_position_embeddings)?;
        if let Some((path, dim)) = &pipeline.pooled_dimension
            && *dim != config.hidden_size
        {
            return Err(EmbedError::invalid(
                path,
                format!(
                    "word_embedding_dimension {dim} differs from the hidden_size {} of {}",
                    config.hidden_size,
                    config_path.display()
                ),
            ));
        }

        let tokenizer_path = transformer_dir.join(TOKENIZER);
        let tokenizer_bytes = folder::read(&tokenizer_path)?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|err| EmbedError::invalid(&tokenizer_path, err))?;
        let vocab_size = tokenizer.get_vocab_size(true);
        if vocab_size > config.vocab_size {
            return Err(EmbedError::invalid(
                &tokenizer_path,
                format!(
                    "the tokenizer has {vocab_size} tokens but the model only {} (vocab_size \
                     in {})",
                    config.vocab_size,
                    config_path.display()
                ),
            ));
        }
        let pad_id = tokenizer
            .get_padding()
            .map(|padding| padding.pad_id)
            .or_else(|| tokenizer.token_to_id("[PAD]"))
            .unwrap_or(config.pad_token_id as u32);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| EmbedError::invalid(&tokenizer_path, err))?;

        let weights_path = transformer_dir.join(WEIGHTS);
        let weights = folder::read(&weights_path)?;
        let model_id = model_id(dir, &config_bytes, &tokenizer_bytes, &weights, &pipeline);
        let device = Device::Cpu;
        let model = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .and_then(|vb| Bert::load(vb, &config))
            .map_err(|err| EmbedError::invalid(&weights_path, err))?;

        Ok(Embedder {
            model,
            tokenizer,
            pipeline,
            max_seq_length,
            dim: config.hidden_size,
            pad_id,
            model_id,
            device,
        })
    }

    /// The length of the vectors.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A stable id of the model and everything that shapes its vectors:
    /// the folder's name, `@`, then 16 hex digits of a SHA-256 over
    /// `config.json`, `tokenizer.json`, the pooling, normalisation and token
    /// limit, and the weights' size, first and last 64 KiB. An index built
    /// with one model can tell that another is configured.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Tokens kept per text, `[CLS]` and `[SEP]` included.
    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// How token vectors are pooled into one vector per text.
    pub fn pooling(&self) -> Pooling {
        self.pipeline.pooling
    }

    /// Whether every vector has unit length.
    pub fn normalizes(&self) -> bool {
        self.pipeline.normalize
    }

    /// The number of tokens `text` becomes, after truncation.
    pub fn token_count(&self, text: &str) -> Result<usize> {
        let text = self.prepare(text);
        let encoding = self
            .tokenizer
            .encode(text.as_ref(), true)
            .map_err(|err| EmbedError::Inference(format!("tokenizing: {err}")))?;
        Ok(encoding.len())
    }

    /// The vector of one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(&[text])?.into_flat())
    }

    /// The vectors of `texts`, in their order.
    pub fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        if texts.is_empty() {
            return Ok(Embeddings {
                dim: self.dim,
                data: Vec::new(),
            });
        }
        let (_, encodings) = self.encode(texts)?;
        let pipeline = &self.pipeline;
        let data = forward_in_batches(
            &self.model,
            &self.device,
            self.pad_id,
            &encodings,
            self.dim,
            |hidden, mask| {
                let pooled = pool(hidden, mask, pipeline.pooling)?;
                if pipeline.normalize {
                    normalize(&pooled)
                } else {
                    Ok(pooled)
                }
            },
        )?;
        Ok(Embeddings {
            dim: self.dim,
            data,
        })
    }

    /// `texts` as the model reads them (lower-cased when it lower-cases),
    /// and their encodings.
    fn encode<'t>(
        &self,
        texts: &[&'t str],
    ) -> Result<(Vec<Cow<'t, str>>, Vec<tokenizers::Encoding>)> {
        let prepared: Vec<Cow<'t, str>> = texts.iter().map(|t| self.prepare(t)).collect();
        let inputs: Vec<&str> = prepared.iter().map(|t| t.as_ref()).collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|err| EmbedError::Inference(format!("tokenizing: {err}")))?;
        Ok((prepared, encodings))
    }

    fn prepare<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.pipeline.lowercase {
            text.to_lowercase().into()
        } else {
            text.into()
        }
    }
}

/// Runs `encodings` through `model` in batches of similar lengths (longest
/// first, so each batch is padded to its first encoding's length; at most
/// [`MAX_BATCH_TEXTS`] encodings and [`MAX_BATCH_TOKENS`] padded tokens) and
/// returns what `head` makes of each batch's hidden states and attention
/// mask (`width` values per encoding), row after row in the encodings' order.
/// The embedder pools its vectors this way, the judges their heads' logits.
fn forward_in_batches(
    model: &Bert,
    device: &Device,
    pad_id: u32,
    encodings: &[tokenizers::Encoding],
    width: usize,
    head: impl Fn(&Tensor, &Tensor) -> candle_core::Result<Tensor>,
) -> Result<Vec<f32>> {
    let mut out = vec![0.0f32; encodings.len() * width];
    for_each_batch(model, device, pad_id, encodings, |hidden, mask, batch| {
        let rows = head(hidden, mask)?.flatten_all()?.to_vec1::<f32>()?;
        for (row, &i) in rows.chunks_exact(width).zip(batch) {
            out[i * width..(i + 1) * width].copy_from_slice(row);
        }
        Ok(())
    })?;
    Ok(out)
}

/// Runs `encodings` through `model` in batches of similar lengths (see
/// [`forward_in_batches`]) and hands each batch's hidden states (texts,
/// tokens, dim), attention mask (texts, tokens) and the indices of its
/// encodings, in the batch's order, to `each`.
fn for_each_batch(
    model: &Bert,
    device: &Device,
    pad_id: u32,
    encodings: &[tokenizers::Encoding],
    mut each: impl FnMut(&Tensor, &Tensor, &[usize]) -> candle_core::Result<()>,
) -> Result<()> {
    let mut order: Vec<usize> = (0..encodings.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].len()));
    let mut start = 0;
    while start < order.len() {
        let tokens = encodings[order[start]].len().max(1);
        let per_batch = (MAX_BATCH_TOKENS / tokens).clamp(1, MAX_BATCH_TEXTS);
        let batch = &order[start..(start + per_batch).min(order.len())];
        let count = batch.len();
        let mut ids = vec![pad_id; count * tokens];
        let mut type_ids = vec![0u32; count * tokens];
        let mut mask = vec![0u32; count * tokens];
        for (row, &i) in batch.iter().enumerate() {
            let e = &encodings[i];
            let at = row * tokens;
            ids[at..at + e.len()].copy_from_slice(e.get_ids());
            type_ids[at..at + e.len()].copy_from_slice(e.get_type_ids());
            mask[at..at + e.len()].copy_from_slice(e.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (count, tokens), device)?;
        let type_ids = Tensor::from_vec(type_ids, (count, tokens), device)?;
        let mask = Tensor::from_vec(mask, (count, tokens), device)?;
        let hidden = model.forward(&ids, &type_ids, &mask)?;
        each(&hidden, &mask, batch)?;
        start += count;
    }
    Ok(())
}

/// sentence-transformers' pooling of `hidden` (texts, tokens, dim) under
/// `mask` (texts, tokens) into (texts, dim).
fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(hidden.dtype())?.unsqueeze(2)?;
    let count = || mask.sum(1)?.clamp(1e-9, f32::MAX);
    match pooling {
        Pooling::Cls => hidden.i((.., 0)),
        Pooling::Mean => hidden
            .broadcast_mul(&mask)?
            .sum(1)?
            .broadcast_div(&count()?),
        Pooling::MeanSqrtLen => hidden
            .broadcast_mul(&mask)?
            .sum(1)?
            .broadcast_div(&count()?.sqrt()?),
        // Padding is pushed to -1e9 so it never wins, as sentence-transformers does.
        Pooling::Max => hidden.broadcast_add(&((mask - 1.0)? * 1e9)?)?.max(1),
    }
}

/// Scales each row to unit length (rows of norm below 1e-12 are divided by
/// 1e-12, as torch's `normalize` does).
fn normalize(vectors: &Tensor) -> candle_core::Result<Tensor> {
    let norms = vectors
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12, f32::MAX)?;
    vectors.broadcast_div(&norms)
}

/// Parses `config.json`, refusing what the BERT encoder ([`bert`]) cannot run.
fn bert_config(path: &Path, bytes: &[u8]) -> Result<Config> {
    let mut value: serde_json::Value = folder::parse_json(path, bytes)?;
    let Some(object) = value.as_object_mut() else {
        return Err(EmbedError::invalid(path, "not a JSON object"));
    };
    let model_type = object.get("model_type").and_then(|v| v.as_str());
    let architectures: Vec<&str> = object
        .get("architectures")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let is_bert = match model_type {
        Some(model_type) => model_type == "bert",
        None => architectures.iter().any(|a| a.starts_with("Bert")),
    };
    if !is_bert {
        return Err(EmbedError::unsupported(
            path,
            format!(
                "model_type {model_type:?} (architectures {architectures:?}); groundcite-embed \
                 runs BERT models (model_type \"bert\"), such as all-MiniLM-L6-v2"
            ),
        ));
    }
    // An activation the encoder does not run ([`bert::Activation`] names
    // those it does) is unsupported, not a malformed file.
    if let Some(act) = object.get("hidden_act").and_then(|v| v.as_str())
        && serde_json::from_value::<bert::Activation>(act.into()).is_err()
    {
        return Err(EmbedError::unsupported(path, format!("hidden_act {act:?}")));
    }
    if let Some(kind) = object
        .get("position_embedding_type")
        .and_then(|v| v.as_str())
        && kind != "absolute"
    {
        return Err(EmbedError::unsupported(
            path,
            format!("position_embedding_type {kind:?}"),
        ));
    }
    let config: Config =
        serde_json::from_value(value).map_err(|err| EmbedError::invalid(path, err))?;
    if config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(EmbedError::invalid(
            path,
            format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ),
        ));
    }
    Ok(config)
}

fn model_id(
    dir: &Path,
    config: &[u8],
    tokenizer: &[u8],
    weights: &[u8],
    pipeline: &Pipeline,
) -> String {
    const EDGE: usize = 64 * 1024;
    let mut hash = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    part(b"groundcite-embed model id 1");
    part(config);
    part(tokenizer);
    part(
        format!(
            "{:?} normalize={} max_seq_length={:?} lowercase={}",
            pipeline.pooling, pipeline.normalize, pipeline.max_seq_length, pipeline.lowercase
        )
        .as_bytes(),
    );
    part(&(weights.len() as u64).to_le_bytes());
    part(&weights[..weights.len().min(EDGE)]);
    part(&weights[weights.len().saturating_sub(EDGE)..]);
    let digest = hash.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let name = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| PathBuf::from(dir))
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    format!("{name}@{hex}")
}
