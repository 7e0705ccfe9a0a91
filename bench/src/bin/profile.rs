//! Loops `verify` over the bench input, for instruction counts:
//!
//! ```sh
//! cargo build --release -p groundcite-bench --bin profile
//! valgrind --tool=callgrind target/release/profile 1000
//! callgrind_annotate callgrind.out.<pid>
//! ```

use groundcite_verify::{LexicalVerifier, Verifier};
use std::hint::black_box;

#[path = "../../../crates/verify/benches/data.rs"]
mod data;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let v = LexicalVerifier::default();
    let mut total = 0;
    for _ in 0..n {
        let j = v.verify(
            black_box(data::QUESTION),
            black_box(&data::PASSAGES),
            black_box(&data::CLAIMS),
        );
        total += j.len();
    }
    println!("{total}");
}
