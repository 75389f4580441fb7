//! The command line: parse (`args`), resolve the config, dispatch, and map errors to exit codes.
//!
//! Exit codes: 0 success, 1 a command that failed, 2 a command line that cannot run,
//! 130 a command interrupted by Ctrl-C.

mod agent_cmd;
pub mod args;
mod completions;
mod help;
mod help_mcp;
mod history;
mod import_cmd;
mod line_editor;
mod manual;
mod mcp_cmd;
mod mcp_login;
mod piped;
mod profile_cmd;
mod project_offer;
mod render;
mod server_view;
mod vault_cmd;

use std::fmt;

use crate::config::{self, Config, FlagSettings, Paths};
use crate::vault::{self, Store};
use args::{Command, RawArgs};
pub use render::out;

/// tai's version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A failed command: one message for stderr.
#[derive(Debug)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<vault::Error> for Failure {
    fn from(e: vault::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure(e.to_string())
    }
}

pub type Result<T = ()> = std::result::Result<T, Failure>;

/// Run tai with the process's arguments; returns the exit code.
pub fn run() -> i32 {
    // tai's environment holds its secrets (TAI_VAULT_PASSPHRASE, TAI_API_KEY, …), and a
    // child running as the same user could read them from /proc/<tai>/environ even though
    // its own environment was built without them. Not dumpable, those files are root's.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_dumpable(false);
    // A served long call's worker (hidden: the server starts it, never a person).
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == crate::server::worker::WORKER_ARG)
    {
        crate::child::become_subreaper();
        return crate::server::worker::run();
    }
    let raw = match args::parse(std::env::args_os().skip(1)) {
        Ok(raw) => raw,
        Err(e) => {
            if std::env::args_os().any(|a| a == "--json") {
                let _ = render::out_json(&serde_json::json!({ "error": e.0 }));
            }
            eprintln!("tai: {}", crate::sanitize::line(&e.0));
            return 2;
        }
    };
    let json = raw.json;
    // Whatever tai starts stays its own to end: orphans are re-parented to tai, not init.
    crate::child::become_subreaper();
    match execute(raw) {
        Ok(()) => 0,
        // Ctrl-C ended the command: the shell convention, 128 + SIGINT.
        Err(e) if crate::sigint::interrupted() => {
            eprintln!("tai: {}", crate::sanitize::block(&e.to_string()));
            130
        }
        Err(e) => {
            // `--json` answers in JSON even when it fails: {"error": …}, exit 1
            if json && !render::json_printed() {
                let _ = render::out_json(&serde_json::json!({ "error": e.0 }));
            }
            // Errors carry servers' stderr tails and untrusted names: shown sanitized.
            eprintln!("tai: {}", crate::sanitize::block(&e.to_string()));
            1
        }
    }
}

fn execute(raw: RawArgs) -> Result {
    let load = || Context::load(&raw);
    match &raw.command {
        Command::Help(topic) => Ok(out(help::text(topic))?),
        Command::Version => Ok(out(&format!("tai {VERSION}\n"))?),
        Command::Status { json } => status(&load()?, *json),
        Command::Profile(cmd) => profile_cmd::run(&mut load()?, cmd),
        Command::Vault(cmd) => vault_cmd::run(&mut load()?, cmd),
        Command::Mcp(cmd) => mcp_cmd::run(cmd, raw.json, load),
        Command::Chat(a) => agent_cmd::run(&mut load()?, a),
        Command::Completions(shell) => Ok(out(&completions::script(shell))?),
        Command::Man => Ok(out(&manual::page())?),
        Command::ServeStdio { tools, workers } => {
            check_serve_tools(tools.as_deref())?;
            let mut ctx = load()?;
            let passphrase = ctx.unlock_for_serve()?;
            let workers = serve_workers(&ctx, *workers);
            eprintln!(
                "tai: serving MCP on stdin/stdout (both eras). No user is present: every tool call is approved, as with --yolo; the launching host is the authority."
            );
            let Context { store, config, .. } = ctx;
            let mut server = crate::server::McpServer::new(store, config);
            server.serve_only(tools.clone());
            server.secrets = worker_secrets(passphrase);
            shorten_chat_timeout(&mut server);
            let pool = crate::server::worker::Pool::new(workers)?;
            Ok(crate::server::stdio::serve(&mut server, pool)?)
        }
        Command::ServeHttp {
            key,
            port,
            bind,
            tools,
            workers,
        } => {
            check_serve_tools(tools.as_deref())?;
            let ctx = load()?;
            let workers = serve_workers(&ctx, *workers);
            serve_http(ctx, key, *port, bind.as_deref(), tools.clone(), workers)
        }
    }
}

/// How many long calls a server runs at once: `--serve-workers`, else the config file's
/// `serve_workers`, else the default.
fn serve_workers(ctx: &Context, flag: Option<usize>) -> usize {
    flag.or_else(|| ctx.file.as_ref().and_then(|f| f.serve_workers))
        .unwrap_or(crate::server::worker::DEFAULT_WORKERS)
        .max(1)
}

/// tai's secrets a server's workers need (the API key, the vault passphrase, …): given
/// them on stdin, never in their environment.
fn worker_secrets(passphrase: Option<String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = crate::child_env::WITHHELD_NAMES
        .iter()
        .filter_map(|n| config::process_env(n).map(|v| (n.to_string(), v)))
        .collect();
    if let Some(p) = passphrase
        && !out.iter().any(|(n, _)| n == "TAI_VAULT_PASSPHRASE")
    {
        out.push(("TAI_VAULT_PASSPHRASE".into(), p));
    }
    out
}

/// `--serve-tools` names only tools tai serves.
fn check_serve_tools(tools: Option<&[String]>) -> Result {
    let unknown = crate::server::unknown_tools(tools.unwrap_or_default());
    if unknown.is_empty() {
        return Ok(());
    }
    let served: Vec<String> = crate::server::served_tools()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    Err(Failure(format!(
        "--serve-tools: tai serves no tool named {} (it serves {})",
        unknown.join(", "),
        served.join(", ")
    )))
}

/// `tai --serve-mcp KEY`: the HTTP server until SIGINT or SIGTERM.
fn serve_http(
    mut ctx: Context,
    key: &str,
    port: Option<u16>,
    bind: Option<&str>,
    tools: Option<Vec<String>>,
    workers: usize,
) -> Result {
    let key = match key {
        "-" => match config::process_env("TAI_MCP_KEY") {
            Some(k) => k,
            None => {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                line.trim().to_string()
            }
        },
        k => k.to_string(),
    };
    if key.len() < 8 {
        return Err(Failure("the server key must be at least 8 characters (use --serve-mcp - to read it from TAI_MCP_KEY or stdin)".into()));
    }
    let port = match port {
        Some(p) => p,
        None => match config::process_env("TAI_MCP_PORT") {
            Some(p) => p
                .parse()
                .map_err(|_| Failure(format!("TAI_MCP_PORT is not a port number: {p}")))?,
            None => crate::mcp::caps::MCP_DEFAULT_PORT,
        },
    };
    let bind = bind
        .map(str::to_string)
        .or_else(|| config::process_env("TAI_MCP_BIND"))
        .unwrap_or_else(|| "127.0.0.1".into());
    let passphrase = ctx.unlock_for_serve()?;
    ctx.store.remember("server-key", &key);
    let listener = std::net::TcpListener::bind((bind.as_str(), port)).map_err(|e| {
        Failure(format!(
            "cannot listen on {bind}:{port}: {e} (choose another with --mcp-port)"
        ))
    })?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        // Beyond loopback anyone who can reach the port can try keys: a long one, and say so.
        if key.chars().count() < 32 {
            return Err(Failure(format!(
                "listening on {addr} (beyond loopback) needs a key of at least 32 characters; this one has {}. Generate one with `head -c 24 /dev/urandom | base64` and pass it with --serve-mcp - (TAI_MCP_KEY)",
                key.chars().count()
            )));
        }
        eprintln!(
            "tai: listening beyond loopback at {addr}: every request needs the key (32+ characters), and its Host must be an IP address, localhost or a name in TAI_MCP_HOSTS"
        );
    }
    crate::sigint::install_with_term();
    eprintln!(
        "tai: serving MCP at http://{addr}/mcp (both eras); clients send Authorization: Bearer <the key>"
    );
    eprintln!(
        "tai: NO USER IS PRESENT: every tool call is approved, as with --yolo. The key is the authorization."
    );
    let Context { store, config, .. } = ctx;
    let mut server = crate::server::McpServer::new(store, config);
    server.serve_only(tools);
    server.secrets = worker_secrets(passphrase);
    // The key given on the command line is scrubbed from a worker's output too.
    if !server.secrets.iter().any(|(n, _)| n == "TAI_MCP_KEY") {
        server.secrets.push(("TAI_MCP_KEY".into(), key.clone()));
    }
    shorten_chat_timeout(&mut server);
    if let Some(secs) = config::process_env("TAI_MCP_SESSION_IDLE").and_then(|s| s.parse().ok()) {
        server.idle = std::time::Duration::from_secs(secs); // a shorter MCP_SESSION_IDLE (tests, busy hosts)
    }
    let hosts: Vec<String> = config::process_env("TAI_MCP_HOSTS")
        .map(|h| {
            h.split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut endpoint = crate::server::http::Endpoint::new(server, key).bound_to(addr, hosts);
    endpoint.workers = Some(crate::server::worker::Pool::new(workers)?);
    // A test setting: shorter deadlines (`name=MS,…`, see `Limits::with_overrides`).
    let limits = crate::server::http::Limits::default()
        .with_overrides(&config::process_env("TAI_MCP_TEST_LIMITS").unwrap_or_default());
    crate::server::http::serve(&mut endpoint, listener, limits)?;
    eprintln!("tai: stopped");
    Ok(())
}

/// A test setting: `TAI_MCP_CHAT_TIMEOUT_MS` shortens a served `chat` turn's deadline.
fn shorten_chat_timeout(server: &mut crate::server::McpServer) {
    if let Some(ms) = config::process_env("TAI_MCP_CHAT_TIMEOUT_MS").and_then(|s| s.parse().ok()) {
        server.chat_timeout = std::time::Duration::from_millis(ms);
    }
}

/// What every command past `--help`/`--version` has: the resolved config and the open vault.
pub struct Context {
    pub config: Config,
    pub store: Store,
    pub file: Option<config::ConfigFile>,
}

impl Context {
    fn load(raw: &RawArgs) -> Result<Context> {
        let paths = Paths::from_env(&config::process_env).map_err(Failure)?;
        let file =
            config::read_file(&paths.config).map_err(|e| Failure(format!("config error: {e}")))?;
        let mut store = Store::open(&paths.home.join("vault.db"))?;
        // tai's own secrets from the environment join the redaction set on every path.
        for (name, var) in [
            ("api-key", "TAI_API_KEY"),
            ("server-key", "TAI_MCP_KEY"),
            ("vault-passphrase", "TAI_VAULT_PASSPHRASE"),
            ("github-token", "GITHUB_TOKEN"),
        ] {
            if let Some(value) = config::process_env(var) {
                store.remember(name, &value);
            }
        }
        let current = store.meta_text("current_profile")?;
        let rows = store.profiles()?;
        let flags = FlagSettings {
            profile: raw.profile.clone(),
            approval: raw.approval,
        };
        let config = config::resolve_with_profiles(
            &paths,
            file.as_ref(),
            &config::process_env,
            &flags,
            current.as_deref(),
            &rows,
        );
        // An unknown profile is an error everywhere (it would enable servers for a phantom),
        // except in `tai profile`, where it is made or repaired.
        let known = config.knows_profile(&config.profile);
        if !known && !matches!(raw.command, Command::Profile(_)) {
            return Err(Failure(format!(
                "no profile named {:?}: create it with `tai profile add {}` (see `tai profile list`)",
                config.profile, config.profile
            )));
        }
        Ok(Context {
            config,
            store,
            file,
        })
    }

    /// Unlock a sealed vault with `TAI_VAULT_PASSPHRASE` or a terminal prompt.
    pub fn unlock(&mut self) -> Result {
        if !self.store.is_sealed()? {
            return Ok(());
        }
        let passphrase = match config::process_env("TAI_VAULT_PASSPHRASE") {
            Some(p) => p,
            None if crate::term::has_tty() => crate::term::read_hidden("Vault passphrase: ")?,
            None => return Err(vault::Error::Locked.into()),
        };
        Ok(self.store.unlock(&passphrase)?)
    }

    /// `unlock` for a server, which hands the passphrase to its workers: the one used.
    fn unlock_for_serve(&mut self) -> Result<Option<String>> {
        if !self.store.is_sealed()? {
            return Ok(None);
        }
        let passphrase = match config::process_env("TAI_VAULT_PASSPHRASE") {
            Some(p) => p,
            None if crate::term::has_tty() => crate::term::read_hidden("Vault passphrase: ")?,
            None => return Err(vault::Error::Locked.into()),
        };
        self.store.unlock(&passphrase)?;
        Ok(Some(passphrase))
    }

    /// Unlock only when `TAI_VAULT_PASSPHRASE` is given: for commands that work on a
    /// sealed vault without it (listing, enabling, removing servers) but key their audit
    /// rows when they can.
    pub fn unlock_if_given(&mut self) -> Result {
        match config::process_env("TAI_VAULT_PASSPHRASE") {
            Some(p) if self.store.is_sealed()? => Ok(self.store.unlock(&p)?),
            _ => Ok(()),
        }
    }
}

fn status(ctx: &Context, json: bool) -> Result {
    let c = &ctx.config;
    let sealed = ctx.store.is_sealed()?;
    let secrets = ctx.store.secret_names()?.len();
    let version = ctx.store.schema_version()?;
    if json {
        let v = serde_json::json!({
            "version": VERSION,
            "config": c,
            "vault": { "path": c.vault_path, "schema_version": version, "sealed": sealed, "secrets": secrets,
                       "seal_covers": if sealed { Some(vault::SEAL_COVERS) } else { None } },
        });
        return Ok(render::out_json(&v)?);
    }
    let model = c
        .model
        .clone()
        .unwrap_or_else(|| "(not set: TAI_MODEL, or `tai profile add NAME --model M`)".into());
    let key = match &c.api_key {
        config::ApiKeySource::None => "none".to_string(),
        config::ApiKeySource::Env => "from TAI_API_KEY".to_string(),
        config::ApiKeySource::Secret(name) => format!("vault secret {name:?}"),
    };
    let text = format!(
        "tai {VERSION}\nconfig    {}{}\nvault     {} (schema v{version}, {}, {secrets} secret{})\nsealed    {}\nprofile   {}\nendpoint  {}\nmodel     {model}\napi key   {key}\n",
        c.config_path.display(),
        if c.config_file_exists {
            ""
        } else {
            " (not present; defaults apply)"
        },
        c.vault_path.display(),
        if sealed { "sealed" } else { "unsealed" },
        if secrets == 1 { "" } else { "s" },
        if sealed {
            vault::SEAL_COVERS
        } else {
            "nothing: values are stored in plain text (`tai vault seal` encrypts them)"
        },
        c.profile,
        c.base_url,
    );
    Ok(out(&text)?)
}
