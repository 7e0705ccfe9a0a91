//! The encoder's element-wise steps written for the CPU as candle custom
//! operations, where candle's general ones cost as much as the matrix
//! products around them: each block's closing bias, skip connection and
//! layer norm in one pass; the feed-forward block's bias and activation in
//! one pass (GELU through a rational approximation of `erf` instead of
//! libm's), and the whole of each head's attention (scores, softmax over the
//! tokens that are not padding, weighted values) in one pass per text
//! instead of a thread hand-off for each of its small products. Each splits
//! its work over rayon's threads and runs it through pulp, which compiles it
//! for the CPU's widest vectors (AVX2 where there is one) and picks that
//! version at run time; results agree with the exact functions within 1e-6.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape};
use rayon::prelude::*;

use crate::bert::Activation;

/// Elements a thread takes at a time.
const CHUNK: usize = 1 << 14;

/// `activation(x + bias)` over the last dimension of a contiguous f32
/// tensor whose last dimension is `bias.len()`.
pub(crate) struct BiasActivation<'a> {
    pub(crate) bias: &'a [f32],
    pub(crate) activation: Activation,
}

impl CustomOp1 for BiasActivation<'_> {
    fn name(&self) -> &'static str {
        "bias-activation"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(storage, layout, self.name())?;
        let width = self.bias.len();
        if width == 0 || layout.dims().last() != Some(&width) {
            candle_core::bail!("bias-activation: last dimension is not the bias's {width}");
        }
        let mut out = x.to_vec();
        // Whole rows per chunk, so the bias lines up with each row.
        let rows_per_chunk = (CHUNK / width).max(1);
        let arch = pulp::Arch::new();
        out.par_chunks_mut(rows_per_chunk * width).for_each(|rows| {
            arch.dispatch(Activate {
                rows,
                bias: self.bias,
                activation: self.activation,
            })
        });
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

/// Rows of a [`BiasActivation`], run by pulp at the CPU's widest vectors.
struct Activate<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
    activation: Activation,
}

impl pulp::WithSimd for Activate<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.bias.len()) {
            for (v, b) in row.iter_mut().zip(self.bias) {
                *v = activate(*v + b, self.activation);
            }
        }
    }
}

#[inline(always)]
fn activate(x: f32, activation: Activation) -> f32 {
    match activation {
        Activation::Gelu => 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2)),
        Activation::GeluTanh => {
            let inner = 0.797_884_6 * (x + 0.044_715 * x * x * x);
            0.5 * x * (1.0 + inner.tanh())
        }
        Activation::Relu => x.max(0.0),
    }
}

/// The error function as a ratio of two polynomials in `x²` over
/// `|x| ≤ 4` (beyond which `erf` is ±1 in f32); absolute error below 5e-7.
/// No branch and no `exp`, so the compiler vectorises the loops that call it.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    const P: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const Q: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = P.iter().fold(0.0, |acc, &c| acc * x2 + c);
    let q = Q.iter().fold(0.0, |acc, &c| acc * x2 + c);
    x * p / q
}

/// `layer_norm(x + bias + residual)` over rows of `width = bias.len()`
/// values (a post-norm block's end: its last product's bias, the skip
/// connection and the norm in one pass), `x` and the residual contiguous
/// f32 tensors of the same shape.
pub(crate) struct AddNorm<'a> {
    pub(crate) bias: &'a [f32],
    pub(crate) weight: &'a [f32],
    pub(crate) shift: &'a [f32],
    pub(crate) eps: f32,
}

impl CustomOp2 for AddNorm<'_> {
    fn name(&self) -> &'static str {
        "add-norm"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        x_layout: &Layout,
        residual: &CpuStorage,
        residual_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(x, x_layout, self.name())?;
        let residual = contiguous_f32(residual, residual_layout, self.name())?;
        let width = self.bias.len();
        if x_layout.shape() != residual_layout.shape()
            || x_layout.dims().last() != Some(&width)
            || self.weight.len() != width
            || self.shift.len() != width
        {
            candle_core::bail!("add-norm: shapes disagree");
        }
        let mut out = x.to_vec();
        let rows_per_chunk = (CHUNK / width).max(1);
        let arch = pulp::Arch::new();
        out.par_chunks_mut(rows_per_chunk * width)
            .zip(residual.par_chunks(rows_per_chunk * width))
            .for_each(|(rows, residual)| {
                arch.dispatch(Normalize {
                    rows,
                    residual,
                    op: self,
                })
            });
        Ok((CpuStorage::F32(out), x_layout.shape().clone()))
    }
}

/// Rows of an [`AddNorm`], run by pulp at the CPU's widest vectors.
struct Normalize<'a, 'o> {
    rows: &'a mut [f32],
    residual: &'a [f32],
    op: &'a AddNorm<'o>,
}

impl pulp::WithSimd for Normalize<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let op = self.op;
        let width = op.bias.len();
        let inverse_width = 1.0 / width as f32;
        for (row, residual) in self
            .rows
            .chunks_exact_mut(width)
            .zip(self.residual.chunks_exact(width))
        {
            for ((v, r), b) in row.iter_mut().zip(residual).zip(op.bias) {
                *v += r + b;
            }
            let mean = sum(row, |v| v) * inverse_width;
            row.iter_mut().for_each(|v| *v -= mean);
            let variance = sum(row, |v| v * v) * inverse_width;
            let scale = 1.0 / (variance + op.eps).sqrt();
            for ((v, w), s) in row.iter_mut().zip(op.weight).zip(op.shift) {
                *v = *v * scale * w + s;
            }
        }
    }
}

/// Multi-head self-attention over the fused query/key/value states of a
/// batch (batch, tokens, 3 · hidden; the query already scaled by
/// `1/√head_size`), into the heads' context (batch, tokens, hidden): for
/// each token and head, softmax over the kept keys of `q·k`, then the
/// weighted sum of their values. `keep[b * tokens + j]` says whether token
/// `j` of text `b` is a token rather than padding: padding is never
/// attended to, and its own rows are left at zero (nothing reads them).
/// One pass per text, texts split over rayon's threads, so the many small
/// products of a head never pay a thread hand-off each.
pub(crate) struct Attention<'a> {
    pub(crate) keep: &'a [bool],
    pub(crate) heads: usize,
    /// The query/key/value product's bias (3 · hidden), added here.
    pub(crate) bias: &'a [f32],
}

impl CustomOp1 for Attention<'_> {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let qkv = contiguous_f32(storage, layout, self.name())?;
        let (batch, tokens, width) = layout.shape().dims3()?;
        let hidden = width / 3;
        if width % 3 != 0 || self.heads == 0 || hidden % self.heads != 0 || self.bias.len() != width
        {
            candle_core::bail!("attention: width {width} is not 3 × {} heads", self.heads);
        }
        if self.keep.len() != batch * tokens {
            candle_core::bail!(
                "attention: {} mask entries for {batch} texts of {tokens} tokens",
                self.keep.len()
            );
        }
        let head = hidden / self.heads;
        let mut out = vec![0.0f32; batch * tokens * hidden];
        let arch = pulp::Arch::new();
        out.par_chunks_mut(tokens * hidden)
            .zip(qkv.par_chunks(tokens * width))
            .zip(self.keep.par_chunks(tokens))
            .for_each(|((out, qkv), keep)| {
                let mut rows = qkv.to_vec();
                for row in rows.chunks_exact_mut(width) {
                    row.iter_mut().zip(self.bias).for_each(|(v, b)| *v += b);
                }
                let text = Text {
                    qkv: &rows,
                    kept: (0..tokens).filter(|&j| keep[j]).collect(),
                    hidden,
                    head,
                };
                arch.dispatch(Heads {
                    text,
                    heads: self.heads,
                    out,
                });
            });
        Ok((CpuStorage::F32(out), Shape::from((batch, tokens, hidden))))
    }
}

/// Every head of one text, run by pulp in a function compiled for the
/// CPU's widest vectors (AVX2 where there is one): what it inlines, the
/// loops of [`Text::attend`], the compiler vectorises at that width.
struct Heads<'a, 'o> {
    text: Text<'a>,
    heads: usize,
    out: &'o mut [f32],
}

impl pulp::WithSimd for Heads<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for h in 0..self.heads {
            self.text.attend(h, self.out);
        }
    }
}

/// One text's fused query/key/value rows (tokens, 3 · hidden).
struct Text<'a> {
    qkv: &'a [f32],
    /// The tokens that are not padding, in order: the only keys attended
    /// to and the only rows computed.
    kept: Vec<usize>,
    hidden: usize,
    head: usize,
}

impl Text<'_> {
    /// The `head` values of head `h` for token `token`; `part` 0 is the
    /// query, 1 the key, 2 the value.
    #[inline(always)]
    fn part(&self, token: usize, part: usize, h: usize) -> &[f32] {
        let start = token * 3 * self.hidden + part * self.hidden + h * self.head;
        &self.qkv[start..start + self.head]
    }

    /// Head `h`'s context of every kept token into `out` (tokens, hidden).
    /// The inner loops run over contiguous rows (keys transposed first),
    /// so they vectorise.
    #[inline(always)]
    fn attend(&self, h: usize, out: &mut [f32]) {
        let kept = &self.kept;
        let n = kept.len();
        // keys_t[l * stride + j] = key j's l-th value, rows padded with
        // zeros to whole vectors of eight.
        let stride = n.div_ceil(8) * 8;
        let mut keys_t = vec![0.0f32; self.head * stride];
        for (j, &token) in kept.iter().enumerate() {
            for (l, &v) in self.part(token, 1, h).iter().enumerate() {
                keys_t[l * stride + j] = v;
            }
        }
        // Four queries at a time share each load of eight keys; their
        // thirty-two sums stay in registers over the head's values.
        let mut scores = vec![0.0f32; QUERIES * stride];
        for block in kept.chunks(QUERIES) {
            let queries: [&[f32]; QUERIES] =
                std::array::from_fn(|r| self.part(block[r.min(block.len() - 1)], 0, h));
            for c in 0..stride / 8 {
                let mut sums = [[0.0f32; 8]; QUERIES];
                for l in 0..self.head {
                    let keys = &keys_t[l * stride + c * 8..][..8];
                    for (sums, query) in sums.iter_mut().zip(&queries) {
                        let ql = query[l];
                        for x in 0..8 {
                            sums[x] += ql * keys[x];
                        }
                    }
                }
                for (r, sums) in sums.iter().enumerate() {
                    scores[r * stride + c * 8..][..8].copy_from_slice(sums);
                }
            }
            for (r, &i) in block.iter().enumerate() {
                let weights = &mut scores[r * stride..][..n];
                softmax(weights);
                let row = &mut out[i * self.hidden + h * self.head..][..self.head];
                let values = kept.iter().map(|&j| self.part(j, 2, h));
                // The common head sizes get a sum of known size, which the
                // compiler keeps in registers.
                match self.head {
                    32 => weighted_sum::<32>(weights, values, row),
                    64 => weighted_sum::<64>(weights, values, row),
                    _ => {
                        for (&w, value) in weights.iter().zip(values) {
                            for (o, v) in row.iter_mut().zip(value) {
                                *o += w * v;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `row = Σ weights[j] · values[j]` for rows of `N` values.
#[inline(always)]
fn weighted_sum<'v, const N: usize>(
    weights: &[f32],
    values: impl Iterator<Item = &'v [f32]>,
    row: &mut [f32],
) {
    let mut sums = [0.0f32; N];
    for (&w, value) in weights.iter().zip(values) {
        let value: &[f32; N] = value.try_into().expect("a head's values");
        for x in 0..N {
            sums[x] += w * value[x];
        }
    }
    row.copy_from_slice(&sums);
}

/// Queries whose scores [`Text::attend`] computes together.
const QUERIES: usize = 4;

/// Softmax of `row` in place. Each pass is a loop without a running
/// value carried from element to element (the maximum and the sum are taken
/// in eight lanes), so each vectorises.
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = lanes(row, f32::NEG_INFINITY, |v| v, f32::max);
    row.iter_mut().for_each(|v| *v = exp(*v - max));
    let total = sum(row, |v| v);
    if total > 0.0 {
        let inverse = 1.0 / total;
        row.iter_mut().for_each(|v| *v *= inverse);
    }
}

/// The sum of `map` over `row`, in eight independent lanes.
#[inline(always)]
fn sum(row: &[f32], map: impl Fn(f32) -> f32) -> f32 {
    lanes(row, 0.0, map, |a, b| a + b)
}

/// `map` of each value of `row` combined by `combine` in eight independent
/// lanes (no value carried from element to element, so the loop
/// vectorises), then the lanes combined, then the tail.
#[inline(always)]
fn lanes(
    row: &[f32],
    init: f32,
    map: impl Fn(f32) -> f32,
    combine: impl Fn(f32, f32) -> f32,
) -> f32 {
    let mut acc = [init; 8];
    let chunks = row.chunks_exact(8);
    let tail = chunks
        .remainder()
        .iter()
        .fold(init, |a, &v| combine(a, map(v)));
    for chunk in chunks {
        for l in 0..8 {
            acc[l] = combine(acc[l], map(chunk[l]));
        }
    }
    combine(acc.iter().fold(init, |a, &v| combine(a, v)), tail)
}

/// `e^x` for `x ≤ 0` (a softmax's shifted scores): `2^n · p(r)` with
/// `x = n·ln 2 + r`, `|r| ≤ ln 2 / 2` and `p` the degree-6 Taylor
/// polynomial (relative error below 4e-7, about three units in the last
/// place); 0 below -87, where f32's
/// normal range ends.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let underflow = x < -87.0;
    let x = x.max(-87.0);
    // Round to nearest by the 1.5 · 2^23 trick (no SSE4.1 `round` needed).
    const SHIFT: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + SHIFT) - SHIFT;
    // ln 2 in two parts (the first exact in few bits), so n · ln 2 loses
    // nothing for the n a softmax meets.
    let r = (x - n * 0.693_145_75) - n * 1.428_606_8e-6;
    let p = [
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ]
    .iter()
    .fold(0.0, |acc, &c| acc * r + c);
    // n is an integer in -126..=0 here, so the exponent bits are valid.
    let e = p * f32::from_bits(((n as i32 + 127) as u32) << 23);
    if underflow { 0.0 } else { e }
}

fn contiguous_f32<'s>(storage: &'s CpuStorage, layout: &Layout, op: &str) -> Result<&'s [f32]> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("{op}: expects f32 values");
    };
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&data[start..end]),
        None => candle_core::bail!("{op}: expects a contiguous tensor"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rational `erf` stays within 5e-7 of libm's over the whole line.
    #[test]
    fn erf_matches_libm() {
        let worst = (-60_000..=60_000)
            .map(|i| i as f32 / 10_000.0)
            .map(|x| (erf(x) - libm_erf(x)).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 5e-7, "worst error {worst}");
    }

    fn libm_erf(x: f32) -> f32 {
        // erf through the complementary function candle already links.
        candle_core::cpu::erf::erf_f64(f64::from(x)) as f32
    }

    /// The polynomial `exp` is within 4e-7 (relative) of std's over the
    /// range a softmax uses, and 0 where f32 underflows.
    #[test]
    fn exp_matches_std_for_shifted_scores() {
        for i in 0..=870_000 {
            let x = -(i as f32) / 10_000.0;
            let (got, want) = (exp(x), x.exp());
            assert!(
                (got - want).abs() <= 4e-7 * want + f32::MIN_POSITIVE,
                "exp({x}) = {got}, std {want}"
            );
        }
        assert_eq!(exp(-200.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
    }

    /// `AddNorm` is the layer norm of the sum, by its definition.
    #[test]
    fn add_norm_is_the_layer_norm_of_the_sum() {
        use candle_core::{Device, Tensor};
        let x = [1.0f32, -2.0, 0.5, 4.0];
        let residual = [0.5f32, 0.5, -1.0, 2.0];
        let (bias, weight, shift) = (
            [0.1f32, 0.2, 0.3, 0.4],
            [1.0f32, 2.0, 0.5, 1.0],
            [0.0f32, 1.0, 0.0, -1.0],
        );
        let tensor = |v: &[f32]| Tensor::from_slice(v, (1, 4), &Device::Cpu).unwrap();
        let got = tensor(&x)
            .apply_op2_no_bwd(
                &tensor(&residual),
                &AddNorm {
                    bias: &bias,
                    weight: &weight,
                    shift: &shift,
                    eps: 1e-12,
                },
            )
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let sum: Vec<f32> = (0..4).map(|i| x[i] + residual[i] + bias[i]).collect();
        let mean = sum.iter().sum::<f32>() / 4.0;
        let variance = sum.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 4.0;
        for i in 0..4 {
            let want = (sum[i] - mean) / (variance + 1e-12).sqrt() * weight[i] + shift[i];
            assert!((got[i] - want).abs() < 1e-5, "{got:?}");
        }
    }

    /// The weights sum to 1 and follow the scores' order, as softmax's do.
    #[test]
    fn softmax_matches_the_definition() {
        let mut row = [1.0, 2.0, 3.0];
        softmax(&mut row);
        let total: f32 = [1.0f32, 2.0, 3.0].iter().map(|v| v.exp()).sum();
        for (got, x) in row.iter().zip([1.0f32, 2.0, 3.0]) {
            assert!((got - x.exp() / total).abs() < 1e-6, "{row:?}");
        }
    }

    /// A padded key gets no weight: a text's context is the same alone and
    /// padded beside a longer one.
    #[test]
    fn padding_is_never_attended_to() {
        use candle_core::{Device, Tensor};
        let (heads, hidden, tokens) = (2, 4, 3);
        let width = 3 * hidden;
        let values: Vec<f32> = (0..tokens * width)
            .map(|i| ((i * 7) % 11) as f32 / 5.0 - 1.0)
            .collect();
        let run = |data: Vec<f32>, keep: &[bool], tokens: usize| {
            Tensor::from_vec(data, (1, tokens, width), &Device::Cpu)
                .unwrap()
                .apply_op1_no_bwd(&Attention {
                    keep,
                    heads,
                    bias: &[0.0; 12],
                })
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        let alone = run(values[..2 * width].to_vec(), &[true, true], 2);
        let padded = run(values.clone(), &[true, true, false], 3);
        assert_eq!(alone[..], padded[..2 * hidden]);
        assert!(padded[2 * hidden..].iter().all(|v| *v == 0.0));
    }
}
