//! What an ingest embeds, and with what: the [`ChunkEmbedder`] a model
//! is seen as, each chunk's [`ChunkTexts`] (its [`embedding_text`] and its
//! answer units as parts of it), [`embed_chunks`], and how the chunks' and
//! the units' vectors are computed ([`UnitVectorScheme`], [`Pooled`]: each
//! text through the model on its own, each unit pooled from its chunk's
//! pass, or each chunk pooled from its units' passes).

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

/// How an ingest computes the vectors of a chunk and of its answer units
/// (the `unit_vectors` setting). Measured on the handbook's questions and
/// on the Debian Administrator's Handbook (BENCHMARKS.md, "Answering"):
/// `PooledChunks` and `Separate` give the same answers, the gold page
/// first within a few questions of each other, and `PooledChunks` takes
/// half the ingest time; `PooledUnits` is as fast but answers worse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UnitVectorScheme {
    /// The chunk and each of its units embedded as texts of their own:
    /// each token goes through the model twice (once in its chunk, once in
    /// its unit), about twice the ingest time of the others.
    #[serde(rename = "separate")]
    Separate,
    /// Each unit pooled from its chunk's own pass
    /// (`groundcite_embed::Embedder::embed_parts`): each token through the
    /// model once, but a unit's vector leans to its chunk's topic, so the
    /// extractive answer's sentence choice is weaker.
    #[serde(rename = "pooled-units", alias = "pooled")]
    PooledUnits,
    /// Each unit embedded as a text of its own, and the chunk's vector
    /// pooled from its units' passes and its section label's
    /// ([`Pooled`]): each token through the model once, and every
    /// unit's vector exactly the separate one. The default.
    #[default]
    #[serde(rename = "pooled-chunks")]
    PooledChunks,
}

impl UnitVectorScheme {
    /// Every scheme.
    pub const ALL: [UnitVectorScheme; 3] = [
        UnitVectorScheme::Separate,
        UnitVectorScheme::PooledUnits,
        UnitVectorScheme::PooledChunks,
    ];

    /// The scheme of configuration name `name`, as the configuration
    /// reads it (`pooled` is `pooled-units`, its earlier name).
    pub fn named(name: &str) -> Option<UnitVectorScheme> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
    }

    /// What the scheme adds to its model's id (nothing for `Separate`).
    pub fn suffix(self) -> &'static str {
        match self {
            UnitVectorScheme::Separate => "",
            UnitVectorScheme::PooledUnits => "+pooled-units",
            UnitVectorScheme::PooledChunks => "+pooled-chunks",
        }
    }

    /// The name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            UnitVectorScheme::Separate => "separate",
            UnitVectorScheme::PooledUnits => "pooled-units",
            UnitVectorScheme::PooledChunks => "pooled-chunks",
        }
    }
}

/// An embedding model under a pooling [`UnitVectorScheme`]
/// (`PooledUnits` or `PooledChunks`; under `Separate` the model is its own
/// [`ChunkEmbedder`]). Its model id is the model's with the scheme's
/// [`UnitVectorScheme::suffix`] after it, so vectors of one scheme are
/// never mixed with another's.
#[cfg(feature = "embed")]
#[derive(Debug, Clone)]
pub struct Pooled {
    embedder: Arc<groundcite_embed::Embedder>,
    scheme: UnitVectorScheme,
    model_id: String,
}

#[cfg(feature = "embed")]
impl Pooled {
    /// `embedder` under `scheme`.
    pub fn new(embedder: Arc<groundcite_embed::Embedder>, scheme: UnitVectorScheme) -> Pooled {
        let model_id = format!("{}{}", embedder.model_id(), scheme.suffix());
        Pooled {
            embedder,
            scheme,
            model_id,
        }
    }

    /// [`UnitVectorScheme::PooledUnits`]: the texts through the model, and
    /// each part pooled from its text's pass.
    fn pool_units(&self, texts: &[&str], parts: &[Part<'_>]) -> Result<Vec<f32>, String> {
        let vectors = self
            .embedder
            .embed_parts(texts, parts)
            .map_err(|e| e.to_string())?;
        let mut data = vectors.texts.into_flat();
        data.extend_from_slice(vectors.parts.as_flat());
        Ok(data)
    }

    /// [`UnitVectorScheme::PooledChunks`]: the parts' own texts through the
    /// model (their rows are returned as they are), then each text's
    /// section label (its first line), or the whole text when it has no
    /// parts; each text's vector is pooled from its parts' passes and moved
    /// [`LABEL_SHARE`] of the way to its label's.
    fn pool_chunks(&self, texts: &[&str], parts: &[Part<'_>]) -> Result<Vec<f32>, String> {
        let mut units: Vec<Vec<usize>> = vec![Vec::new(); texts.len()];
        let mut labels: Vec<Option<usize>> = vec![None; texts.len()];
        let mut inputs: Vec<&str> = Vec::with_capacity(parts.len() + texts.len());
        for (p, &(of, _, own)) in parts.iter().enumerate() {
            units
                .get_mut(of)
                .ok_or_else(|| format!("a part of text {of}, of {} texts", texts.len()))?
                .push(p);
            inputs.push(own);
        }
        for ((text, group), label_at) in texts.iter().zip(&mut units).zip(&mut labels) {
            if group.is_empty() {
                group.push(inputs.len());
                inputs.push(text);
            } else if let Some((label, _)) = text.split_once('\n')
                && !label.trim().is_empty()
            {
                *label_at = Some(inputs.len());
                inputs.push(label);
            }
        }
        let groups: Vec<&[usize]> = units.iter().map(Vec::as_slice).collect();
        let vectors = self
            .embedder
            .embed_groups(&inputs, &groups)
            .map_err(|e| e.to_string())?;
        let dim = vectors.groups.dim();
        let mut data = vectors.groups.into_flat();
        for (row, label_at) in data.chunks_exact_mut(dim).zip(&labels) {
            if let Some(at) = *label_at {
                mix_in(row, vectors.texts.row(at), LABEL_SHARE);
            }
        }
        data.extend_from_slice(&vectors.texts.as_flat()[..parts.len() * dim]);
        Ok(data)
    }
}

#[cfg(feature = "embed")]
impl ChunkEmbedder for Pooled {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<f32>, String> {
        ChunkEmbedder::embed_texts(self.embedder.as_ref(), texts)
    }

    fn embed_parts(&self, texts: &[&str], parts: &[Part<'_>]) -> Result<Vec<f32>, String> {
        match self.scheme {
            UnitVectorScheme::Separate => {
                ChunkEmbedder::embed_parts(self.embedder.as_ref(), texts, parts)
            }
            UnitVectorScheme::PooledUnits => self.pool_units(texts, parts),
            UnitVectorScheme::PooledChunks => self.pool_chunks(texts, parts),
        }
    }
}

/// How much of a [`UnitVectorScheme::PooledChunks`] chunk vector is its section label's
/// vector, the rest its units' pooled vector. In a chunk's own pass the
/// label's words colour every token (the topic the sentences leave
/// implicit); pooled from its units alone, a chunk loses that. Fitted on
/// the tune half of the handbook's paraphrased questions (gold page in the
/// top 1 / 3 / 5 for 17 / 25 / 26 of 30 with the label pooled as one more
/// text; 19 / 25 / 26 at 0.15, 18 / 26 / 26 at 0.25, 16 / 25 / 26 at 0.35,
/// 16 / 23 / 26 at 0.5).
pub const LABEL_SHARE: f32 = 0.25;

/// `row` moved `share` of the way to `toward`, then scaled to unit length.
#[cfg(feature = "embed")]
fn mix_in(row: &mut [f32], toward: &[f32], share: f32) {
    row.iter_mut()
        .zip(toward)
        .for_each(|(x, &t)| *x = (1.0 - share) * *x + share * t);
    groundcite_embed::normalize_row(row);
}

/// The scheme whose vectors model id `id` names: the one whose suffix
/// it ends with, `Separate` when none.
fn scheme_of(id: &str) -> UnitVectorScheme {
    UnitVectorScheme::ALL
        .into_iter()
        .find(|s| !s.suffix().is_empty() && id.ends_with(s.suffix()))
        .unwrap_or(UnitVectorScheme::Separate)
}

/// Why an index's vectors of model `stored` do not serve the configured
/// `configured`, for an error message: another model, or the same model
/// under another [`UnitVectorScheme`].
pub fn mismatch(stored: &str, configured: &str) -> String {
    let base = |id: &'_ str| {
        id.strip_suffix(scheme_of(id).suffix())
            .unwrap_or(id)
            .to_owned()
    };
    if base(stored) == base(configured) {
        format!(
            "it was built with unit_vectors = \"{}\" (set it to read the index as it is)",
            scheme_of(stored).name()
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
        _ => Arc::new(Pooled::new(embedder, scheme)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheme_is_named_as_the_configuration_names_it() {
        for scheme in UnitVectorScheme::ALL {
            assert_eq!(UnitVectorScheme::named(scheme.name()), Some(scheme));
            let json = serde_json::to_string(&scheme).unwrap();
            assert_eq!(json, format!("\"{}\"", scheme.name()));
            assert_eq!(
                serde_json::from_str::<UnitVectorScheme>(&json).unwrap(),
                scheme
            );
        }
        // The earlier name of pooled units still reads.
        assert_eq!(
            UnitVectorScheme::named("pooled"),
            Some(UnitVectorScheme::PooledUnits)
        );
        assert_eq!(
            serde_json::from_str::<UnitVectorScheme>("\"pooled\"").unwrap(),
            UnitVectorScheme::PooledUnits
        );
        assert_eq!(UnitVectorScheme::named("chunks"), None);
        assert_eq!(UnitVectorScheme::default(), UnitVectorScheme::PooledChunks);
    }

    #[test]
    fn a_mismatch_names_the_scheme_an_index_was_built_with() {
        let model = "all-MiniLM-L6-v2@30cd";
        let under = |suffix: &str| format!("{model}{suffix}");
        for stored_scheme in UnitVectorScheme::ALL {
            let (stored, name) = (under(stored_scheme.suffix()), stored_scheme.name());
            for configured in UnitVectorScheme::ALL.map(|s| under(s.suffix())) {
                if configured == stored {
                    continue;
                }
                let why = mismatch(&stored, &configured);
                assert!(
                    why.contains(&format!("unit_vectors = \"{name}\"")),
                    "{stored} read as {configured}: {why}"
                );
            }
        }
        let why = mismatch(&under("+pooled-chunks"), "other-model@12");
        assert!(why.contains("another model"), "{why}");
    }
}
