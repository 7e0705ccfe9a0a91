//! Citation markers: `[2]`, `[1][3]`, `[1, 3]`, `[2-4]`, `[2–4]`. The grammar lives in the
//! text layer ([`groundcite_text::marker`]); this module keeps core's paths.

pub use groundcite_text::marker::{
    IdRange, MAX_RANGE_SPAN, Marker, Markers, expand, marker_end_at, neutralize,
};
