//! Vectors of the parts of a text from the text's own pass through the
//! model ("late chunking"): the text is encoded once, and a part's vector
//! pools the final token states that fall in its byte spans, the way the
//! model pools a whole text (mean, mean over the square root of the
//! length, or maximum; then normalised when the model normalises). Each
//! token goes through the model once, where embedding every part as a
//! text of its own sends each token through twice; and a part's vector
//! reads its words in their context (the sentence before a "This …").
//!
//! A part is embedded on its own, from the text its caller gives for it,
//! when its tokens cannot be pooled: the model pools the `[CLS]` token,
//! the text was cut at the model's token limit before the part ends, no
//! token falls in its spans, or lower-casing the text moved its bytes.

use std::ops::Range;

use crate::{
    EmbedError, Embedder, Embeddings, Pooling, Result, for_each_batch, normalize, normalize_row,
    pool,
};

/// One part of a text: the index of its text among those given, its byte
/// spans in that text (a unit's sentence and its lead-in, say), and the
/// text to embed for it on its own when its tokens cannot be pooled.
pub type Part<'a> = (usize, &'a [Range<usize>], &'a str);

/// The vectors [`Embedder::embed_parts`] returns: one per text, exactly
/// those [`Embedder::embed`] gives, and one per part, in the parts' order.
#[derive(Debug, Clone, PartialEq)]
pub struct PartVectors {
    /// The texts' own vectors.
    pub texts: Embeddings,
    /// The parts' vectors.
    pub parts: Embeddings,
}

impl Embedder {
    /// The vectors of `texts`, and of `parts` of them, each text through
    /// the model once (see the module docs for when a part is embedded on
    /// its own instead). A part naming a text that is not there, or spans
    /// outside its text, is an error.
    pub fn embed_parts(&self, texts: &[&str], parts: &[Part<'_>]) -> Result<PartVectors> {
        for &(of, spans, _) in parts {
            let Some(text) = texts.get(of) else {
                return Err(EmbedError::Inference(format!(
                    "a part of text {of}, of {} texts",
                    texts.len()
                )));
            };
            if let Some(span) = spans.iter().find(|s| {
                s.start > s.end
                    || s.end > text.len()
                    || !text.is_char_boundary(s.start)
                    || !text.is_char_boundary(s.end)
            }) {
                return Err(EmbedError::Inference(format!(
                    "span {span:?} of a part is not within its text of {} bytes, on character \
                     boundaries",
                    text.len()
                )));
            }
        }
        let dim = self.dim;
        let (prepared, encodings) = self.encode(texts)?;

        // Each part's tokens, or None when it is embedded on its own.
        let tokens: Vec<Option<Vec<usize>>> = parts
            .iter()
            .map(|&(of, spans, _)| {
                let poolable =
                    self.pipeline.pooling != Pooling::Cls && same_offsets(&prepared[of], texts[of]);
                poolable
                    .then(|| part_tokens(&encodings[of], texts[of], spans))
                    .flatten()
            })
            .collect();
        let mut parts_of: Vec<Vec<usize>> = vec![Vec::new(); texts.len()];
        for (p, &(of, _, _)) in parts.iter().enumerate() {
            if tokens[p].is_some() {
                parts_of[of].push(p);
            }
        }

        let mut text_data = vec![0.0f32; texts.len() * dim];
        let mut part_data = vec![0.0f32; parts.len() * dim];
        let pipeline = &self.pipeline;
        for_each_batch(
            &self.model,
            &self.device,
            self.pad_id,
            &encodings,
            |hidden, mask, batch| {
                let pooled = pool(hidden, mask, pipeline.pooling)?;
                let pooled = if pipeline.normalize {
                    normalize(&pooled)?
                } else {
                    pooled
                };
                let rows = pooled.flatten_all()?.to_vec1::<f32>()?;
                for (row, &i) in rows.chunks_exact(dim).zip(batch) {
                    text_data[i * dim..(i + 1) * dim].copy_from_slice(row);
                }
                if batch.iter().all(|&i| parts_of[i].is_empty()) {
                    return Ok(());
                }
                let width = hidden.dim(1)?;
                let states = hidden.flatten_all()?.to_vec1::<f32>()?;
                for (row, &i) in batch.iter().enumerate() {
                    let text_states = &states[row * width * dim..(row + 1) * width * dim];
                    for &p in &parts_of[i] {
                        let toks = tokens[p].as_deref().unwrap_or_default();
                        let out = &mut part_data[p * dim..(p + 1) * dim];
                        pool_tokens(text_states, dim, toks, pipeline.pooling, out);
                        if pipeline.normalize {
                            normalize_row(out);
                        }
                    }
                }
                Ok(())
            },
        )?;

        // The parts whose tokens could not be pooled, embedded on their own.
        let alone: Vec<usize> = (0..parts.len()).filter(|&p| tokens[p].is_none()).collect();
        if !alone.is_empty() {
            let own: Vec<&str> = alone.iter().map(|&p| parts[p].2).collect();
            let vectors = self.embed(&own)?;
            for (&p, row) in alone.iter().zip(vectors.rows()) {
                part_data[p * dim..(p + 1) * dim].copy_from_slice(row);
            }
        }
        Ok(PartVectors {
            texts: Embeddings {
                dim,
                data: text_data,
            },
            parts: Embeddings {
                dim,
                data: part_data,
            },
        })
    }
}

/// Whether every character of `text` is where it was in `original`
/// (lower-casing can change a character's length in bytes).
fn same_offsets(text: &str, original: &str) -> bool {
    text.len() == original.len()
        && text
            .chars()
            .zip(original.chars())
            .all(|(a, b)| a.len_utf8() == b.len_utf8())
}

/// The positions of the tokens of `encoding` (of `text`) that overlap
/// `spans`, special tokens left out; `None` when there are none, or when
/// the encoding was cut before the spans end.
fn part_tokens(
    encoding: &tokenizers::Encoding,
    text: &str,
    spans: &[Range<usize>],
) -> Option<Vec<usize>> {
    let offsets = encoding.get_offsets();
    let special = encoding.get_special_tokens_mask();
    let words = || (0..offsets.len()).filter(|&t| special[t] == 0 && offsets[t].1 > offsets[t].0);
    let covered = words().map(|t| offsets[t].1).max().unwrap_or(0);
    let cut = covered < text.trim_end().len();
    if cut
        && spans
            .iter()
            .any(|s| text[..s.end].trim_end().len() > covered)
    {
        return None;
    }
    let inside: Vec<usize> = words()
        .filter(|&t| {
            let (start, end) = offsets[t];
            spans.iter().any(|s| start < s.end && end > s.start)
        })
        .collect();
    (!inside.is_empty()).then_some(inside)
}

/// Pools the rows `tokens` of `states` (rows of `dim` values) into `out`.
fn pool_tokens(states: &[f32], dim: usize, tokens: &[usize], pooling: Pooling, out: &mut [f32]) {
    let rows = tokens.iter().map(|&t| &states[t * dim..(t + 1) * dim]);
    match pooling {
        Pooling::Max => {
            out.fill(f32::NEG_INFINITY);
            for row in rows {
                for (o, &x) in out.iter_mut().zip(row) {
                    *o = o.max(x);
                }
            }
        }
        Pooling::Mean | Pooling::MeanSqrtLen | Pooling::Cls => {
            out.fill(0.0);
            for row in rows {
                for (o, &x) in out.iter_mut().zip(row) {
                    *o += x;
                }
            }
            let n = tokens.len() as f32;
            let scale = if pooling == Pooling::MeanSqrtLen {
                n.sqrt()
            } else {
                n
            };
            out.iter_mut().for_each(|o| *o /= scale);
        }
    }
}
