//! Unit vectors as sign bits ([`SignCodes`]): the coarse estimate of the
//! answer units' cosines that picks which of the inverted file's
//! candidates are read exactly.

use rayon::prelude::*;

/// Unit vectors as sign bits: row `r` is kept as the signs of its values
/// (one bit each, `dim / 8` bytes rounded up) and the mean of their
/// absolute values, the scale that makes `scale · sign(v)` nearest to `v`.
/// A query's dot product with a row is then `scale · Σ ±q_i`, summed a
/// byte at a time from a table of the query's 256 partial sums per byte
/// ([`SignQuery`]). A coarse estimate at a thirty-second of the memory of
/// `f32` rows (plus the scale), good enough to pick the few hundred
/// candidates worth reading exactly out of thousands:
/// `vectors::VectorStore::rank_for` scores each candidate chunk's answer
/// units with it, and `bench/ann.sh` finds the same recall as with 8-bit
/// codes of the units.
#[derive(Debug, Clone, PartialEq)]
pub struct SignCodes {
    dim: usize,
    /// `dim / 8` bytes (rounded up) per row: bit `i % 8` of byte `i / 8`
    /// is set when value `i` is positive.
    bits: Vec<u8>,
    /// Per row: the mean absolute value.
    scales: Vec<f32>,
}

/// Bytes of a [`SignCodes`] row of `dim` values: one bit a value.
fn sign_row_bytes(dim: usize) -> usize {
    dim.div_ceil(8)
}

impl SignCodes {
    /// No rows yet, of `dim` values each.
    pub fn new(dim: usize) -> SignCodes {
        SignCodes {
            dim,
            bits: Vec::new(),
            scales: Vec::new(),
        }
    }

    /// Adds the codes of `data`: `data.len() / dim` rows of `dim` values
    /// (a remainder shorter than a row is ignored), on all cores.
    pub fn push_rows(&mut self, data: &[f32]) {
        let dim = self.dim;
        let width = sign_row_bytes(dim);
        let n = data.len().checked_div(dim).unwrap_or(0);
        let (from, at) = (self.scales.len(), self.bits.len());
        self.bits.resize(at + n * width, 0);
        self.scales.resize(from + n, 0.0);
        if n == 0 {
            return;
        }
        self.bits[at..]
            .par_chunks_mut(width)
            .zip(self.scales[from..].par_iter_mut())
            .zip(data.par_chunks_exact(dim))
            .for_each(|((out, scale), row)| {
                for (i, &x) in row.iter().enumerate() {
                    if x > 0.0 {
                        out[i / 8] |= 1 << (i % 8);
                    }
                }
                *scale = row.iter().map(|x| x.abs()).sum::<f32>() / dim as f32;
            });
    }

    /// Adds one row's code computed elsewhere (PostgreSQL stores them):
    /// `bits`, one bit a value, bit `i % 8` of byte `i / 8` set when value
    /// `i` is positive (`dim / 8` bytes, rounded up), and the row's mean
    /// absolute value. Fails, adding nothing, when `bits` is not a row's
    /// length.
    pub fn push_code(&mut self, bits: &[u8], scale: f32) -> Result<(), String> {
        let width = sign_row_bytes(self.dim);
        if bits.len() != width {
            return Err(format!(
                "a sign code of {} bytes, for rows of {} values ({width} bytes)",
                bits.len(),
                self.dim
            ));
        }
        self.bits.extend_from_slice(bits);
        self.scales.push(scale);
        Ok(())
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Bytes the codes hold.
    pub fn heap_bytes(&self) -> usize {
        self.bits.len() + self.scales.len() * 4
    }

    /// Reads row `row`'s first code byte and its scale, so that they are
    /// in the cache when the row is scored; the value returned depends on
    /// both, for `std::hint::black_box` to keep the reads.
    pub fn touch(&self, row: usize) -> u8 {
        let width = sign_row_bytes(self.dim);
        let scale = self.scales[row];
        self.bits[row * width].wrapping_add(u8::from(scale > 0.0))
    }

    /// The table of `query` (of the codes' dimension) that
    /// [`SignQuery::dot`] reads.
    pub fn query(&self, query: &[f32]) -> SignQuery<'_> {
        let width = sign_row_bytes(self.dim);
        let mut sums = vec![0f32; width * 256];
        for (b, table) in sums.chunks_exact_mut(256).enumerate() {
            let lane = |j: usize| query.get(b * 8 + j).copied().unwrap_or(0.0);
            // No bit set: every value counts negatively. Each further set
            // bit turns its value positive: + 2·q.
            table[0] = -(0..8).map(lane).sum::<f32>();
            for v in 1..256usize {
                let low = v.trailing_zeros() as usize;
                table[v] = table[v & (v - 1)] + 2.0 * lane(low);
            }
        }
        SignQuery { codes: self, sums }
    }

    /// The codes as bytes (little-endian): `dim` and `len` as u64, the
    /// scales (f32), the bits.
    pub fn encode(&self, out: &mut Vec<u8>) {
        for n in [self.dim, self.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        self.scales
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        out.extend_from_slice(&self.bits);
    }

    /// Reads what [`SignCodes::encode`] wrote, which must be all of
    /// `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<SignCodes, String> {
        let size = |at: usize| -> Result<usize, String> {
            let b = bytes
                .get(at..at + 8)
                .ok_or("the ANN index's unit codes are truncated")?;
            usize::try_from(u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .map_err(|_| "an ANN unit codes size too large".to_string())
        };
        let (dim, len) = (size(0)?, size(8)?);
        let too_large = || "an ANN unit codes size too large".to_string();
        let scales_end = len
            .checked_mul(4)
            .and_then(|n| n.checked_add(16))
            .ok_or_else(too_large)?;
        let end = len
            .checked_mul(sign_row_bytes(dim))
            .and_then(|n| n.checked_add(scales_end))
            .ok_or_else(too_large)?;
        if bytes.len() < end {
            return Err("the ANN index's unit codes are truncated".into());
        }
        if bytes.len() > end {
            return Err(format!(
                "{} bytes after the ANN index's unit codes",
                bytes.len() - end
            ));
        }
        Ok(SignCodes {
            dim,
            scales: bytes[16..scales_end]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
            bits: bytes[scales_end..].to_vec(),
        })
    }
}

/// A query's partial sums over [`SignCodes`] (see there).
pub struct SignQuery<'a> {
    codes: &'a SignCodes,
    /// 256 sums per byte of a row: entry `v` of byte `b` is
    /// `Σ_j ±query[8b + j]`, + where bit `j` of `v` is set.
    sums: Vec<f32>,
}

impl SignQuery<'_> {
    /// The estimated dot product of the query with row `row`.
    pub fn dot(&self, row: usize) -> f32 {
        let width = self.sums.len() / 256;
        let bits = &self.codes.bits[row * width..(row + 1) * width];
        let mut sum = 0f32;
        for (table, &b) in self.sums.chunks_exact(256).zip(bits) {
            sum += table[b as usize];
        }
        sum * self.codes.scales[row]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ann::dot;
    use crate::ann::tests::rows;

    /// `scale · Σ ±q_i`, computed value by value.
    fn sign_dot(row: &[f32], query: &[f32]) -> f32 {
        let scale = row.iter().map(|x| x.abs()).sum::<f32>() / row.len() as f32;
        let signed: f32 = row
            .iter()
            .zip(query)
            .map(|(x, q)| if *x > 0.0 { *q } else { -*q })
            .sum();
        scale * signed
    }

    #[test]
    fn sign_codes_sum_the_query_by_the_row_s_signs() {
        // 12 values: the second byte of a row holds four.
        for dim in [12, 64] {
            let data = rows(40, dim, 3, 8);
            let mut codes = SignCodes::new(dim);
            codes.push_rows(&data[..20 * dim]);
            codes.push_rows(&data[20 * dim..]);
            assert_eq!(codes.len(), 40);
            let query = &data[dim..2 * dim];
            let table = codes.query(query);
            for (r, row) in data.chunks_exact(dim).enumerate() {
                let want = sign_dot(row, query);
                assert!(
                    (table.dot(r) - want).abs() < 1e-4,
                    "dim {dim}, row {r}: {} against {want}",
                    table.dot(r)
                );
            }
        }
    }

    #[test]
    fn sign_codes_estimate_dot_products_well_enough_to_rank_groups() {
        let dim = 384;
        let data = rows(600, dim, 6, 9);
        let mut codes = SignCodes::new(dim);
        codes.push_rows(&data);
        let query = &data[4 * dim..5 * dim];
        let table = codes.query(query);
        let mut errors = 0f32;
        for (r, row) in data.chunks_exact(dim).enumerate() {
            errors += (table.dot(r) - dot(row, query)).abs();
        }
        assert!(errors / 600.0 < 0.1, "mean error {}", errors / 600.0);
        // The estimate ranks the query's own group above every other.
        let own = (0..600).filter(|r| r % 6 == 4).map(|r| table.dot(r));
        let other = (0..600).filter(|r| r % 6 != 4).map(|r| table.dot(r));
        assert!(own.fold(f32::MAX, f32::min) > other.fold(f32::MIN, f32::max));
    }

    #[test]
    fn sign_codes_pushed_one_by_one_equal_those_computed_from_rows() {
        let dim = 12;
        let data = rows(5, dim, 2, 11);
        let mut computed = SignCodes::new(dim);
        computed.push_rows(&data);
        let mut pushed = SignCodes::new(dim);
        for r in 0..5 {
            let bits = &computed.bits[r * 2..(r + 1) * 2];
            pushed.push_code(bits, computed.scales[r]).unwrap();
        }
        assert_eq!(pushed, computed);
        // A code of another length is refused and adds nothing.
        assert!(
            pushed
                .push_code(&[0; 3], 1.0)
                .unwrap_err()
                .contains("3 bytes")
        );
        assert_eq!(pushed.len(), 5);
    }

    #[test]
    fn sign_codes_round_trip_through_bytes_and_refuse_damaged_ones() {
        let data = rows(30, 20, 2, 10);
        let mut codes = SignCodes::new(20);
        codes.push_rows(&data);
        let mut bytes = Vec::new();
        codes.encode(&mut bytes);
        assert_eq!(bytes.len(), 16 + 30 * 4 + 30 * 3);
        assert_eq!(SignCodes::decode(&bytes).unwrap(), codes);
        assert!(
            SignCodes::decode(&bytes[..bytes.len() - 1])
                .unwrap_err()
                .contains("truncated")
        );
        assert!(
            SignCodes::decode(&bytes[..5])
                .unwrap_err()
                .contains("truncated")
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(SignCodes::decode(&longer).unwrap_err().contains("after"));
        let mut huge = bytes.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(SignCodes::decode(&huge).is_err());
    }
}
