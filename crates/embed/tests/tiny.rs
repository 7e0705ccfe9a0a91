//! Tests that need no downloaded model: each builds a tiny, randomly
//! initialised BERT folder (config, tokenizer, safetensors, the
//! sentence-transformers files) in a temporary directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use groundcite_embed::{EmbedError, Embedder, FETCH_HINT, MAX_BATCH_TEXTS, Pooling};
use serde_json::{Value, json};

const HIDDEN: usize = 16;
const LAYERS: usize = 2;
const INTERMEDIATE: usize = 32;
const POSITIONS: usize = 64;
const MAX_SEQ_LENGTH: usize = 12;

const WORDS: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sat", "on", "mat",
    "ran", "far", "away", "and", "then", "some", "more", "words", "##s", ".", ",", "cafe", "é",
    "東", "京",
];

/// A deterministic generator of weights in [-scale, scale) (xorshift64*).
struct Weights(u64);

impl Weights {
    fn tensor(&mut self, shape: &[usize], scale: f32) -> Tensor {
        let n = shape.iter().product();
        let values: Vec<f32> = (0..n)
            .map(|_| {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
                (bits as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
            })
            .collect();
        Tensor::from_vec(values, shape, &Device::Cpu).unwrap()
    }

    fn around_one(&mut self, n: usize) -> Tensor {
        (self.tensor(&[n], 0.1) + 1.0).unwrap()
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

fn write_weights(path: &Path, seed: u64) {
    let mut w = Weights(seed);
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    let mut put = |name: String, tensor: Tensor| {
        tensors.insert(name, tensor);
    };
    put(
        "embeddings.word_embeddings.weight".into(),
        w.tensor(&[WORDS.len(), HIDDEN], 1.0),
    );
    put(
        "embeddings.position_embeddings.weight".into(),
        w.tensor(&[POSITIONS, HIDDEN], 0.5),
    );
    put(
        "embeddings.token_type_embeddings.weight".into(),
        w.tensor(&[2, HIDDEN], 0.5),
    );
    put("embeddings.LayerNorm.weight".into(), w.around_one(HIDDEN));
    put("embeddings.LayerNorm.bias".into(), w.tensor(&[HIDDEN], 0.1));
    for layer in 0..LAYERS {
        let p = format!("encoder.layer.{layer}.");
        let scale = 1.0 / (HIDDEN as f32).sqrt();
        for name in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
        ] {
            put(
                format!("{p}{name}.weight"),
                w.tensor(&[HIDDEN, HIDDEN], scale),
            );
            put(format!("{p}{name}.bias"), w.tensor(&[HIDDEN], 0.1));
        }
        put(
            format!("{p}attention.output.dense.weight"),
            w.tensor(&[HIDDEN, HIDDEN], scale),
        );
        put(
            format!("{p}attention.output.dense.bias"),
            w.tensor(&[HIDDEN], 0.1),
        );
        put(
            format!("{p}attention.output.LayerNorm.weight"),
            w.around_one(HIDDEN),
        );
        put(
            format!("{p}attention.output.LayerNorm.bias"),
            w.tensor(&[HIDDEN], 0.1),
        );
        put(
            format!("{p}intermediate.dense.weight"),
            w.tensor(&[INTERMEDIATE, HIDDEN], scale),
        );
        put(
            format!("{p}intermediate.dense.bias"),
            w.tensor(&[INTERMEDIATE], 0.1),
        );
        let scale = 1.0 / (INTERMEDIATE as f32).sqrt();
        put(
            format!("{p}output.dense.weight"),
            w.tensor(&[HIDDEN, INTERMEDIATE], scale),
        );
        put(format!("{p}output.dense.bias"), w.tensor(&[HIDDEN], 0.1));
        put(format!("{p}output.LayerNorm.weight"), w.around_one(HIDDEN));
        put(
            format!("{p}output.LayerNorm.bias"),
            w.tensor(&[HIDDEN], 0.1),
        );
    }
    candle_core::safetensors::save(&tensors, path).unwrap();
}

fn config() -> Value {
    json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": WORDS.len(),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute"
    })
}

/// A BERT WordPiece tokenizer over `WORDS`. Its own padding (fixed, 8) and
/// truncation (128) are set on purpose: the embedder must replace them.
fn tokenizer() -> Value {
    let vocab: serde_json::Map<String, Value> = WORDS
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), json!(i)))
        .collect();
    let added: Vec<Value> = WORDS[..5]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            json!({"id": i, "content": w, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let special =
        |name: &str, type_id: u32| json!({"SpecialToken": {"id": name, "type_id": type_id}});
    let sequence = |name: &str, type_id: u32| json!({"Sequence": {"id": name, "type_id": type_id}});
    json!({
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": null,
                    "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0),
                     sequence("B", 1), special("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab}
    })
}

fn pooling(mode: &str) -> Value {
    let mut config = json!({
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": false,
        "pooling_mode_mean_tokens": false,
        "pooling_mode_max_tokens": false,
        "pooling_mode_mean_sqrt_len_tokens": false
    });
    config[format!("pooling_mode_{mode}")] = json!(true);
    config
}

/// Makes the model in `dir` pool by `mode` (a `pooling_mode_*` key's
/// tail) and drops its Normalize module.
fn pool_without_normalising(dir: &Path, mode: &str) {
    write_json(&dir.join("1_Pooling/config.json"), &pooling(mode));
    write_json(
        &dir.join("modules.json"),
        &json!([
            {"path": "", "type": "sentence_transformers.models.Transformer"},
            {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
        ]),
    );
}

/// Removes `modules.json` and `sentence_bert_config.json` from `dir`: a
/// plain transformer folder, read with sentence-transformers' fallbacks.
fn remove_sentence_transformers_files(dir: &Path) {
    for file in ["modules.json", "sentence_bert_config.json"] {
        std::fs::remove_file(dir.join(file)).unwrap();
    }
}

/// A complete sentence-transformers folder: Transformer, mean Pooling, Normalize.
fn tiny_model() -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("tiny-bert");
    write_json(&dir.join("config.json"), &config());
    write_json(&dir.join("tokenizer.json"), &tokenizer());
    write_weights(&dir.join("model.safetensors"), 0x9e37_79b9_7f4a_7c15);
    write_json(
        &dir.join("modules.json"),
        &json!([
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
        ]),
    );
    write_json(&dir.join("1_Pooling/config.json"), &pooling("mean_tokens"));
    write_json(
        &dir.join("sentence_bert_config.json"),
        &json!({"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": false}),
    );
    (temp, dir)
}

fn load_error(dir: &Path) -> EmbedError {
    Embedder::load(dir).expect_err("the folder must not load")
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn a_missing_folder_is_named_with_the_way_to_fetch_a_model() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("no-such-model");
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::MissingFolder { ref path } if *path == dir),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("no-such-model") && message.contains(FETCH_HINT),
        "{message}"
    );
    assert!(message.contains("scripts/fetch-model.sh"), "{message}");
}

#[test]
fn each_missing_file_is_named() {
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
    ] {
        let (_temp, dir) = tiny_model();
        std::fs::remove_file(dir.join(file)).unwrap();
        let err = load_error(&dir);
        assert!(
            matches!(err, EmbedError::MissingFile { ref path } if *path == dir.join(file)),
            "{file}: {err:?}"
        );
        assert!(err.to_string().contains(FETCH_HINT));
    }
}

#[test]
fn an_unreadable_file_is_named() {
    let (_temp, dir) = tiny_model();
    let path = dir.join("tokenizer.json");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::Unreadable { path: ref p, .. } if *p == path),
        "{err:?}"
    );
}

#[test]
fn corrupt_files_are_named_with_what_is_wrong() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("config.json", b"{\"model_type\": \"bert\",", "EOF"),
        ("config.json", b"[1, 2]", "not a JSON object"),
        ("tokenizer.json", b"{\"model\": 3}", ""),
        (
            "model.safetensors",
            b"\x08\x00\x00\x00\x00\x00\x00\x00{}",
            "",
        ),
        ("modules.json", b"{}", "sequence"),
        (
            "sentence_bert_config.json",
            b"{\"max_seq_length\": \"long\"}",
            "invalid type",
        ),
        (
            "1_Pooling/config.json",
            b"{\"pooling_mode_mean_tokens\": false}",
            "no pooling mode",
        ),
    ];
    for (file, content, detail) in cases {
        let (_temp, dir) = tiny_model();
        std::fs::write(dir.join(file), content).unwrap();
        let err = load_error(&dir);
        let message = err.to_string();
        assert!(
            matches!(err, EmbedError::Invalid { ref path, .. } if *path == dir.join(file)),
            "{file}: {err:?}"
        );
        assert!(
            message.starts_with(&dir.join(file).display().to_string()),
            "{message}"
        );
        assert!(message.contains(detail), "{file}: {message}");
    }
}

#[test]
fn truncated_weights_are_named() {
    let (_temp, dir) = tiny_model();
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::Invalid { path: ref p, .. } if *p == path),
        "{err:?}"
    );
}

#[test]
fn weights_of_the_wrong_shape_are_named() {
    let (_temp, dir) = tiny_model();
    let mut config = config();
    config["hidden_size"] = json!(32);
    write_json(&dir.join("config.json"), &config);
    let err = load_error(&dir);
    // The pooling config's dimension (16) is checked first.
    assert!(
        matches!(err, EmbedError::Invalid { ref path, .. } if *path == dir.join("1_Pooling/config.json")),
        "{err:?}"
    );
    std::fs::remove_file(dir.join("modules.json")).unwrap();
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::Invalid { ref path, .. } if *path == dir.join("model.safetensors")),
        "{err:?}"
    );
}

#[test]
fn unsupported_architectures_are_refused_by_name() {
    let edits: &[(&str, Value, &str)] = &[
        ("model_type", json!("roberta"), "\"roberta\""),
        ("hidden_act", json!("silu"), "\"silu\""),
        (
            "position_embedding_type",
            json!("relative_key"),
            "relative_key",
        ),
    ];
    for (key, value, detail) in edits {
        let (_temp, dir) = tiny_model();
        let mut config = config();
        config[*key] = value.clone();
        write_json(&dir.join("config.json"), &config);
        let err = load_error(&dir);
        assert!(
            matches!(err, EmbedError::Unsupported { ref path, .. } if *path == dir.join("config.json")),
            "{key}: {err:?}"
        );
        assert!(err.to_string().contains(detail), "{err}");
    }
}

#[test]
fn modules_that_change_the_vectors_are_refused_not_skipped() {
    let (_temp, dir) = tiny_model();
    write_json(
        &dir.join("modules.json"),
        &json!([
            {"path": "", "type": "sentence_transformers.models.Transformer"},
            {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}
        ]),
    );
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::Unsupported { ref path, .. } if *path == dir.join("modules.json")),
        "{err:?}"
    );
    assert!(err.to_string().contains("Dense"), "{err}");

    let (_temp, dir) = tiny_model();
    let mut config = pooling("mean_tokens");
    config["pooling_mode_cls_token"] = json!(true);
    write_json(&dir.join("1_Pooling/config.json"), &config);
    assert!(matches!(load_error(&dir), EmbedError::Unsupported { .. }));
}

#[test]
fn a_max_seq_length_beyond_the_positions_is_refused() {
    let (_temp, dir) = tiny_model();
    write_json(
        &dir.join("sentence_bert_config.json"),
        &json!({"max_seq_length": POSITIONS + 1}),
    );
    let err = load_error(&dir);
    assert!(
        matches!(err, EmbedError::Invalid { ref path, .. } if *path == dir.join("sentence_bert_config.json")),
        "{err:?}"
    );
}

#[test]
fn loads_the_sentence_transformers_pipeline() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!(embedder.dim(), HIDDEN);
    assert_eq!(embedder.pooling(), Pooling::Mean);
    assert!(embedder.normalizes());
    assert_eq!(embedder.max_seq_length(), MAX_SEQ_LENGTH);
    assert!(
        embedder.model_id().starts_with("tiny-bert@"),
        "{}",
        embedder.model_id()
    );
    let vectors = embedder
        .embed(&["the cat sat on the mat .", "東京 café", ""])
        .unwrap();
    assert_eq!((vectors.len(), vectors.dim()), (3, HIDDEN));
    for row in vectors.rows() {
        assert!((norm(row) - 1.0).abs() < 1e-5, "{}", norm(row));
        assert!(row.iter().all(|x| x.is_finite()));
    }
    assert!(embedder.embed(&[]).unwrap().is_empty());
}

#[test]
fn without_sentence_transformers_files_it_mean_pools_without_normalising() {
    let (_temp, dir) = tiny_model();
    remove_sentence_transformers_files(&dir);
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!(embedder.pooling(), Pooling::Mean);
    assert!(!embedder.normalizes());
    assert_eq!(embedder.max_seq_length(), POSITIONS);
    let plain = embedder.embed_one("the dog ran far away").unwrap();

    let (_temp, full) = tiny_model();
    let normalised = Embedder::load(&full)
        .unwrap()
        .embed_one("the dog ran far away")
        .unwrap();
    assert!((norm(&plain) - 1.0).abs() > 1e-3, "{}", norm(&plain));
    let rescaled: Vec<f32> = plain.iter().map(|x| x / norm(&plain)).collect();
    assert!(max_difference(&rescaled, &normalised) < 1e-5);
}

#[test]
fn each_pooling_mode_gives_its_own_vector() {
    let mut seen: Vec<(Pooling, Vec<f32>)> = Vec::new();
    for (mode, expected) in [
        ("mean_tokens", Pooling::Mean),
        ("cls_token", Pooling::Cls),
        ("max_tokens", Pooling::Max),
        ("mean_sqrt_len_tokens", Pooling::MeanSqrtLen),
    ] {
        let (_temp, dir) = tiny_model();
        pool_without_normalising(&dir, mode);
        let embedder = Embedder::load(&dir).unwrap();
        assert_eq!(embedder.pooling(), expected);
        // Padding must not leak into any mode: alone and beside a longer text.
        let alone = embedder.embed_one("a cat").unwrap();
        let batch = embedder
            .embed(&["the dog ran far away and then some more", "a cat"])
            .unwrap();
        assert!(max_difference(&alone, batch.row(1)) < 1e-5, "{mode}");
        for (other, vector) in &seen {
            assert!(
                max_difference(vector, &alone) > 1e-3,
                "{mode} equals {other:?}"
            );
        }
        seen.push((expected, alone));
    }
    // Mean and mean-sqrt-len differ by the factor sqrt(tokens): 4 tokens here.
    let (mean, sqrt_len) = (&seen[0].1, &seen[3].1);
    let scaled: Vec<f32> = mean.iter().map(|x| x * 2.0).collect();
    assert!(max_difference(&scaled, sqrt_len) < 1e-5);
}

#[test]
fn a_vector_does_not_depend_on_its_batch() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    let texts = [
        "a cat",
        "the dog ran far away and then some more words",
        "cats",
        "the mat , the cat , the dog",
        "",
        "東京",
    ];
    let batch = embedder.embed(&texts).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let alone = embedder.embed_one(text).unwrap();
        assert!(max_difference(&alone, batch.row(i)) < 1e-5, "{text:?}");
    }
}

#[test]
fn many_texts_go_through_several_batches_in_order() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    let words = [
        "the", "cat", "dog", "sat", "on", "mat", "ran", "far", "away", "and",
    ];
    let texts: Vec<String> = (0..MAX_BATCH_TEXTS * 2 + 7)
        .map(|i| {
            (0..1 + i % 9)
                .map(|j| words[(i * 7 + j * 3) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = embedder.embed(&refs).unwrap();
    assert_eq!(all.len(), texts.len());
    for (i, text) in refs.iter().enumerate().step_by(13) {
        let alone = embedder.embed_one(text).unwrap();
        assert!(max_difference(&alone, all.row(i)) < 1e-5, "{i}: {text:?}");
    }
}

#[test]
fn long_texts_are_truncated_at_max_seq_length() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    // Ten words plus [CLS] and [SEP] fill the twelve tokens exactly.
    let base = "the cat sat on the mat and then the dog";
    assert_eq!(embedder.token_count(base).unwrap(), MAX_SEQ_LENGTH);
    let longer = format!("{base} ran far away");
    assert_eq!(embedder.token_count(&longer).unwrap(), MAX_SEQ_LENGTH);
    let vectors = embedder
        .embed(&[base, &longer, "the cat sat on the mat and then the cat"])
        .unwrap();
    assert!(max_difference(vectors.row(0), vectors.row(1)) < 1e-6);
    assert!(max_difference(vectors.row(0), vectors.row(2)) > 1e-3);
}

#[test]
fn deterministic_and_the_model_id_follows_the_weights() {
    let (_temp, dir) = tiny_model();
    let first = Embedder::load(&dir).unwrap();
    let second = Embedder::load(&dir).unwrap();
    assert_eq!(first.model_id(), second.model_id());
    let texts = ["the cat sat on the mat .", "a dog ran far away", "cafe"];
    let a = first.embed(&texts).unwrap();
    assert_eq!(a, first.embed(&texts).unwrap());
    assert_eq!(a, second.embed(&texts).unwrap());

    write_weights(&dir.join("model.safetensors"), 7);
    let other = Embedder::load(&dir).unwrap();
    assert_ne!(other.model_id(), first.model_id());
    assert!(max_difference(other.embed(&texts).unwrap().row(0), a.row(0)) > 1e-3);
}

#[test]
fn lower_cases_when_the_folder_says_so() {
    let (_temp, dir) = tiny_model();
    // This tokenizer lower-cases by itself; make it case-sensitive so only
    // do_lower_case can lower the text.
    let mut tokenizer = tokenizer();
    tokenizer["normalizer"]["lowercase"] = json!(false);
    write_json(&dir.join("tokenizer.json"), &tokenizer);
    let sensitive = Embedder::load(&dir).unwrap();
    write_json(
        &dir.join("sentence_bert_config.json"),
        &json!({"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": true}),
    );
    let lowering = Embedder::load(&dir).unwrap();
    let upper = "THE CAT";
    assert!(
        max_difference(
            &sensitive.embed_one(upper).unwrap(),
            &sensitive.embed_one("the cat").unwrap()
        ) > 1e-3
    );
    assert!(
        max_difference(
            &lowering.embed_one(upper).unwrap(),
            &lowering.embed_one("the cat").unwrap()
        ) < 1e-6
    );
    assert_ne!(sensitive.model_id(), lowering.model_id());
}

#[test]
fn an_embedder_is_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Embedder>();
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    let expected = embedder.embed_one("the cat sat").unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| embedder.embed_one("the cat sat").unwrap()))
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), expected);
        }
    });
}

/// The byte span of `word`'s `nth` occurrence in `text`.
fn span_of(text: &str, word: &str, nth: usize) -> std::ops::Range<usize> {
    let start = text.match_indices(word).nth(nth).unwrap().0;
    start..start + word.len()
}

#[test]
fn parts_are_pooled_from_their_texts_own_pass() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    let texts = ["the cat sat . the dog ran", "a dog ran far away"];
    let first = span_of(texts[0], "the cat sat", 0);
    let second = span_of(texts[0], "the dog ran", 0);
    let other = span_of(texts[1], "dog ran", 0);
    let both = [first.clone(), second.clone()];
    let parts = [
        (0, std::slice::from_ref(&first), "the cat sat"),
        (0, std::slice::from_ref(&second), "the dog ran"),
        (1, std::slice::from_ref(&other), "dog ran"),
        (0, &both[..], "the cat sat the dog ran"),
    ];
    let vectors = embedder.embed_parts(&texts, &parts).unwrap();
    // The texts' own vectors are exactly those of `embed`.
    let plain = embedder.embed(&texts).unwrap();
    assert_eq!(vectors.texts, plain);
    assert_eq!(vectors.parts.len(), parts.len());
    for (p, row) in vectors.parts.rows().enumerate() {
        assert!((norm(row) - 1.0).abs() < 1e-5, "part {p} is normalised");
        // Read in context, not alone.
        let alone = embedder.embed_one(parts[p].2).unwrap();
        assert!(max_difference(row, &alone) > 1e-3, "part {p}");
    }
    // Each part pools its own tokens; two spans pool the tokens of both.
    let rows: Vec<&[f32]> = vectors.parts.rows().collect();
    assert!(max_difference(rows[0], rows[1]) > 1e-3);
    assert!(max_difference(rows[3], rows[0]) > 1e-3);
    assert!(max_difference(rows[3], rows[1]) > 1e-3);
    // A part's vector does not depend on the other texts of the call.
    let single = embedder
        .embed_parts(&texts[..1], &[(0, std::slice::from_ref(&second), "")])
        .unwrap();
    assert!(max_difference(single.parts.row(0), rows[1]) < 1e-5);
}

#[test]
fn a_part_the_model_cannot_pool_is_embedded_on_its_own() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    // Twelve words: the last two are cut at MAX_SEQ_LENGTH (ten words plus
    // [CLS] and [SEP]).
    let text = "the cat sat on the mat and then the dog ran far";
    let cut = span_of(text, "ran far", 0);
    let kept = span_of(text, "the dog", 0);
    let empty = 4..4;
    let parts = [
        (0, std::slice::from_ref(&cut), "ran far"),
        (0, std::slice::from_ref(&kept), "the dog"),
        (0, std::slice::from_ref(&empty), "cat"),
    ];
    let vectors = embedder.embed_parts(&[text], &parts).unwrap();
    let alone = |t: &str| embedder.embed_one(t).unwrap();
    assert!(max_difference(vectors.parts.row(0), &alone("ran far")) < 1e-6);
    assert!(max_difference(vectors.parts.row(1), &alone("the dog")) > 1e-3);
    assert!(max_difference(vectors.parts.row(2), &alone("cat")) < 1e-6);

    // A model that pools its [CLS] token has no per-token vectors to pool.
    write_json(&dir.join("1_Pooling/config.json"), &pooling("cls_token"));
    let cls = Embedder::load(&dir).unwrap();
    let vectors = cls.embed_parts(&[text], &parts[1..2]).unwrap();
    assert!(max_difference(vectors.parts.row(0), &cls.embed_one("the dog").unwrap()) < 1e-6);
}

#[test]
fn a_part_outside_its_text_is_an_error() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    // The error of one part `(of, span, own text)` of `text`.
    let error = |text: &str, of: usize, span: std::ops::Range<usize>, own: &str| {
        embedder
            .embed_parts(&[text], &[(of, std::slice::from_ref(&span), own)])
            .unwrap_err()
            .to_string()
    };
    let err = error("the cat", 0, 3..40, "cat");
    assert!(err.contains("3..40") && err.contains("7 bytes"), "{err}");
    // A span that splits a character.
    let err = error("é cat", 0, 1..2, "é");
    assert!(err.contains("1..2") && err.contains("character"), "{err}");
    let err = error("the cat", 1, 0..3, "the");
    assert!(err.contains("text 1, of 1 texts"), "{err}");
}

#[test]
fn a_part_whose_bytes_lower_casing_moved_is_embedded_on_its_own() {
    let (_temp, dir) = tiny_model();
    write_json(
        &dir.join("sentence_bert_config.json"),
        &json!({"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": true}),
    );
    let lowering = Embedder::load(&dir).unwrap();
    // "İ" (2 bytes) lower-cases to "i̇" (3 bytes): the words after it move.
    let text = "İ the cat sat";
    let part = span_of(text, "the cat", 0);
    let parts = [(0, std::slice::from_ref(&part), "the cat")];
    let moved = lowering.embed_parts(&[text], &parts).unwrap();
    let alone = lowering.embed_one("the cat").unwrap();
    assert!(max_difference(moved.parts.row(0), &alone) < 1e-6);
    // Where lower-casing keeps every byte in place, the part is pooled.
    let text = "A the cat sat";
    let part = span_of(text, "the cat", 0);
    let parts = [(0, std::slice::from_ref(&part), "the cat")];
    let kept = lowering.embed_parts(&[text], &parts).unwrap();
    assert!(max_difference(kept.parts.row(0), &alone) > 1e-3);
}

#[test]
fn a_group_pools_its_texts_tokens_as_one_texts() {
    // Without modules.json: mean pooling, no normalising, so the pooled
    // means can be checked by hand.
    let (_temp, dir) = tiny_model();
    remove_sentence_transformers_files(&dir);
    let plain = Embedder::load(&dir).unwrap();
    let texts = ["the cat sat", "a dog ran far away", "the mat"];
    let groups: [&[usize]; 3] = [&[0, 1], &[2], &[2, 0, 1]];
    let vectors = plain.embed_groups(&texts, &groups).unwrap();
    let own = plain.embed(&texts).unwrap();
    assert_eq!(vectors.texts.len(), 3);
    for (got, want) in vectors.texts.rows().zip(own.rows()) {
        assert!(max_difference(got, want) < 1e-6);
    }
    // The token-weighted mean of the texts' means ([CLS] and [SEP] count).
    let tokens: Vec<f32> = texts
        .iter()
        .map(|t| plain.token_count(t).unwrap() as f32)
        .collect();
    let expected = |members: &[usize]| -> Vec<f32> {
        let total: f32 = members.iter().map(|&i| tokens[i]).sum();
        (0..own.dim())
            .map(|d| {
                members
                    .iter()
                    .map(|&i| tokens[i] * own.row(i)[d])
                    .sum::<f32>()
                    / total
            })
            .collect()
    };
    for (g, members) in groups.iter().enumerate() {
        assert!(
            max_difference(vectors.groups.row(g), &expected(members)) < 1e-5,
            "group {g}"
        );
    }
    // The members' order does not matter.
    let reordered = plain.embed_groups(&texts, &[&[1, 0]]).unwrap();
    assert!(max_difference(reordered.groups.row(0), vectors.groups.row(0)) < 1e-6);

    // A normalising model normalises the groups too; max pooling takes
    // each value's largest.
    let (_temp, full) = tiny_model();
    let normalising = Embedder::load(&full).unwrap();
    let vectors = normalising.embed_groups(&texts, &groups).unwrap();
    for row in vectors.groups.rows() {
        assert!((norm(row) - 1.0).abs() < 1e-5);
    }
    assert!(max_difference(vectors.groups.row(1), vectors.texts.row(2)) < 1e-6);
    pool_without_normalising(&full, "max_tokens");
    let max = Embedder::load(&full).unwrap();
    assert!(!max.normalizes());
    let vectors = max.embed_groups(&texts[..2], &[&[0, 1]]).unwrap();
    let (a, b) = (vectors.texts.row(0), vectors.texts.row(1));
    let largest: Vec<f32> = a.iter().zip(b).map(|(x, y)| x.max(*y)).collect();
    assert!(max_difference(vectors.groups.row(0), &largest) < 1e-6);
    assert!(max_difference(a, &largest) > 1e-3 && max_difference(b, &largest) > 1e-3);
}

#[test]
fn an_empty_group_or_a_missing_text_is_an_error() {
    let (_temp, dir) = tiny_model();
    let embedder = Embedder::load(&dir).unwrap();
    let err = embedder
        .embed_groups(&["the cat"], &[&[0], &[]])
        .unwrap_err()
        .to_string();
    assert!(err.contains("group 1") && err.contains("1 given"), "{err}");
    let err = embedder
        .embed_groups(&["the cat"], &[&[0, 3]])
        .unwrap_err()
        .to_string();
    assert!(err.contains("group 0 holds [0, 3]"), "{err}");
}
