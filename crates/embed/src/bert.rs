//! The BERT encoder (Devlin et al., 2019) as transformers' `BertModel`
//! computes it, without its pooler: token, position and segment embeddings,
//! then `num_hidden_layers` post-norm layers of multi-head self-attention and
//! a feed-forward block. Only what sentence-transformers' BERT models and
//! groundcite's judges need, written over candle's tensors (its matrix
//! products, candle-nn's embedding and layer-norm blocks) and this crate's
//! own CPU passes for the rest (its `kernels` module), so the crate does not
//! compile a library of a hundred other architectures.

use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};
use serde::Deserialize;

use crate::kernels;

/// The activation of the feed-forward block (`hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Activation {
    /// GELU with the error function (`gelu`).
    #[serde(rename = "gelu")]
    Gelu,
    /// GELU's tanh approximation (`gelu_new`, `gelu_pytorch_tanh`).
    #[serde(
        alias = "gelu_new",
        alias = "gelu_pytorch_tanh",
        alias = "geluapproximate"
    )]
    GeluTanh,
    /// `relu`.
    #[serde(rename = "relu")]
    Relu,
}

fn default_type_vocab_size() -> usize {
    2
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}

/// The fields of a BERT `config.json` the encoder reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// Rows of the token embedding.
    pub vocab_size: usize,
    /// Width of every hidden state (and of the vectors before pooling).
    pub hidden_size: usize,
    /// Encoder layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer; divides `hidden_size`.
    pub num_attention_heads: usize,
    /// Width of the feed-forward block.
    pub intermediate_size: usize,
    /// The feed-forward block's activation.
    pub hidden_act: Activation,
    /// Longest input the position embedding covers, in tokens.
    pub max_position_embeddings: usize,
    /// Rows of the segment embedding (default 2).
    #[serde(default = "default_type_vocab_size")]
    pub type_vocab_size: usize,
    /// The layer norms' epsilon (default 1e-12).
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// The padding token's id (default 0).
    #[serde(default)]
    pub pad_token_id: usize,
}

/// A loaded encoder: `forward` maps token ids to hidden states.
#[derive(Debug)]
pub struct Bert {
    word: Embedding,
    position: Embedding,
    segment: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

#[derive(Debug)]
struct Layer {
    /// Query, key and value in one product (hidden → 3 · hidden), the
    /// query's rows pre-scaled by `1/√head_size` so the scores need no
    /// division; its bias is added by the attention
    /// ([`kernels::Attention`]).
    qkv: Product,
    qkv_bias: Vec<f32>,
    attention_out: Product,
    attention_norm: Norm,
    /// The feed-forward block's first product, without its bias, which
    /// is added in the activation's pass ([`kernels::BiasActivation`]).
    up: Product,
    up_bias: Vec<f32>,
    down: Product,
    output_norm: Norm,
    heads: usize,
    activation: Activation,
}

/// The end of a post-norm block: the bias of its last product (which runs
/// without it), then the skip connection and the layer norm, in one pass
/// ([`kernels::AddNorm`]).
#[derive(Debug)]
struct Norm {
    bias: Vec<f32>,
    weight: Vec<f32>,
    shift: Vec<f32>,
    eps: f32,
}

impl Norm {
    /// The bias of `dense` and the layer norm `norm` (transformers' names).
    fn load(dense: VarBuilder, norm: VarBuilder, h: usize, eps: f64) -> Result<Norm> {
        Ok(Norm {
            bias: values(&dense, "bias", h)?,
            weight: values(&norm, "weight", h)?,
            shift: values(&norm, "bias", h)?,
            eps: eps as f32,
        })
    }

    /// `layer_norm(x + bias + residual)`.
    fn forward(&self, x: &Tensor, residual: &Tensor) -> Result<Tensor> {
        x.apply_op2_no_bwd(
            residual,
            &kernels::AddNorm {
                bias: &self.bias,
                weight: &self.weight,
                shift: &self.shift,
                eps: self.eps,
            },
        )
    }
}

/// A linear map without its bias (which the pass after it adds): `x · Wᵀ`
/// over the last dimension, `Wᵀ` stored transposed (in, out) and
/// contiguous, so the product reads it row by row.
#[derive(Debug)]
struct Product {
    transposed: Tensor,
}

impl Product {
    /// From a weight (out, in) as transformers stores it.
    fn new(weight: &Tensor) -> Result<Product> {
        Ok(Product {
            transposed: weight.t()?.contiguous()?,
        })
    }

    /// transformers' `weight` (out, in) under `vb`.
    fn load(vb: VarBuilder, inputs: usize, outputs: usize) -> Result<Product> {
        Product::new(&vb.get((outputs, inputs), "weight")?)
    }

    /// `x · Wᵀ` for `x` (batch, tokens, in) → (batch, tokens, out).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (batch, tokens, inputs) = x.dims3()?;
        x.reshape((batch * tokens, inputs))?
            .matmul(&self.transposed)?
            .reshape((batch, tokens, ()))
    }
}

/// The `n` values of the vector `name` under `vb`, as f32.
fn values(vb: &VarBuilder, name: &str, n: usize) -> Result<Vec<f32>> {
    vb.get(n, name)?.to_dtype(DType::F32)?.to_vec1::<f32>()
}

/// The three attention projections as one product `h → 3h` without bias,
/// and their bias (3h), the query's weight and bias scaled by
/// `1/√(h / heads)`.
fn fused_qkv(attention: &VarBuilder, h: usize, heads: usize) -> Result<(Product, Vec<f32>)> {
    let scale = 1.0 / ((h / heads) as f64).sqrt();
    let part = |name: &str, scale: f64| -> Result<(Tensor, Tensor)> {
        let vb = attention.pp(name);
        Ok((
            (vb.get((h, h), "weight")? * scale)?,
            (vb.get(h, "bias")? * scale)?,
        ))
    };
    let (qw, qb) = part("self.query", scale)?;
    let (kw, kb) = part("self.key", 1.0)?;
    let (vw, vb) = part("self.value", 1.0)?;
    Ok((
        Product::new(&Tensor::cat(&[qw, kw, vw], 0)?)?,
        Tensor::cat(&[qb, kb, vb], 0)?
            .to_dtype(DType::F32)?
            .to_vec1::<f32>()?,
    ))
}

impl Bert {
    /// Loads the encoder's weights under transformers' names
    /// (`embeddings.*`, `encoder.layer.N.*`), with or without a `bert.`
    /// prefix.
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Bert> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let h = config.hidden_size;
        let norm = |vb: VarBuilder| candle_nn::layer_norm(h, config.layer_norm_eps, vb);
        let e = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                let inner = config.intermediate_size;
                let up_bias = values(&l.pp("intermediate.dense"), "bias", inner)?;
                let (qkv, qkv_bias) = fused_qkv(&a, h, config.num_attention_heads)?;
                let eps = config.layer_norm_eps;
                Ok(Layer {
                    qkv,
                    qkv_bias,
                    attention_out: Product::load(a.pp("output.dense"), h, h)?,
                    attention_norm: Norm::load(
                        a.pp("output.dense"),
                        a.pp("output.LayerNorm"),
                        h,
                        eps,
                    )?,
                    up: Product::load(l.pp("intermediate.dense"), h, inner)?,
                    up_bias,
                    down: Product::load(l.pp("output.dense"), inner, h)?,
                    output_norm: Norm::load(
                        l.pp("output.dense"),
                        l.pp("output.LayerNorm"),
                        h,
                        eps,
                    )?,
                    heads: config.num_attention_heads,
                    activation: config.hidden_act,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            word: candle_nn::embedding(config.vocab_size, h, e.pp("word_embeddings"))?,
            position: candle_nn::embedding(
                config.max_position_embeddings,
                h,
                e.pp("position_embeddings"),
            )?,
            segment: candle_nn::embedding(
                config.type_vocab_size,
                h,
                e.pp("token_type_embeddings"),
            )?,
            embedding_norm: norm(e.pp("LayerNorm"))?,
            layers,
        })
    }

    /// The last layer's hidden states (batch, tokens, hidden) of `ids` and
    /// `segments` (batch, tokens; `u32`), padding masked out by `mask`
    /// (batch, tokens; 1 for a token, 0 for padding). No token attends to
    /// padding, and padding's own rows skip the attention, so their states
    /// are not transformers' (poolers and heads read only tokens).
    pub fn forward(&self, ids: &Tensor, segments: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        let positions = Tensor::arange(0u32, tokens as u32, ids.device())?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.segment.forward(segments)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        // Which keys are tokens: no token attends to padding.
        let keep: Vec<bool> = mask
            .flatten_all()?
            .to_dtype(DType::U32)?
            .to_vec1::<u32>()?
            .into_iter()
            .map(|m| m != 0)
            .collect();
        for layer in &self.layers {
            x = layer.forward(&x, &keep)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(&self, x: &Tensor, keep: &[bool]) -> Result<Tensor> {
        let context = self.qkv.forward(x)?.apply_op1_no_bwd(&kernels::Attention {
            keep,
            heads: self.heads,
            bias: &self.qkv_bias,
        })?;
        let x = self
            .attention_norm
            .forward(&self.attention_out.forward(&context)?, x)?;
        let up = self
            .up
            .forward(&x)?
            .apply_op1_no_bwd(&kernels::BiasActivation {
                bias: &self.up_bias,
                activation: self.activation,
            })?;
        self.output_norm.forward(&self.down.forward(&up)?, &x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hidden_act` reads transformers' names, the tanh approximation's
    /// three spellings included; another activation is an error.
    #[test]
    fn activations_read_transformers_names() {
        for (name, want) in [
            ("gelu", Activation::Gelu),
            ("gelu_new", Activation::GeluTanh),
            ("gelu_pytorch_tanh", Activation::GeluTanh),
            ("relu", Activation::Relu),
        ] {
            let got: Activation = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(got, want, "{name}");
        }
        assert!(serde_json::from_str::<Activation>("\"swish\"").is_err());
    }
}
