//! The layers of the configuration and where each value came from:
//! reading `groundcite.toml`, the `GROUNDCITE_*` variables and the flags
//! (`--set KEY=VALUE`), each typed as its key, merged over the defaults
//! with figment ([`Settings::configure`]). See the parent module for the
//! rules users see.

use std::path::{Path, PathBuf};

use figment::value::{Dict, Value as FigValue};
use figment::{Figment, Metadata, Profile, Provider};
use serde::Serialize;

use super::{DEFAULT_MODEL_DIR, GeneratorKind, Settings, audit_beside, turned_off};
use crate::EngineError;

impl Settings {
    /// Reads the file (if any) and applies the environment.
    pub fn load(file: Option<&Path>) -> Result<Settings, EngineError> {
        Ok(Settings::configure(file, &env_vars(), &[])?.settings)
    }

    /// The defaults, then the file (`file`, else `GROUNDCITE_CONFIG` of
    /// `env`, else `./groundcite.toml` when it exists), then the
    /// `GROUNDCITE_*` variables of `env`, then `flags`, in that order.
    /// An unknown key in any layer is an error naming the key meant.
    pub fn configure(
        file: Option<&Path>,
        env: &[(String, String)],
        flags: &[Override],
    ) -> Result<Configured, EngineError> {
        let env_file = env
            .iter()
            .find(|(name, value)| name == CONFIG_ENV && !value.is_empty())
            .map(|(_, value)| PathBuf::from(value));
        let path = file.map(Path::to_path_buf).or(env_file).or_else(|| {
            let local = Path::new("groundcite.toml");
            local.exists().then(|| local.to_path_buf())
        });
        let mut configured = Settings::layered(path.as_deref(), env, flags)?;
        // The model fetched into the default place is used without a flag;
        // `model_dir = "off"` (or any other setting) decides otherwise.
        let default_model = Path::new(DEFAULT_MODEL_DIR);
        if configured.origin("model_dir") == Origin::Default
            && configured.settings.model_dir.is_none()
            && default_model.join("config.json").is_file()
        {
            configured.settings.model_dir = Some(default_model.to_path_buf());
        }
        Ok(configured)
    }

    /// The defaults, then `file` when given, then `flags`: no environment
    /// and no `./groundcite.toml` found by looking. What a library caller
    /// (the Python package) configures, where the process's working
    /// directory and variables should not change a result silently.
    pub fn explicit(file: Option<&Path>, flags: &[Override]) -> Result<Configured, EngineError> {
        Settings::layered(file, &[], flags)
    }

    /// The layers over the defaults: `path` (already chosen), the
    /// `GROUNDCITE_*` variables of `env`, then `flags`.
    fn layered(
        path: Option<&Path>,
        env: &[(String, String)],
        flags: &[Override],
    ) -> Result<Configured, EngineError> {
        let defaults = Settings::default();
        let keys = key_types();
        let mut layers = vec![Layer {
            origin: Origin::Default,
            dict: to_dict(&defaults)?,
        }];
        if let Some(path) = path {
            layers.push(Layer {
                origin: Origin::File(path.to_path_buf()),
                dict: file_dict(path)?,
            });
        }
        let mut overrides = Vec::new();
        for (name, value) in env {
            if let Some(o) = env_override(name, value, &keys)? {
                overrides.push(o);
            }
        }
        for o in flags {
            if !keys.contains_key(&o.key) && !ALIASES.contains(&o.key.as_str()) {
                return Err(EngineError::Config(format!(
                    "{} ({})",
                    unknown_key_message(&o.key),
                    o.origin
                )));
            }
            overrides.push(o.clone());
        }
        // `base_url` and `model` are those of the selected generator: find
        // it first, from every layer.
        let mut probe = Figment::new();
        for layer in &layers {
            probe = probe.merge(layer.clone());
        }
        for o in overrides.iter().filter(|o| o.key == "generator") {
            probe = probe.merge(o.layer(&o.key, &keys)?);
        }
        let generator: GeneratorKind = probe
            .extract_inner_lossy("generator")
            .map_err(|e| EngineError::Config(e.to_string()))?;
        let backend = match generator {
            GeneratorKind::Anthropic => "anthropic",
            _ => "openai",
        };
        for o in &overrides {
            let key = match o.key.as_str() {
                "verifier" => "check.verifier".to_string(),
                "base_url" | "model" => format!("{backend}.{}", o.key),
                key => key.to_string(),
            };
            layers.push(o.layer(&key, &keys)?);
        }
        let mut figment = Figment::new();
        for layer in &layers {
            figment = figment.merge(layer.clone());
        }
        let mut settings: Settings = figment
            .extract_lossy()
            .map_err(|e| EngineError::Config(e.to_string()))?;
        let origins: Vec<Origin> = layers.into_iter().map(|l| l.origin).collect();
        let configured = Configured {
            settings: Settings::default(),
            figment,
            origins,
        };
        // `off` (or `none`) turns the model off, the default place too.
        if settings.model_dir.as_deref().is_some_and(turned_off) {
            settings.model_dir = None;
        }
        // The audit log lives beside the index unless it is set.
        if configured.origin("audit_path") == Origin::Default {
            settings.audit_path = audit_beside(&settings.index);
        }
        Ok(Configured {
            settings,
            ..configured
        })
    }

    /// Reads and parses a `groundcite.toml` ([`Settings::from_toml`]) over
    /// the defaults: no environment, no flags.
    pub fn from_file(path: &Path) -> Result<Settings, EngineError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
        Settings::from_toml(&text)
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))
    }

    /// Parses a `groundcite.toml`. A key this version does not read is an
    /// error naming it (with its table) and the nearest known key, never a
    /// silent default: `topk = 5` would otherwise leave `top_k` at 5 by
    /// luck and `top_k = 8` misspelled at its default.
    pub fn from_toml(text: &str) -> Result<Settings, String> {
        let deserializer = toml::Deserializer::parse(text).map_err(|e| e.to_string())?;
        let mut unknown = Vec::new();
        let settings: Settings = serde_ignored::deserialize(deserializer, |path| {
            unknown.push(path.to_string());
        })
        .map_err(|e| e.to_string())?;
        match unknown.first() {
            None => Ok(settings),
            Some(key) => Err(unknown_key_message(key)),
        }
    }
}

/// The variable naming the configuration file.
pub const CONFIG_ENV: &str = "GROUNDCITE_CONFIG";
/// The prefix of every configuration variable.
pub const ENV_PREFIX: &str = "GROUNDCITE_";
/// `GROUNDCITE_*` variables that are not configuration keys: the file's
/// name, the service's own options (`groundcite serve`), the PostgreSQL
/// url of `groundcite db`, and those of the tests and scripts (the ones
/// below, and any variable starting `GROUNDCITE_TEST_`, `GROUNDCITE_PG_`
/// or `GROUNDCITE_BENCH_`). A test reads every script of the repository
/// (`.ci/`, `scripts/`, `bench/`) so that a new script variable is added
/// here rather than breaking the binary it calls.
pub const NOT_CONFIG_VARS: &[&str] = &[
    CONFIG_ENV,
    "GROUNDCITE_API_KEY",
    "GROUNDCITE_CORS_ORIGINS",
    "GROUNDCITE_BODY_LIMIT",
    "GROUNDCITE_TIMEOUT_SECS",
    "GROUNDCITE_AUDIT_WAIT_MS",
    "GROUNDCITE_MAX_CONNECTIONS",
    "GROUNDCITE_HEADER_TIMEOUT_SECS",
    "GROUNDCITE_DATABASE_URL",
    "GROUNDCITE_BIN",
    "GROUNDCITE_LLAMA_VENV",
    "GROUNDCITE_LLM_PORT",
    "GROUNDCITE_PGSERVER_HOME",
    "GROUNDCITE_WHEEL",
];
const NOT_CONFIG_PREFIXES: &[&str] = &["GROUNDCITE_TEST_", "GROUNDCITE_PG_", "GROUNDCITE_BENCH_"];

/// Short names that route to a key (see the module docs).
const ALIASES: &[&str] = &["verifier", "base_url", "model"];

/// The process environment, for [`Settings::configure`].
pub fn env_vars() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The variable of a key: `check.bad_id_policy` → `GROUNDCITE_CHECK__BAD_ID_POLICY`.
pub fn env_var(key: &str) -> String {
    format!(
        "{ENV_PREFIX}{}",
        key.replace('.', "__").to_ascii_uppercase()
    )
}

/// Where a configuration value came from (`groundcite config --show-origin`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", content = "name", rename_all = "snake_case")]
pub enum Origin {
    /// The documented default.
    Default,
    /// A `groundcite.toml` (its path).
    File(PathBuf),
    /// An environment variable (its name).
    Env(String),
    /// A command-line flag, as written (`--top-k`, `--set check.verifier`).
    Flag(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File(path) => write!(f, "file {}", path.display()),
            Origin::Env(name) => write!(f, "env {name}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// One value from the environment or a flag: a key (or a short name, see
/// the module docs), its text, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The dotted key (`check.verifier`) or a short name (`verifier`).
    pub key: String,
    /// The value as written, typed later by its key.
    pub value: String,
    /// Which variable or flag gave it.
    pub origin: Origin,
}

impl Override {
    /// A value given by a flag (`--top-k 8` is `Override::flag("top_k", "8", "--top-k")`).
    pub fn flag(key: &str, value: impl Into<String>, flag: &str) -> Override {
        Override {
            key: key.to_string(),
            value: value.into(),
            origin: Origin::Flag(flag.to_string()),
        }
    }

    /// `KEY=VALUE`, as `--set` takes it.
    pub fn parse_set(text: &str) -> Result<Override, EngineError> {
        let (key, value) = text.split_once('=').ok_or_else(|| {
            EngineError::Config(format!(
                "--set {text:?}: expected KEY=VALUE, e.g. --set check.bad_id_policy=refuse"
            ))
        })?;
        let key = key.trim();
        Ok(Override::flag(key, value, &format!("--set {key}")))
    }

    /// The layer setting `key` to this value, read as the key's type.
    fn layer(
        &self,
        key: &str,
        keys: &std::collections::BTreeMap<String, serde_json::Value>,
    ) -> Result<Layer, EngineError> {
        let value = typed(&self.value, keys.get(key)).map_err(|why| {
            EngineError::Config(format!("{key} = {:?} ({}): {why}", self.value, self.origin))
        })?;
        let dict = figment::util::nest(key, value)
            .into_dict()
            .ok_or_else(|| EngineError::Config(format!("empty key ({})", self.origin)))?;
        Ok(Layer {
            origin: self.origin.clone(),
            dict,
        })
    }
}

/// A value's text read as its key's type (the type of its default): a
/// number, `true` / `false`, or text.
fn typed(text: &str, default: Option<&serde_json::Value>) -> Result<FigValue, &'static str> {
    use serde_json::Value as J;
    let t = text.trim();
    Ok(match default {
        Some(J::Number(n)) if n.is_u64() => t
            .parse::<u64>()
            .map(FigValue::from)
            .map_err(|_| "not a whole number")?,
        Some(J::Number(n)) if n.is_i64() => t
            .parse::<i64>()
            .map(FigValue::from)
            .map_err(|_| "not a whole number")?,
        Some(J::Number(_)) => t
            .parse::<f64>()
            .map(FigValue::from)
            .map_err(|_| "not a number")?,
        Some(J::Bool(_)) => match t {
            "true" => FigValue::from(true),
            "false" => FigValue::from(false),
            _ => return Err("expected true or false"),
        },
        Some(J::Object(_)) => return Err("a table, not a value: set its keys"),
        _ => FigValue::from(text.to_string()),
    })
}

/// The key a `GROUNDCITE_*` variable sets, if it is a configuration
/// variable; an error for one that looks like a key but is none.
fn env_override(
    name: &str,
    value: &str,
    keys: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<Option<Override>, EngineError> {
    let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
        return Ok(None);
    };
    if NOT_CONFIG_VARS.contains(&name) || NOT_CONFIG_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Ok(None);
    }
    let key = rest.to_ascii_lowercase().replace("__", ".");
    if !keys.contains_key(&key) && !ALIASES.contains(&key.as_str()) {
        // Compared with single underscores, so that a missing `__`
        // (`GROUNDCITE_CHECK_VERIFIER`) finds its key too.
        let flat = |k: &str| k.replace("__", "_").replace('.', "_");
        let meant = keys
            .keys()
            .map(String::as_str)
            .chain(ALIASES.iter().copied())
            .map(|known| (strsim::jaro_winkler(&flat(&key), &flat(known)), known))
            .filter(|(score, _)| *score >= 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| format!("; did you mean `{}` ({k})?", env_var(k)))
            .unwrap_or_default();
        return Err(EngineError::Config(format!(
            "unknown variable `{name}`: not a configuration key{meant} (a key `a.b` is \
             `GROUNDCITE_A__B`; `groundcite config --show-origin` lists every key)"
        )));
    }
    // An empty variable leaves an optional key unset (`GROUNDCITE_MODEL_DIR=`).
    if value.is_empty() && keys.get(&key).is_some_and(serde_json::Value::is_null) {
        return Ok(None);
    }
    Ok(Some(Override {
        key,
        value: value.to_string(),
        origin: Origin::Env(name.to_string()),
    }))
}

/// Every key of the configuration (dotted paths, tables flattened) with
/// its default value.
fn key_types() -> std::collections::BTreeMap<String, serde_json::Value> {
    fn walk(
        prefix: &str,
        value: serde_json::Value,
        out: &mut std::collections::BTreeMap<String, serde_json::Value>,
    ) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() {
                        k
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&path, v, out);
                }
            }
            leaf => {
                out.insert(prefix.to_string(), leaf);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(
        "",
        serde_json::to_value(Settings::default()).unwrap_or_default(),
        &mut out,
    );
    out
}

fn to_dict(settings: &Settings) -> Result<Dict, EngineError> {
    FigValue::serialize(settings)
        .ok()
        .and_then(FigValue::into_dict)
        .ok_or_else(|| EngineError::Internal("the default configuration does not serialize".into()))
}

/// The file's values, after the same checks as [`Settings::from_file`]
/// (its syntax, its types, unknown keys).
fn file_dict(path: &Path) -> Result<Dict, EngineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
    Settings::from_toml(&text)
        .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))
}

/// One layer of the configuration: the values of one source.
#[derive(Clone)]
struct Layer {
    origin: Origin,
    dict: Dict,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.origin.to_string())
            .interpolater(|_: &Profile, keys: &[&str]| keys.join("."))
    }

    fn data(&self) -> Result<figment::value::Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.dict.clone()))
    }
}

/// The effective settings, and where each value came from.
#[derive(Debug)]
pub struct Configured {
    /// The merged settings.
    pub settings: Settings,
    figment: Figment,
    origins: Vec<Origin>,
}

/// One key of the effective configuration, for `config --show-origin`.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigEntry {
    /// The dotted key (`check.verifier`).
    pub key: String,
    /// The value (database passwords hidden).
    pub value: serde_json::Value,
    /// Where the value came from: default, file, variable or flag.
    pub origin: Origin,
}

impl Configured {
    /// Where `key` (a dotted path) got its value.
    pub fn origin(&self, key: &str) -> Origin {
        self.figment
            .find_metadata(key)
            .and_then(|md| self.origins.iter().find(|o| o.to_string() == md.name))
            .cloned()
            .unwrap_or(Origin::Default)
    }

    /// Every key with its effective value and its origin, in key order.
    pub fn entries(&self) -> Vec<ConfigEntry> {
        let shown = serde_json::to_value(self.settings.masked()).unwrap_or_default();
        key_types()
            .into_keys()
            .map(|key| {
                let value = key
                    .split('.')
                    .try_fold(&shown, |v, part| v.get(part))
                    .cloned()
                    .unwrap_or_default();
                let origin = self.origin(&key);
                ConfigEntry { key, value, origin }
            })
            .collect()
    }
}

/// "unknown key `check.bad_id_polcy`; did you mean `check.bad_id_policy`?":
/// the candidates are the keys the default configuration writes at the
/// same level (optional keys included, as `null`).
fn unknown_key_message(path: &str) -> String {
    match nearest_key(path) {
        Some(known) => format!(
            "unknown key `{path}`; did you mean `{known}`? (`groundcite config` prints every key)"
        ),
        None => format!("unknown key `{path}` (`groundcite config` prints every key)"),
    }
}

/// The known key nearest to `path`, at the same level.
fn nearest_key(path: &str) -> Option<String> {
    let (table, key) = match path.rsplit_once('.') {
        Some((table, key)) => (Some(table), key),
        None => (None, path),
    };
    let defaults = serde_json::to_value(Settings::default()).unwrap_or_default();
    let level = match table {
        Some(table) => table.split('.').try_fold(&defaults, |v, part| v.get(part)),
        None => Some(&defaults),
    };
    let nearest = level
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flat_map(|map| map.keys())
        .map(|known| (strsim::jaro_winkler(key, known), known))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let full = |k: &str| match table {
        Some(table) => format!("{table}.{k}"),
        None => k.to_string(),
    };
    nearest.map(|(_, known)| full(known))
}
