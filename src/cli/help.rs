//! `--help` texts, one per topic, written to teach. `tai help TOPIC`, `tai CMD --help`,
//! the man page (`tai man`, docs/tai.1) and the completions are all made from `TOPICS`.

/// Every help topic with its text, in the man page's order (`""` is the top level).
pub const TOPICS: &[(&str, &str)] = &[
    ("", TOP),
    ("status", STATUS),
    ("profile", PROFILE),
    ("vault", VAULT),
    ("mcp", MCP),
    ("mcp add", super::help_mcp::ADD),
    ("mcp add-json", super::help_mcp::ADD_JSON),
    ("mcp import", super::help_mcp::IMPORT),
    ("mcp resolve", super::help_mcp::RESOLVE),
    ("mcp list", super::help_mcp::LIST),
    ("mcp get", super::help_mcp::GET),
    ("mcp export", super::help_mcp::EXPORT),
    ("mcp enable", super::help_mcp::ENABLE),
    ("mcp remove", super::help_mcp::REMOVE),
    ("mcp tools", super::help_mcp::TOOLS),
    ("mcp call", super::help_mcp::CALL),
    ("mcp approve", super::help_mcp::APPROVE),
    ("mcp trust", super::help_mcp::TRUST),
    ("mcp login", super::help_mcp::LOGIN),
    ("mcp probe", super::help_mcp::PROBE),
    ("serve", super::help_mcp::SERVE),
    ("completions", super::help_mcp::COMPLETIONS),
    ("man", super::help_mcp::MAN),
];

pub fn text(topic: &str) -> &'static str {
    TOPICS
        .iter()
        .find(|(t, _)| *t == topic)
        .map_or(TOP, |(_, text)| text)
}

/// The topic `tai help WORDS…` names (`mcp add`, `add`, `serve-mcp`), if any.
pub fn topic_of(words: &[String]) -> Option<&'static str> {
    let joined = words.join(" ");
    let joined = match joined.as_str() {
        "serve-mcp" | "serve-mcp-stdio" | "--serve-mcp" | "--serve-mcp-stdio" => "serve",
        "completion" => "completions",
        other => other,
    };
    let mcp_form = format!("mcp {joined}");
    TOPICS
        .iter()
        .map(|(t, _)| *t)
        .find(|t| !t.is_empty() && (*t == joined || *t == mcp_form))
        .or_else(|| {
            // `tai help mcp disable` is the enable page, `mcp ls` the list page
            let sub = joined.strip_prefix("mcp ").unwrap_or(joined);
            let t = super::args::mcp_topic(sub);
            (t != "mcp").then_some(t)
        })
}

const TOP: &str = "\
tai — a terminal AI agent with a complete MCP layer

Usage: tai [OPTIONS]                 the agent, in a REPL (/help inside)
       tai [OPTIONS] -p PROMPT      one turn: the answer on stdout, tool chatter on stderr
       tai [OPTIONS] <COMMAND>

Serving MCP (see `tai help serve`):
      --serve-mcp KEY   Serve tai's tools plus chat and completions over Streamable HTTP,
                        behind the bearer KEY (- reads it from TAI_MCP_KEY or stdin)
      --mcp-port N      With --serve-mcp: the port (TAI_MCP_PORT, default 8765)
      --mcp-bind ADDR   With --serve-mcp: the address (TAI_MCP_BIND, default 127.0.0.1)
      --serve-tools LIST  With --serve-mcp or --serve-mcp-stdio: serve only these tools
                        (comma-separated names)
      --serve-workers N With either: long calls run in N worker processes at once (4)
      --serve-mcp-stdio Serve the same over stdio (for hosts such as Claude Desktop,
                        Cursor, Codex). Every call is approved: no user is present.

Agent options:
  -p, --prompt PROMPT   Run one turn (- reads the prompt from stdin); exit 1 when it fails,
                        130 when Ctrl-C stops it. Text piped in (`cmd | tai -p \"summarize\"`)
                        is appended as a fenced block (128 KB at most, with a note when cut)
      --json            With -p: print a JSON transcript (answer, tool calls, steps)
      --continue        Resume the last conversation
      --max-steps N     Model calls per turn at most (default 20)

Commands:
  status            Show where tai keeps its files, the current profile and model, the vault state
  profile           Manage profiles: list, add, set, use, remove
  vault             Secrets, the seal, the audit trail and spilled records
  mcp               MCP servers: add, add-json, import, resolve, list, get, export, enable,
                    disable, remove, tools, call, approve, trust, untrust, probe
  completions SHELL Print a completion script for bash, zsh or fish
  man               Print the man page (roff)
  help <TOPIC>      Show help for a command (`tai help mcp add`, `tai help serve`)

Options (anywhere on the line):
      --profile NAME  Use this profile for this run (else TAI_PROFILE, `tai profile use`, config)
      --auto          Approve tool calls, printing one line for each
      --yolo          Approve tool calls silently
  -h, --help          Show help (also after any command: `tai vault --help`)
  -V, --version       Show the version

Files:
  config   $TAI_CONFIG, else $XDG_CONFIG_HOME/tai/config.toml, else ~/.config/tai/config.toml
  vault    $TAI_HOME/vault.db, else $XDG_DATA_HOME/tai/vault.db, else ~/.local/share/tai/vault.db
  history  $XDG_STATE_HOME/tai/history, else ~/.local/state/tai/history: the REPL's lines
           (arrows, Home/End, Ctrl-A/E/U/K/W edit; Up/Down recall). A line holding a vault
           secret or a token, or starting with a space, is not kept

Environment:
  TAI_HOME TAI_CONFIG TAI_PROFILE TAI_BASE_URL TAI_MODEL TAI_API_KEY TAI_VAULT_PASSPHRASE
  TAI_REGISTRY_URL TAI_GITHUB_API_URL TAI_GITHUB_RAW_URL TAI_GLAMA_URL GITHUB_TOKEN
                    (the GitHub URL resolver; see `tai mcp resolve --help`)
  TAI_MCP_KEY TAI_MCP_PORT TAI_MCP_BIND TAI_MCP_SESSION_IDLE TAI_MCP_HOSTS
                    (serving MCP; see `tai help serve`; TAI_MCP_HOSTS: host names accepted
                    beyond loopback, comma-separated)
  TAI_MCP_CHAT_TIMEOUT_MS TAI_MCP_TEST_LIMITS
                    (shorter serving limits, for tests)
  TAI_CHILD         set by tai in every child's environment: marks what it started, so
                    what a child leaves behind is ended with it
  TAI_OAUTH_BROWSER TAI_OAUTH_CLIENT_ID TAI_OAUTH_CLIENT_SECRET TAI_OAUTH_CLIENT_METADATA_URL
                    (servers behind OAuth; see `tai mcp login --help`)
  CODEX_HOME        where `tai mcp import codex` looks (else ~/.codex)
  XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME HOME NO_COLOR (plain output)

The model: any OpenAI-compatible endpoint (default http://127.0.0.1:11434/v1, Ollama).
Set TAI_MODEL, or a profile's model. Tools that change things ask first (y/N/always);
--auto approves with one line each, --yolo silently.

Exit codes: 0 success, 1 failure, 2 bad command line, 130 interrupted (Ctrl-C).
";

const STATUS: &str = "\
Show tai's paths, current profile, model settings and vault state.

Usage: tai status [--json]

      --json    One JSON object, for scripts
";

const PROFILE: &str = "\
Profiles choose which MCP servers are enabled and may override the model settings.
The current profile is, first to last: --profile, TAI_PROFILE, `tai profile use`,
`profile = ...` in config.toml, `default`.

Usage:
  tai profile list [--json]
  tai profile add NAME [--model M] [--base-url URL] [--api-key-secret SECRET]
  tai profile set NAME KEY VALUE     KEY: model, base_url, api_key_secret; '' clears it
  tai profile use NAME
  tai profile remove NAME

A profile lives in one place: config.toml's [profiles.NAME] when the file defines it
(edit it there), else the vault (`add`, `set`). It inherits every top-level setting it
does not set. An unknown profile name is an error for every command but `tai profile`.

Profiles may also be written in config.toml:

  [profiles.work]
  model = \"qwen3:32b\"
  base_url = \"http://gpu-box:11434/v1\"
  api_key_secret = \"work-key\"     # the name of a vault secret

Removing a profile also removes its server enablements.
";

const VAULT: &str = "\
The vault is tai's SQLite file: secrets, MCP servers, the audit trail, spilled records.

Usage:
  tai vault secret set NAME      Read the value from stdin, or ask without echo on a terminal
  tai vault secret list [--json] Names only; values are never printed
  tai vault secret rm NAME
  tai vault seal                 Encrypt secrets, server env and headers, conversations
                                 and spilled records at rest (names, commands, profiles
                                 and tool lists stay readable)
  tai vault unseal               Store them in plain text again
  tai vault audit [--limit N] [--json] [--verify]
                                 Show the audit trail; --verify checks its keyed chain
                                 and its head (removed newest rows are reported)
  tai vault record list [--json] Spilled tool results, newest first
  tai vault record get ID        Print one spilled result

The seal uses XChaCha20-Poly1305 under a key derived with Argon2id from a passphrase:
TAI_VAULT_PASSPHRASE, or asked on the terminal. A value is never accepted on the command
line, where other users could read it in the process list. Values under 8 characters are
not redacted from output (they would scrub ordinary words); `secret set` warns about them.
Sealed, the audit chain is keyed from the passphrase; unsealed, it detects edits but not
a forger who has the file.
";

const MCP: &str = "\
MCP servers: stored in the vault, verified live, disabled until enabled for a profile.

Usage:
  tai mcp add NAME [-e K=V]... [--env-var NAME]... [-H 'K: V']... [--url URL]
              [--connect-timeout S] [--call-timeout S] [-- CMD ARGS...]
  tai mcp add SOURCE [--name N] [--replace] [--pick N] [--json]
  tai mcp add-json NAME JSON
  tai mcp import TOOL|FILE|- [--replace] [--anywhere] [--json]
  tai mcp resolve URL [--pick N] [--json]
  tai mcp list [--json] [--check]
  tai mcp get NAME [--json]
  tai mcp export [NAME...] [--format claude|vscode|codex]
  tai mcp enable SERVER | disable SERVER
  tai mcp remove SERVER
  tai mcp tools [SERVER] [--json]
  tai mcp call SERVER TOOL [JSON] [--json]
  tai mcp approve SERVER TOOL
  tai mcp trust SERVER TOOL|'*'  |  untrust SERVER TOOL|'*'
  tai mcp login SERVER [--client-id ID] [--status]  |  logout SERVER
  tai mcp probe SOURCE [...]

`tai mcp COMMAND --help` (or `tai help mcp COMMAND`) explains one command.
With --json every command prints one JSON document, also when it fails ({\"error\": ...}).
";
