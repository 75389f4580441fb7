//! Configuration: the config file, the environment and the flags, resolved into one `Config`.
//!
//! Pure: the file's text and the environment are passed in, so resolution is tested
//! with tables. Precedence, highest first: flags, `TAI_*` environment, the current
//! profile (config file `[profiles.NAME]`, then the vault's profile row), the file's top
//! level, built-in defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::vault::ProfileRow;

/// The built-in model endpoint: a local Ollama.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434/v1";
/// The profile used when nothing names one.
pub const DEFAULT_PROFILE: &str = "default";

/// How tool calls that need approval are decided (defined beside the policy it drives).
pub use crate::approval::Approval;

/// Model settings a file profile may override.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProfileSettings {
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Name of a vault secret holding the API key.
    pub api_key_secret: Option<String>,
}

/// The config file (`config.toml`) as written by the user.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile to use when neither `--profile` nor `TAI_PROFILE` names one.
    pub profile: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_secret: Option<String>,
    /// The GitHub URL resolver's bases (`TAI_REGISTRY_URL` and friends override them).
    pub registry_url: Option<String>,
    pub github_api_url: Option<String>,
    pub github_raw_url: Option<String>,
    pub glama_url: Option<String>,
    /// `--serve-workers`: a server's long calls running at once (default 4).
    pub serve_workers: Option<usize>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileSettings>,
}

impl ConfigFile {
    /// Parse the file's text; errors name the file, the line and column, and the key.
    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, String> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| line_col(text, s.start));
            let msg = e.message().trim_end();
            match at {
                Some((line, col)) => {
                    let key = key_at(text, line);
                    let key = key.map(|k| format!(" (key `{k}`)")).unwrap_or_default();
                    format!("{}:{line}:{col}: {msg}{key}", path.display())
                }
                None => format!("{}: {msg}", path.display()),
            }
        })
    }
}

/// 1-based line and column of byte offset `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The key written on 1-based `line`, if it holds `key = ...`.
fn key_at(text: &str, line: usize) -> Option<String> {
    let l = text.lines().nth(line - 1)?;
    let (key, _) = l.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// Where the API key comes from (the value itself is read only when a call needs it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "from", content = "name", rename_all = "lowercase")]
pub enum ApiKeySource {
    None,
    /// `TAI_API_KEY` in the environment.
    Env,
    /// A vault secret of this name.
    Secret(String),
}

/// Everything a command needs to know, resolved once.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Config {
    /// `--serve-tools LIST`: the only native tools any call of this process may reach,
    /// a served `chat` agent's included (`None`: all). Set by the server, never a file.
    pub served_tools: Option<Vec<String>>,
    pub home: PathBuf,
    pub vault_path: PathBuf,
    pub config_path: PathBuf,
    pub config_file_exists: bool,
    pub profile: String,
    pub base_url: String,
    pub model: Option<String>,
    pub api_key: ApiKeySource,
    pub approval: Approval,
    /// Where the GitHub URL resolver looks.
    pub resolver: crate::resolver::Urls,
    /// The profile names that exist (`default`, the file's, the vault's), so a tool given
    /// a profile can refuse an unknown one. Filled by the CLI after the vault is open.
    #[serde(skip)]
    pub known_profiles: Vec<String>,
}

impl Config {
    /// Whether `name` is a profile that exists (`default` always does).
    pub fn knows_profile(&self, name: &str) -> bool {
        name == DEFAULT_PROFILE || self.known_profiles.iter().any(|p| p == name)
    }
}

/// Paths derived from the environment alone (no file is read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    pub home: PathBuf,
    pub config: PathBuf,
}

/// The environment as a lookup function, so tests pass a table.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> Env for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// The real process environment; empty values count as unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Paths {
    /// `TAI_HOME` or `$XDG_DATA_HOME/tai` or `~/.local/share/tai`; `TAI_CONFIG` or
    /// `$XDG_CONFIG_HOME/tai/config.toml` or `~/.config/tai/config.toml`.
    pub fn from_env(env: &dyn Env) -> Result<Paths, String> {
        let home_dir = || {
            env.var("HOME").map(PathBuf::from).ok_or_else(|| {
                "cannot find a home directory: set HOME, or TAI_HOME and TAI_CONFIG".to_string()
            })
        };
        let home = match env.var("TAI_HOME") {
            Some(h) => PathBuf::from(h),
            None => match env.var("XDG_DATA_HOME") {
                Some(d) => PathBuf::from(d).join("tai"),
                None => home_dir()?.join(".local/share/tai"),
            },
        };
        let config = match env.var("TAI_CONFIG") {
            Some(c) => PathBuf::from(c),
            None => match env.var("XDG_CONFIG_HOME") {
                Some(d) => PathBuf::from(d).join("tai/config.toml"),
                None => home_dir()?.join(".config/tai/config.toml"),
            },
        };
        Ok(Paths { home, config })
    }
}

/// What the flags say, before anything is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlagSettings {
    pub profile: Option<String>,
    pub approval: Approval,
}

/// [`resolve`] against the vault's stored profiles: the chosen one's row applied, and every
/// stored name known (so `--profile NAME` of a stored profile is not "unknown").
pub fn resolve_with_profiles(
    paths: &Paths,
    file: Option<&ConfigFile>,
    env: &dyn Env,
    flags: &FlagSettings,
    stored_current: Option<&str>,
    rows: &[ProfileRow],
) -> Config {
    let mut config = resolve(paths, file, env, flags, stored_current, |name| {
        rows.iter().find(|r| r.name == name).cloned()
    });
    config
        .known_profiles
        .extend(rows.iter().map(|r| r.name.clone()));
    config
}

/// Resolve the config. `file` is the parsed config file (`None` when absent);
/// `stored_current` is the profile `tai profile use` recorded in the vault;
/// `stored_profile` is the vault row of the chosen profile, when it has one.
pub fn resolve(
    paths: &Paths,
    file: Option<&ConfigFile>,
    env: &dyn Env,
    flags: &FlagSettings,
    stored_current: Option<&str>,
    stored_profile: impl FnOnce(&str) -> Option<ProfileRow>,
) -> Config {
    let empty = ConfigFile::default();
    let f = file.unwrap_or(&empty);
    let profile = flags
        .profile
        .clone()
        .or_else(|| env.var("TAI_PROFILE"))
        .or_else(|| stored_current.map(str::to_string))
        .or_else(|| f.profile.clone())
        .unwrap_or_else(|| DEFAULT_PROFILE.to_string());
    // A profile lives in one place: the config file's [profiles.NAME] when the file
    // defines it, else the vault's row (`tai profile add`/`set`); never a mix of both.
    let file_p = f.profiles.get(&profile);
    let row = stored_profile(&profile).filter(|_| file_p.is_none());
    let pick = |env_name: &str,
                fp: Option<&Option<String>>,
                row: Option<&Option<String>>,
                top: &Option<String>| {
        env.var(env_name)
            .or_else(|| fp.and_then(|v| v.clone()))
            .or_else(|| row.and_then(|v| v.clone()))
            .or_else(|| top.clone())
    };
    let base_url = pick(
        "TAI_BASE_URL",
        file_p.map(|p| &p.base_url),
        row.as_ref().map(|r| &r.base_url),
        &f.base_url,
    )
    .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
    let model = pick(
        "TAI_MODEL",
        file_p.map(|p| &p.model),
        row.as_ref().map(|r| &r.model),
        &f.model,
    );
    let api_key = if env.var("TAI_API_KEY").is_some() {
        ApiKeySource::Env
    } else {
        file_p
            .and_then(|p| p.api_key_secret.clone())
            .or_else(|| row.as_ref().and_then(|r| r.api_key_secret.clone()))
            .or_else(|| f.api_key_secret.clone())
            .map_or(ApiKeySource::None, ApiKeySource::Secret)
    };
    Config {
        served_tools: None,
        home: paths.home.clone(),
        vault_path: paths.home.join("vault.db"),
        config_path: paths.config.clone(),
        config_file_exists: file.is_some(),
        profile,
        base_url: base_url.trim_end_matches('/').to_string(),
        model,
        api_key,
        approval: flags.approval,
        resolver: resolver_urls(f, env),
        known_profiles: f.profiles.keys().cloned().collect(),
    }
}

/// The resolver's base URLs: environment, then the config file, then the public services.
fn resolver_urls(f: &ConfigFile, env: &dyn Env) -> crate::resolver::Urls {
    let d = crate::resolver::Urls::default();
    let pick = |var: &str, file: &Option<String>, default: String| {
        env.var(var)
            .filter(|v| !v.is_empty())
            .or_else(|| file.clone())
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_string()
    };
    crate::resolver::Urls {
        registry: pick("TAI_REGISTRY_URL", &f.registry_url, d.registry),
        github_api: pick("TAI_GITHUB_API_URL", &f.github_api_url, d.github_api),
        github_raw: pick("TAI_GITHUB_RAW_URL", &f.github_raw_url, d.github_raw),
        glama: pick("TAI_GLAMA_URL", &f.glama_url, d.glama),
    }
}

/// Read and parse the config file; `Ok(None)` when it does not exist.
pub fn read_file(path: &Path) -> Result<Option<ConfigFile>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => ConfigFile::parse(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn paths_follow_xdg() {
        let p = Paths::from_env(&env_of(&[("HOME", "/h")])).unwrap();
        assert_eq!(p.home, PathBuf::from("/h/.local/share/tai"));
        assert_eq!(p.config, PathBuf::from("/h/.config/tai/config.toml"));
        let p = Paths::from_env(&env_of(&[
            ("HOME", "/h"),
            ("XDG_DATA_HOME", "/d"),
            ("XDG_CONFIG_HOME", "/c"),
        ]))
        .unwrap();
        assert_eq!(p.home, PathBuf::from("/d/tai"));
        assert_eq!(p.config, PathBuf::from("/c/tai/config.toml"));
        let p =
            Paths::from_env(&env_of(&[("TAI_HOME", "/t"), ("TAI_CONFIG", "/t/c.toml")])).unwrap();
        assert_eq!(
            p,
            Paths {
                home: "/t".into(),
                config: "/t/c.toml".into()
            }
        );
        assert!(Paths::from_env(&env_of(&[])).unwrap_err().contains("HOME"));
    }

    #[test]
    fn parse_errors_name_file_line_and_key() {
        let path = Path::new("/x/config.toml");
        let cases = [
            (
                "model = \"a\"\nmodle = \"b\"\n",
                "/x/config.toml:2:1:",
                "modle",
            ),
            ("model = 3\n", "/x/config.toml:1:9:", "model"),
            (
                "[profiles.work]\nbase_url = \"u\"\ntemperature = 1\n",
                "/x/config.toml:3:1:",
                "temperature",
            ),
            ("model = \n", "/x/config.toml:1:", "model"),
        ];
        for (text, at, key) in cases {
            let err = ConfigFile::parse(path, text).unwrap_err();
            assert!(err.starts_with(at), "{err:?} should start with {at:?}");
            assert!(err.contains(key), "{err:?} should name {key:?}");
        }
        assert_eq!(ConfigFile::parse(path, "").unwrap(), ConfigFile::default());
    }

    #[test]
    fn precedence_table() {
        let paths = Paths {
            home: "/t".into(),
            config: "/t/c.toml".into(),
        };
        let file = ConfigFile::parse(
            Path::new("c"),
            "profile = \"work\"\nmodel = \"top\"\nbase_url = \"http://top/v1/\"\n[profiles.work]\nmodel = \"work-model\"\n[profiles.home]\napi_key_secret = \"homekey\"\n",
        )
        .unwrap();
        let none = |_: &str| None;
        let row = |name: &str| {
            (name == "lab").then(|| ProfileRow {
                name: "lab".into(),
                model: Some("lab-model".into()),
                base_url: Some("http://lab/v1".into()),
                api_key_secret: None,
            })
        };
        // file picks the profile, the profile overrides the model, top level gives the URL
        let c = resolve(
            &paths,
            Some(&file),
            &env_of(&[]),
            &FlagSettings::default(),
            None,
            none,
        );
        assert_eq!(
            (c.profile.as_str(), c.model.as_deref(), c.base_url.as_str()),
            ("work", Some("work-model"), "http://top/v1")
        );
        // the vault's current profile beats the file's; its row supplies the settings
        let c = resolve(
            &paths,
            Some(&file),
            &env_of(&[]),
            &FlagSettings::default(),
            Some("lab"),
            row,
        );
        assert_eq!(
            (c.profile.as_str(), c.model.as_deref(), c.base_url.as_str()),
            ("lab", Some("lab-model"), "http://lab/v1")
        );
        // env beats the vault; the flag beats env
        let env = env_of(&[("TAI_PROFILE", "home"), ("TAI_MODEL", "env-model")]);
        let c = resolve(
            &paths,
            Some(&file),
            &env,
            &FlagSettings::default(),
            Some("lab"),
            row,
        );
        assert_eq!(
            (c.profile.as_str(), c.model.as_deref()),
            ("home", Some("env-model"))
        );
        assert_eq!(c.api_key, ApiKeySource::Secret("homekey".into()));
        let flags = FlagSettings {
            profile: Some("lab".into()),
            approval: Approval::Yolo,
        };
        let c = resolve(&paths, Some(&file), &env, &flags, None, row);
        assert_eq!(
            (c.profile.as_str(), c.model.as_deref(), c.approval),
            ("lab", Some("env-model"), Approval::Yolo)
        );
        // TAI_API_KEY wins over any secret name; nothing at all gives the defaults
        let c = resolve(
            &paths,
            Some(&file),
            &env_of(&[("TAI_API_KEY", "k"), ("TAI_PROFILE", "home")]),
            &FlagSettings::default(),
            None,
            none,
        );
        assert_eq!(c.api_key, ApiKeySource::Env);
        let c = resolve(
            &paths,
            None,
            &env_of(&[]),
            &FlagSettings::default(),
            None,
            none,
        );
        assert_eq!(
            (c.profile.as_str(), c.base_url.as_str(), c.model, c.api_key),
            ("default", DEFAULT_BASE_URL, None, ApiKeySource::None)
        );
        assert_eq!(c.vault_path, PathBuf::from("/t/vault.db"));
        assert_eq!(c.resolver, crate::resolver::Urls::default());
        // the resolver's bases: env over the file over the public services
        let file = ConfigFile::parse(
            Path::new("c"),
            "registry_url = \"http://mirror/reg/\"\nglama_url = \"http://g\"\n",
        )
        .unwrap();
        let env = env_of(&[
            ("TAI_GLAMA_URL", "http://env-g"),
            ("TAI_GITHUB_RAW_URL", "http://raw"),
        ]);
        let c = resolve(
            &paths,
            Some(&file),
            &env,
            &FlagSettings::default(),
            None,
            none,
        );
        let r = &c.resolver;
        assert_eq!(
            (
                r.registry.as_str(),
                r.glama.as_str(),
                r.github_raw.as_str(),
                r.github_api.as_str()
            ),
            (
                "http://mirror/reg",
                "http://env-g",
                "http://raw",
                "https://api.github.com"
            )
        );
    }
}
