//! groundcite's trained judges: one cross-encoder (a BERT encoder over a
//! pair of texts) with two heads, run on the CPU with candle.
//!
//! - [`Judges::answers`]: (question, sentence) → the probability that the
//!   sentence answers the question.
//! - [`Judges::support`]: (passage text, claim) → the probabilities that the
//!   passage entails the claim, says nothing about it, or contradicts it.
//!
//! The judges folder (`train/run.sh` writes it; the released judges are in
//! the repository, [`RELEASED_JUDGES_DIR`]) holds
//! `judges.safetensors` (every tensor of the fine-tuned encoder but its word
//! embeddings, and the heads), `config.json` (the encoder's BERT config and a
//! `groundcite_judges` section) and `manifest.json` (what it was trained from,
//! and the SHA-256 of every file). The word embeddings, frozen in training,
//! and the tokenizer come from the base model folder (all-MiniLM-L6-v2), whose
//! weights must have the SHA-256 the manifest names: judges loaded over
//! another base would judge with the wrong words, so that is an error.

use std::path::Path;

use crate::bert::Bert;
use candle_core::{DType, Device, IndexOp};
use candle_nn::{Linear, Module, VarBuilder};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{EmbedError, Result};
use crate::{CONFIG, TOKENIZER, WEIGHTS, bert_config, folder, forward_in_batches};

/// The judges' weights, in the judges folder.
pub const JUDGES_WEIGHTS: &str = "judges.safetensors";
/// What the judges were trained from, with the SHA-256 of every file.
pub const JUDGES_MANIFEST: &str = "manifest.json";
/// Where the released judges are, relative to the repository root.
pub const RELEASED_JUDGES_DIR: &str = "models/groundcite-judges";
/// The environment variable naming the judges folder.
pub const JUDGES_DIR_ENV: &str = "GROUNDCITE_JUDGES_DIR";

/// The support head's labels, in the order of its outputs.
pub const SUPPORT_LABELS: [&str; 3] = ["entailed", "neutral", "contradicted"];

const FROZEN: &str = "embeddings.word_embeddings.weight";

/// The loaded judges. Immutable, `Send` and `Sync`: share one across threads.
pub struct Judges {
    model: Bert,
    pooler: Linear,
    answer: Linear,
    support: Linear,
    tokenizer: Tokenizer,
    pad_id: u32,
    model_id: String,
    device: Device,
}

impl std::fmt::Debug for Judges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judges")
            .field("model_id", &self.model_id)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Manifest {
    model_id: String,
    base_weights_sha256: String,
    files: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct JudgesSection {
    support_labels: Vec<String>,
    max_seq_length: usize,
}

impl Judges {
    /// Loads the judges folder `dir` over the base model folder `base` (the
    /// embedding model the judges were fine-tuned from).
    pub fn load(dir: impl AsRef<Path>, base: impl AsRef<Path>) -> Result<Judges> {
        let (dir, base) = (dir.as_ref(), base.as_ref());
        if !dir.is_dir() {
            return Err(EmbedError::MissingFolder {
                path: dir.to_owned(),
            });
        }
        let manifest_path = dir.join(JUDGES_MANIFEST);
        let manifest: Manifest =
            folder::parse_json(&manifest_path, &folder::read(&manifest_path)?)?;

        let config_path = dir.join(CONFIG);
        let config_bytes = folder::read(&config_path)?;
        check_sha256(
            &manifest,
            &manifest_path,
            &config_path,
            CONFIG,
            &config_bytes,
        )?;
        let config = bert_config(&config_path, &config_bytes)?;
        let section: JudgesSection = {
            let value: serde_json::Value = folder::parse_json(&config_path, &config_bytes)?;
            let section = value.get("groundcite_judges").cloned().ok_or_else(|| {
                EmbedError::invalid(
                    &config_path,
                    "no groundcite_judges section: not a judges folder",
                )
            })?;
            serde_json::from_value(section).map_err(|err| EmbedError::invalid(&config_path, err))?
        };
        if section.support_labels != SUPPORT_LABELS {
            return Err(EmbedError::unsupported(
                &config_path,
                format!("support_labels {:?}", section.support_labels),
            ));
        }
        if section.max_seq_length < 8 || section.max_seq_length > config.max_position_embeddings {
            return Err(EmbedError::invalid(
                &config_path,
                format!("max_seq_length {} out of range", section.max_seq_length),
            ));
        }

        let weights_path = dir.join(JUDGES_WEIGHTS);
        let weights = folder::read(&weights_path)?;
        check_sha256(
            &manifest,
            &manifest_path,
            &weights_path,
            JUDGES_WEIGHTS,
            &weights,
        )?;

        let base_dir = crate::Pipeline::read(base)?.transformer_dir;
        let base_weights_path = base_dir.join(WEIGHTS);
        let base_weights = folder::read(&base_weights_path)?;
        let base_sha = hex(&Sha256::digest(&base_weights));
        if base_sha != manifest.base_weights_sha256 {
            return Err(EmbedError::invalid(
                &base_weights_path,
                format!(
                    "SHA-256 {base_sha}, but the judges in {} were trained over {} ({}); point \
                     model_dir at the model they were trained from",
                    dir.display(),
                    manifest.base_weights_sha256,
                    manifest_path.display()
                ),
            ));
        }
        let tokenizer_path = base_dir.join(TOKENIZER);
        let mut tokenizer = Tokenizer::from_bytes(folder::read(&tokenizer_path)?)
            .map_err(|err| EmbedError::invalid(&tokenizer_path, err))?;
        let pad_id = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: section.max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| EmbedError::invalid(&tokenizer_path, err))?;

        let device = Device::Cpu;
        let mut tensors = candle_core::safetensors::load_buffer(&weights, &device)
            .map_err(|err| EmbedError::invalid(&weights_path, err))?;
        let mut base_tensors = candle_core::safetensors::load_buffer(&base_weights, &device)
            .map_err(|err| EmbedError::invalid(&base_weights_path, err))?;
        let frozen = base_tensors.remove(FROZEN).ok_or_else(|| {
            EmbedError::invalid(&base_weights_path, format!("no tensor {FROZEN}"))
        })?;
        tensors.insert(FROZEN.to_owned(), frozen);
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let hidden = config.hidden_size;
        let load = || -> candle_core::Result<_> {
            Ok((
                Bert::load(vb.clone(), &config)?,
                candle_nn::linear(hidden, hidden, vb.pp("pooler.dense"))?,
                candle_nn::linear(hidden, 1, vb.pp("head.answer"))?,
                candle_nn::linear(hidden, 3, vb.pp("head.support"))?,
            ))
        };
        let (model, pooler, answer, support) =
            load().map_err(|err| EmbedError::invalid(&weights_path, err))?;
        Ok(Judges {
            model,
            pooler,
            answer,
            support,
            tokenizer,
            pad_id,
            model_id: format!(
                "{}@{}",
                manifest.model_id,
                &manifest.files[JUDGES_WEIGHTS][..16]
            ),
            device,
        })
    }

    /// The judges' name and the first 16 hex digits of their weights' SHA-256.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// For each (question, sentence): the probability that the sentence
    /// answers the question.
    pub fn answers(&self, pairs: &[(&str, &str)]) -> Result<Vec<f32>> {
        let logits = self.run(pairs, &self.answer, 1)?;
        Ok(logits.iter().map(|&x| 1.0 / (1.0 + (-x).exp())).collect())
    }

    /// For each (passage text, claim): the support head's probabilities, in
    /// the order of [`SUPPORT_LABELS`]: the passage entails the claim, says
    /// nothing either way, contradicts it (they sum to 1).
    pub fn support(&self, pairs: &[(&str, &str)]) -> Result<Vec<[f32; 3]>> {
        let logits = self.run(pairs, &self.support, 3)?;
        Ok(logits
            .chunks_exact(3)
            .map(|l| {
                let max = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e = [l[0], l[1], l[2]].map(|x| (x - max).exp());
                let sum: f32 = e.iter().sum();
                e.map(|x| x / sum)
            })
            .collect())
    }

    /// The head's logits for every pair, `width` per pair, in input order.
    fn run(&self, pairs: &[(&str, &str)], head: &Linear, width: usize) -> Result<Vec<f32>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(pairs.to_vec(), true)
            .map_err(|err| EmbedError::Inference(format!("tokenizing: {err}")))?;
        forward_in_batches(
            &self.model,
            &self.device,
            self.pad_id,
            &encodings,
            width,
            |hidden, _| head.forward(&self.pooler.forward(&hidden.i((.., 0))?)?.tanh()?),
        )
    }
}

fn check_sha256(
    manifest: &Manifest,
    manifest_path: &Path,
    path: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<()> {
    let Some(expected) = manifest.files.get(name) else {
        return Err(EmbedError::invalid(
            manifest_path,
            format!("no SHA-256 for {name} under files"),
        ));
    };
    let actual = hex(&Sha256::digest(bytes));
    if &actual != expected {
        return Err(EmbedError::invalid(
            path,
            format!(
                "SHA-256 {actual}, but {} says {expected}: the file is damaged or from other judges",
                manifest_path.display()
            ),
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
