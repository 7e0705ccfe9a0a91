//! Vectors of groups of texts from the texts' own passes through the
//! model: a group's vector pools the token states of all its texts as if
//! they were one text's (mean pooling: the token-weighted mean of the
//! texts' means; mean over the square root of the length: their sums over
//! the root of all their tokens; max: the largest of each value), then is
//! normalised when the model normalises. A passage's vector can so be read
//! from the passes of its sentences: each token goes through the model
//! once, and each sentence's own vector is exactly what [`Embedder::embed`]
//! gives it. A model that pools `[CLS]` has no token states to share: its
//! group vector is the mean of its texts' `[CLS]` states.

use crate::{EmbedError, Embedder, Embeddings, Result, forward_in_batches, normalize_row, pool};

/// The vectors [`Embedder::embed_groups`] returns: one per text, those
/// [`Embedder::embed`] gives (within float rounding, about 1e-7), and one
/// per group, in the groups' order.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupVectors {
    /// The texts' own vectors.
    pub texts: Embeddings,
    /// The groups' vectors.
    pub groups: Embeddings,
}

impl Embedder {
    /// The vectors of `texts`, and of `groups` of them (each a list of
    /// indices into `texts`), each text through the model once. A group
    /// that is empty or names a text that is not there is an error.
    pub fn embed_groups(&self, texts: &[&str], groups: &[&[usize]]) -> Result<GroupVectors> {
        if let Some((g, members)) = groups
            .iter()
            .enumerate()
            .find(|(_, m)| m.is_empty() || m.iter().any(|&i| i >= texts.len()))
        {
            return Err(EmbedError::Inference(format!(
                "group {g} holds {members:?}: a group needs texts among the {} given",
                texts.len()
            )));
        }
        let dim = self.dim;
        let (_, encodings) = self.encode(texts)?;
        let pooling = self.pipeline.pooling;
        // Each text pooled but not yet normalised, and its token count.
        let pooled = forward_in_batches(
            &self.model,
            &self.device,
            self.pad_id,
            &encodings,
            dim,
            |hidden, mask| pool(hidden, mask, pooling),
        )?;
        let counts: Vec<f32> = encodings
            .iter()
            .map(|e| e.get_attention_mask().iter().sum::<u32>().max(1) as f32)
            .collect();

        let mut group_data = vec![0.0f32; groups.len() * dim];
        for (members, out) in groups.iter().zip(group_data.chunks_exact_mut(dim)) {
            let row = |i: usize| &pooled[i * dim..(i + 1) * dim];
            match pooling {
                crate::Pooling::Max => {
                    out.fill(f32::NEG_INFINITY);
                    for &i in *members {
                        out.iter_mut().zip(row(i)).for_each(|(o, &x)| *o = o.max(x));
                    }
                }
                crate::Pooling::Mean | crate::Pooling::MeanSqrtLen | crate::Pooling::Cls => {
                    // Each text's share: its token sum for the mean pools,
                    // an equal share of the [CLS] states otherwise.
                    let weight = |i: usize| match pooling {
                        crate::Pooling::Mean => counts[i],
                        crate::Pooling::MeanSqrtLen => counts[i].sqrt(),
                        _ => 1.0,
                    };
                    out.fill(0.0);
                    for &i in *members {
                        let w = weight(i);
                        out.iter_mut().zip(row(i)).for_each(|(o, &x)| *o += w * x);
                    }
                    let tokens: f32 = members.iter().map(|&i| counts[i]).sum();
                    let scale = match pooling {
                        crate::Pooling::Mean => tokens,
                        crate::Pooling::MeanSqrtLen => tokens.sqrt(),
                        _ => members.len() as f32,
                    };
                    out.iter_mut().for_each(|o| *o /= scale);
                }
            }
        }
        let mut text_data = pooled;
        if self.pipeline.normalize {
            text_data.chunks_exact_mut(dim).for_each(normalize_row);
            group_data.chunks_exact_mut(dim).for_each(normalize_row);
        }
        Ok(GroupVectors {
            texts: Embeddings {
                dim,
                data: text_data,
            },
            groups: Embeddings {
                dim,
                data: group_data,
            },
        })
    }
}
