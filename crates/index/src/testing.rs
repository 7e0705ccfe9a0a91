//! A deterministic stand-in for the embedding model, for tests of anything
//! that stores or searches chunk vectors (the embedded index here, the
//! PostgreSQL index in `groundcite-pg`), so that both backends are tested
//! with the same vectors. Behind the `test-support` feature.
//!
//! Each word (split on anything not alphanumeric, lowercased) is hashed
//! into one of [`HashEmbedder::DIMENSIONS`] dimensions and the vector is
//! normalised: texts that share words are close, texts that share none are
//! orthogonal or nearly.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::vectors::ChunkEmbedder;

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
