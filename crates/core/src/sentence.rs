//! Sentence segmentation with byte spans, tuned for LLM answers. The segmenter lives in the
//! text layer ([`groundcite_text::segment`]); this module keeps core's paths.

pub use groundcite_text::segment::{Sentence, SentenceKind, segment, segment_into};
