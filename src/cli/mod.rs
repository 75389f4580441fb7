//! The command line: parse (`args`), resolve the config, dispatch, and map errors to exit codes.
//!
//! Exit codes: 0 success, 1 a command that failed, 2 a command line that cannot run,
//! 130 a command interrupted by Ctrl-C.

mod agent_cmd;
pub mod args;
mod help;
mod mcp_cmd;
mod profile_cmd;
mod render;
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
    let raw = match args::parse(std::env::args_os().skip(1)) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("tai: {}", e.0);
            return 2;
        }
    };
    // Whatever tai starts stays its own to end: orphans are re-parented to tai, not init.
    crate::child::become_subreaper();
    match execute(raw) {
        Ok(()) => 0,
        // Ctrl-C ended the command: the shell convention, 128 + SIGINT.
        Err(e) if crate::sigint::interrupted() => {
            eprintln!("tai: {e}");
            130
        }
        Err(e) => {
            eprintln!("tai: {e}");
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
        Command::Mcp(cmd) => mcp_cmd::run(cmd, load),
        Command::Chat(a) => agent_cmd::run(&mut load()?, a),
        Command::ServeStdio => {
            let mut ctx = load()?;
            ctx.unlock()?;
            eprintln!(
                "tai: serving MCP on stdin/stdout (both eras). No user is present: every tool call is approved, as with --yolo; the launching host is the authority."
            );
            let Context { store, config, .. } = ctx;
            let mut server = crate::server::McpServer::new(store, config);
            shorten_chat_timeout(&mut server);
            Ok(crate::server::stdio::serve(&mut server)?)
        }
        Command::ServeHttp { key, port, bind } => serve_http(load()?, key, *port, bind.as_deref()),
    }
}

/// `tai --serve-mcp KEY`: the HTTP server until SIGINT or SIGTERM.
fn serve_http(mut ctx: Context, key: &str, port: Option<u16>, bind: Option<&str>) -> Result {
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
    ctx.unlock()?;
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
        let store = Store::open(&paths.home.join("vault.db"))?;
        let current = store.meta_text("current_profile")?;
        let rows = store.profiles()?;
        let flags = FlagSettings {
            profile: raw.profile.clone(),
            approval: raw.approval,
        };
        let config = config::resolve(
            &paths,
            file.as_ref(),
            &config::process_env,
            &flags,
            current.as_deref(),
            |name| rows.iter().find(|r| r.name == name).cloned(),
        );
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
            "vault": { "path": c.vault_path, "schema_version": version, "sealed": sealed, "secrets": secrets },
        });
        return Ok(out(&format!("{v:#}\n"))?);
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
        "tai {VERSION}\nconfig    {}{}\nvault     {} (schema v{version}, {}, {secrets} secret{})\nprofile   {}\nendpoint  {}\nmodel     {model}\napi key   {key}\n",
        c.config_path.display(),
        if c.config_file_exists {
            ""
        } else {
            " (not present; defaults apply)"
        },
        c.vault_path.display(),
        if sealed { "sealed" } else { "unsealed" },
        if secrets == 1 { "" } else { "s" },
        c.profile,
        c.base_url,
    );
    Ok(out(&text)?)
}
