//! What an ingest embeds, and with what: the [`ChunkEmbedder`] a model
//! is seen as, each chunk's [`ChunkTexts`] (its [`embedding_text`] and its
//! answer units as parts of it), [`embed_chunks`], and how the units'
//! vectors are computed ([`UnitVectorScheme`]: each on its own, or pooled
//! from the chunk's pass by [`PooledUnits`]).

use std::ops::Range;
#[cfg(feature = "embed")]
use std::sync::Arc;

use crate::Chunk;

/// A part of a text to embed from the text's own pass through the model:
/// the index of its text, its byte spans in that text, and the text to
/// embed for it on its own when its tokens cannot be pooled (the shape of
/// `groundcite_embed::Part`).
pub type Part<'a> = (usize, &'a [Range<usize>], &'a str);

/// A sentence-embedding model as the index needs it. Implemented by
/// `groundcite_embed::Embedder`; tests use small deterministic doubles.
pub trait ChunkEmbedder: Send + Sync {
    /// Names the model and its settings; vectors of another id are stale.
    fn model_id(&self) -> &str;
    /// The vectors of `texts`, unit length, row after row, in input order.
    fn embed_texts(&self, texts: &[&str]) -> std::result::Result<Vec<f32>, String>;
    /// The vectors of `texts`, then those of `parts` of them, row after
    /// row in input order. A model that can pools a part's vector from its
    /// text's own pass (`groundcite_embed::Embedder::embed_parts`); this
    /// default embeds each part's own text.
    fn embed_parts(
        &self,
        texts: &[&str],
        parts: &[Part<'_>],
    ) -> std::result::Result<Vec<f32>, String> {
        let mut all = texts.to_vec();
        all.extend(parts.iter().map(|p| p.2));
        self.embed_texts(&all)
    }
}

#[cfg(feature = "embed")]
impl ChunkEmbedder for groundcite_embed::Embedder {
    fn model_id(&self) -> &str {
        groundcite_embed::Embedder::model_id(self)
    }

    fn embed_texts(&self, texts: &[&str]) -> std::result::Result<Vec<f32>, String> {
        self.embed(texts)
            .map(groundcite_embed::Embeddings::into_flat)
            .map_err(|e| e.to_string())
    }
}

/// How an ingest computes the vectors of a chunk's answer units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitVectorScheme {
    /// Each unit embedded as a text of its own: each token goes through
    /// the model about twice (once in its chunk, once in its unit). The
    /// default: the sentence the extractive answer picks holds the fact
    /// most often this way.
    #[default]
    Separate,
    /// Each unit pooled from its chunk's own pass
    /// (`groundcite_embed::Embedder::embed_parts`): each token through the
    /// model once, about half the ingest time, retrieval about the same,
    /// but a unit's vector leans to its chunk's topic, so the extractive
    /// answer's sentence choice is weaker (BENCHMARKS.md, "Answering").
    Pooled,
}

impl UnitVectorScheme {
    /// The name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            UnitVectorScheme::Separate => "separate",
            UnitVectorScheme::Pooled => "pooled",
        }
    }
}

/// An embedding model whose answer-unit vectors are pooled from their
/// chunk's pass ([`UnitVectorScheme::Pooled`]); its model id is the
/// model's with `+pooled-units` after it, so vectors of one scheme are
/// never mixed with the other's.
#[cfg(feature = "embed")]
#[derive(Debug, Clone)]
pub struct PooledUnits {
    embedder: Arc<groundcite_embed::Embedder>,
    model_id: String,
}

#[cfg(feature = "embed")]
impl PooledUnits {
    /// `embedder`, pooling answer units from their chunk's pass.
    pub fn new(embedder: Arc<groundcite_embed::Embedder>) -> PooledUnits {
        let model_id = format!("{}{POOLED_SUFFIX}", embedder.model_id());
        PooledUnits { embedder, model_id }
    }
}

#[cfg(feature = "embed")]
impl ChunkEmbedder for PooledUnits {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn embed_texts(&self, texts: &[&str]) -> std::result::Result<Vec<f32>, String> {
        ChunkEmbedder::embed_texts(self.embedder.as_ref(), texts)
    }

    fn embed_parts(
        &self,
        texts: &[&str],
        parts: &[Part<'_>],
    ) -> std::result::Result<Vec<f32>, String> {
        let vectors = self
            .embedder
            .embed_parts(texts, parts)
            .map_err(|e| e.to_string())?;
        let mut data = vectors.texts.into_flat();
        data.extend_from_slice(vectors.parts.as_flat());
        Ok(data)
    }
}

/// What [`PooledUnits`] adds to its model's id.
const POOLED_SUFFIX: &str = "+pooled-units";

/// Why an index's vectors of model `stored` do not serve the configured
/// `configured`, for an error message: another model, or the same model
/// under the other [`UnitVectorScheme`].
pub fn mismatch(stored: &str, configured: &str) -> String {
    let base = |id: &'_ str| id.strip_suffix(POOLED_SUFFIX).unwrap_or(id).to_owned();
    if base(stored) == base(configured) {
        let scheme = if stored.ends_with(POOLED_SUFFIX) {
            UnitVectorScheme::Pooled
        } else {
            UnitVectorScheme::Separate
        };
        format!(
            "it was built with unit_vectors = \"{}\" (set it to read the index as it is)",
            scheme.name()
        )
    } else {
        format!("its vectors are of another model ({stored})")
    }
}

/// The ingest embedder of `embedder` under `scheme`.
#[cfg(feature = "embed")]
pub fn chunk_embedder(
    embedder: Arc<groundcite_embed::Embedder>,
    scheme: UnitVectorScheme,
) -> Arc<dyn ChunkEmbedder> {
    match scheme {
        UnitVectorScheme::Separate => embedder,
        UnitVectorScheme::Pooled => Arc::new(PooledUnits::new(embedder)),
    }
}

/// How many chunks (with their answer units) one embedding call gets
/// during an ingest (one progress step each).
pub const EMBED_STEP: usize = 128;

/// What is embedded for a chunk: its [`embedding_text`], and each of its
/// answer units (`groundcite_core::unit::units` of its section and text)
/// as a part of that text: the unit's spans moved past the section line,
/// a table row's with the section label before them, and the unit's
/// embedded text for when it is embedded on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkTexts {
    /// The chunk's embedding text.
    pub text: String,
    /// Each unit's spans in `text` and its own text, in unit order.
    pub units: Vec<(Vec<Range<usize>>, String)>,
}

impl ChunkTexts {
    /// The texts of the passage `(section, text)`, a chunk's or one sent.
    pub fn of(section: &str, text: &str) -> ChunkTexts {
        let shift = section.len() + 1;
        let units = groundcite_core::unit::units(&[(section, text)])
            .into_iter()
            .map(|u| {
                let mut spans = Vec::with_capacity(u.spans.len() + 1);
                if u.kind == groundcite_core::unit::UnitKind::TableRow && !section.is_empty() {
                    spans.push(0..section.len());
                }
                spans.extend(u.spans.iter().map(|s| s.start + shift..s.end + shift));
                (spans, u.embedded)
            })
            .collect();
        ChunkTexts {
            text: passage_text(section, text),
            units,
        }
    }

    /// Its units as parts of text `of` of an embedding call.
    pub fn parts(&self, of: usize) -> impl Iterator<Item = Part<'_>> {
        self.units
            .iter()
            .map(move |(spans, own)| (of, spans.as_slice(), own.as_str()))
    }
}

/// The vectors of `chunks` and of their answer units, each chunk's text
/// through the model once ([`ChunkEmbedder::embed_parts`]): the chunk rows
/// in chunk order, then the unit rows, chunk after chunk, and their
/// dimension (`dim` when there is nothing to embed). Chunks go in calls of
/// [`EMBED_STEP`] taken longest first, so each call (and each batch the
/// model pads) holds texts of similar length; `progress(done, total)`
/// counts chunks and is told before each call and at the end. Fails when
/// the model returns rows of another size than `dim` (when known) or
/// inconsistent ones.
pub fn embed_chunks(
    embedder: &dyn ChunkEmbedder,
    chunks: &[&ChunkTexts],
    dim: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> std::result::Result<(Vec<f32>, Vec<f32>, usize), String> {
    let total = chunks.len();
    let mut first_unit = Vec::with_capacity(total + 1);
    first_unit.push(0);
    for c in chunks {
        first_unit.push(first_unit.last().copied().unwrap_or(0) + c.units.len());
    }
    let units = first_unit[total];
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(chunks[i].text.len()));
    let mut dim = dim;
    let (mut chunk_data, mut unit_data) = (Vec::new(), Vec::new());
    for (step, batch) in order.chunks(EMBED_STEP).enumerate() {
        progress(step * EMBED_STEP, total);
        let texts: Vec<&str> = batch.iter().map(|&i| chunks[i].text.as_str()).collect();
        let parts: Vec<Part<'_>> = batch
            .iter()
            .enumerate()
            .flat_map(|(at, &i)| chunks[i].parts(at))
            .collect();
        let rows = texts.len() + parts.len();
        let vectors = embedder.embed_parts(&texts, &parts)?;
        let got = vectors.len() / rows;
        if got == 0 || vectors.len() != got * rows || (dim != 0 && dim != got) {
            return Err(format!(
                "the model returned {} values for {rows} texts (vectors of {dim} expected)",
                vectors.len(),
            ));
        }
        if dim == 0 {
            dim = got;
        }
        chunk_data.resize(total * dim, 0.0);
        unit_data.resize(units * dim, 0.0);
        let (own, part_rows) = vectors.split_at(texts.len() * dim);
        let mut part_rows = part_rows.chunks_exact(dim);
        for (&i, row) in batch.iter().zip(own.chunks_exact(dim)) {
            chunk_data[i * dim..(i + 1) * dim].copy_from_slice(row);
            for u in first_unit[i]..first_unit[i + 1] {
                let row = part_rows.next().expect("one row per part");
                unit_data[u * dim..(u + 1) * dim].copy_from_slice(row);
            }
        }
    }
    if total > 0 {
        progress(total, total);
    }
    Ok((chunk_data, unit_data, dim))
}

/// The text embedded for a chunk: its section label (the heading path,
/// which names the topic the chunk's own words often leave implicit) on
/// the first line, then its text. The chunk text already begins with its
/// own heading line; the label adds the headings above it. Measured on the
/// handbook questions (see `bench/src/bin/fusion.rs`) against the text alone.
pub fn embedding_text(chunk: &Chunk) -> String {
    passage_text(&chunk.section, &chunk.text)
}

/// [`embedding_text`] of a passage given as its section label and text.
pub fn passage_text(section: &str, text: &str) -> String {
    format!("{section}\n{text}")
}

/// The chunk embedded after its page title and section label, the title
/// left out when the label already starts with it: a candidate for
/// [`embedding_text`], measured by `bench/src/bin/fusion.rs --with-title` and
/// not adopted (paraphrased questions, weighted fusion: gold page in the
/// top 1 / 3 / 5 for 37 / 49 / 54 of 60 against 38 / 48 / 53; dense alone
/// 32 / 46 / 49 against 33 / 45 / 49: within noise).
pub fn titled_text(chunk: &Chunk) -> String {
    if chunk.title.is_empty() || chunk.section.starts_with(&chunk.title) {
        embedding_text(chunk)
    } else if chunk.section.is_empty() {
        format!("{}\n{}", chunk.title, chunk.text)
    } else {
        format!("{} › {}\n{}", chunk.title, chunk.section, chunk.text)
    }
}
