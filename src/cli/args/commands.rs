//! What a command line asks for, as plain data: `RawArgs` and one enum per command
//! family (no parsing here; `args.rs` builds these).

use crate::config::Approval;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct RawArgs {
    pub profile: Option<String>,
    pub approval: Approval,
    pub command: Command,
    /// `--json` was given: the command's output, and its errors, are JSON.
    pub json: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `--help` for a topic (`&[]` is the top level).
    Help(&'static str),
    Version,
    /// `tai status [--json]`: paths, profile, model and vault state.
    Status {
        json: bool,
    },
    Profile(ProfileCmd),
    Vault(VaultCmd),
    Mcp(McpCmd),
    /// The agent: `tai` (the REPL) or `tai -p PROMPT` (one turn).
    Chat(ChatArgs),
    /// `tai --serve-mcp-stdio [--serve-tools LIST]`: serve MCP over stdio.
    ServeStdio {
        tools: Option<Vec<String>>,
        /// `--serve-workers N`: long calls running at once.
        workers: Option<usize>,
    },
    /// `tai --serve-mcp KEY [--mcp-port N] [--mcp-bind ADDR] [--serve-tools LIST]`: serve
    /// MCP over HTTP.
    ServeHttp {
        key: String,
        port: Option<u16>,
        bind: Option<String>,
        tools: Option<Vec<String>>,
        workers: Option<usize>,
    },
    /// `tai completions bash|zsh|fish`
    Completions(String),
    /// `tai man`: the man page.
    Man,
}

/// `tai [-p PROMPT|-] [--continue] [--json] [--max-steps N]`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatArgs {
    /// One turn with this prompt (`-` reads stdin); `None` opens the REPL.
    pub prompt: Option<String>,
    pub resume: bool,
    pub json: bool,
    pub max_steps: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum McpCmd {
    Probe(ProbeArgs),
    Add {
        source: String,
        name: Option<String>,
        replace: bool,
        json: bool,
        /// Which candidate a GitHub URL's resolution takes when several disagree (1-based).
        pick: Option<usize>,
        /// The common grammar (`NAME [-e K=V]… [-H 'K: V']… [--url URL] [-- CMD ARGS…]`):
        /// `source` is then the entry built from the flags, as JSON.
        explicit: bool,
        /// `--connect-timeout S` / `--call-timeout S`, kept with the entry.
        connect_timeout: Option<f64>,
        call_timeout: Option<f64>,
    },
    /// `tai mcp resolve URL [--pick N] [--json]`: what a GitHub URL resolves to, and why.
    Resolve {
        url: String,
        pick: Option<usize>,
        json: bool,
    },
    Import {
        file: String,
        replace: bool,
        json: bool,
        /// `--anywhere`: a project's servers are not tied to their project.
        anywhere: bool,
    },
    /// `tai mcp list [--json] [--check]`: `--check` connects to each for a live status.
    List {
        json: bool,
        check: bool,
    },
    /// `tai mcp get NAME [--json]`: one server whole (secrets masked).
    Get {
        server: String,
        json: bool,
    },
    /// `tai mcp export [NAME…] --format claude|vscode|codex`.
    Export {
        servers: Vec<String>,
        format: String,
    },
    /// `tai mcp trust SERVER TOOL|'*'`: calls need no approval while the tool is unchanged.
    Trust {
        server: String,
        tool: String,
    },
    Untrust {
        server: String,
        tool: String,
    },
    Enable {
        server: String,
    },
    Disable {
        server: String,
    },
    Remove {
        server: String,
    },
    Tools {
        server: Option<String>,
        json: bool,
    },
    Call {
        server: String,
        tool: String,
        args: Option<String>,
        json: bool,
    },
    Approve {
        server: String,
        tool: String,
    },
    /// `tai mcp login NAME [--client-id ID] [--status]`: the OAuth flow, or its state.
    Login {
        server: String,
        client_id: Option<String>,
        status: bool,
    },
    /// `tai mcp logout NAME`: forget the server's OAuth tokens.
    Logout {
        server: String,
    },
}

/// `tai mcp probe SOURCE ...`
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeArgs {
    /// A command line, a URL, a JSON entry, or `-` for stdin.
    pub source: String,
    pub json: bool,
    pub protocol: Option<String>,
    pub headers: Vec<(String, String)>,
    pub call: Option<String>,
    pub args: Option<String>,
    pub repeat: usize,
    pub connect_timeout: Option<f64>,
    pub call_timeout: Option<f64>,
    pub probe_timeout: Option<f64>,
    /// A pre-registered OAuth client id (its secret, if any, in TAI_OAUTH_CLIENT_SECRET).
    pub client_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileCmd {
    List {
        json: bool,
    },
    Add {
        name: String,
        model: Option<String>,
        base_url: Option<String>,
        api_key_secret: Option<String>,
    },
    Use {
        name: String,
    },
    Remove {
        name: String,
    },
    /// `tai profile set NAME KEY VALUE` (an empty VALUE clears the setting).
    Set {
        name: String,
        key: String,
        value: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VaultCmd {
    SecretSet {
        name: String,
    },
    SecretList {
        json: bool,
    },
    SecretRemove {
        name: String,
    },
    Seal,
    Unseal,
    Audit {
        limit: Option<usize>,
        json: bool,
        verify: bool,
    },
    RecordGet {
        id: String,
    },
    RecordList {
        json: bool,
    },
}
