//! A deterministic stand-in for the embedding model, for tests of anything
//! that stores or searches chunk vectors (the embedded index here, the
//! PostgreSQL index in `groundcite-pg`), so that both backends are tested
//! with the same vectors. Behind the `test-support` feature.
//!
//! Each word (split on anything not alphanumeric, lowercased) is hashed
//! into one of [`HashEmbedder::DIMENSIONS`] dimensions and the vector is
//! normalised: texts that share words are close, texts that share none are
//! orthogonal or nearly.
//!
//! [`SyntheticEmbedder`] stands in for the model at scale (the scale
//! benches): noisy copies of a real index's vectors, so that a million
//! chunks get vectors shaped like the model's without hours of embedding.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::ann::dot;
use crate::vectors::{ChunkEmbedder, VectorStore};

/// A [`ChunkEmbedder`] that hashes words into dimensions, counts the texts
/// it embedded, and can be made to fail.
#[derive(Debug)]
pub struct HashEmbedder {
    id: String,
    texts: AtomicUsize,
    fail: bool,
}

impl HashEmbedder {
    /// Dimensions of every vector.
    pub const DIMENSIONS: usize = 32;

    /// An embedder reporting `model_id` `id`.
    pub fn new(id: &str) -> Arc<HashEmbedder> {
        Arc::new(HashEmbedder {
            id: id.into(),
            texts: AtomicUsize::new(0),
            fail: false,
        })
    }

    /// An embedder whose every call fails with "out of memory".
    pub fn failing(id: &str) -> Arc<HashEmbedder> {
        Arc::new(HashEmbedder {
            id: id.into(),
            texts: AtomicUsize::new(0),
            fail: true,
        })
    }

    /// How many texts it has embedded so far.
    pub fn texts_embedded(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }

    /// The vector of `text` (also what a query is embedded as).
    pub fn vector(text: &str) -> Vec<f32> {
        let mut v = [0.0f32; Self::DIMENSIONS];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = blake3::hash(word.to_lowercase().as_bytes());
            v[h.as_bytes()[0] as usize % Self::DIMENSIONS] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.iter().map(|x| x / norm).collect()
    }
}

impl ChunkEmbedder for HashEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<f32>, String> {
        if self.fail {
            return Err("out of memory".into());
        }
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().flat_map(|t| HashEmbedder::vector(t)).collect())
    }
}

/// A [`ChunkEmbedder`] for benches at a scale the model cannot embed on a
/// laptop: every text gets a copy of one of a real index's chunk or unit
/// vectors, chosen by a hash of the text, plus uniform noise scaled to a
/// given cosine with the copy, made unit length again. Deterministic: the
/// same text always gets the same vector.
pub struct SyntheticEmbedder {
    model_id: String,
    dim: usize,
    /// Every chunk and unit row of the source index, row after row.
    sources: Vec<f32>,
    /// Half-width of the uniform noise per value.
    noise: f32,
}

impl std::fmt::Debug for SyntheticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntheticEmbedder")
            .field("model_id", &self.model_id)
            .field("rows", &(self.sources.len() / self.dim.max(1)))
            .field("noise", &self.noise)
            .finish()
    }
}

/// SplitMix64: the stream of pseudo-random values of one text.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SyntheticEmbedder {
    /// Copies of the vectors of the index at `source` (ingested with a
    /// model, whose id it reports), at cosine `cosine` with their copy.
    pub fn from_index(source: &std::path::Path, cosine: f32) -> crate::Result<SyntheticEmbedder> {
        let store = VectorStore::read(source)?;
        if store.is_empty() {
            return Err(crate::Error::Vectors(format!(
                "{}: no vectors (ingest it with a model first)",
                source.display()
            )));
        }
        let files = store.files().expect("read whole");
        let sources: Vec<f32> = files
            .values()
            .flat_map(|f| f.data.iter().chain(&f.unit_data).copied())
            .collect();
        // Uniform noise of half-width a has variance a²/3, and a unit
        // vector plus noise of variance s² per value has cosine about
        // 1 / sqrt(1 + dim·s²) with itself.
        let variance = (1.0 / (cosine * cosine) - 1.0) / store.dim as f32;
        Ok(SyntheticEmbedder {
            model_id: store.model_id.clone(),
            dim: store.dim,
            sources,
            noise: (3.0 * variance).sqrt(),
        })
    }

    /// The vector of `text`.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let hash = blake3::hash(text.as_bytes());
        let mut state = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
        let rows = self.sources.len() / self.dim;
        let r = (splitmix64(&mut state) % rows as u64) as usize;
        let mut v: Vec<f32> = self.sources[r * self.dim..(r + 1) * self.dim]
            .iter()
            .map(|x| {
                let u = (splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
                x + self.noise * u
            })
            .collect();
        let norm = dot(&v, &v).sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

impl ChunkEmbedder for SyntheticEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<f32>, String> {
        Ok(texts.par_iter().flat_map_iter(|t| self.vector(t)).collect())
    }
}
