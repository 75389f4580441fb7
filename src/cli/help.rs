//! `--help` texts, one per topic, written to teach.

pub fn text(topic: &str) -> &'static str {
    match topic {
        "status" => STATUS,
        "profile" => PROFILE,
        "vault" => VAULT,
        "mcp" => MCP,
        _ => TOP,
    }
}

const TOP: &str = "\
tai — a terminal AI agent with a complete MCP layer

Usage: tai [OPTIONS]                 the agent, in a REPL (/help inside)
       tai [OPTIONS] -p PROMPT      one turn: the answer on stdout, tool chatter on stderr
       tai [OPTIONS] <COMMAND>

Serving MCP:
      --serve-mcp-stdio Serve tai's tools plus chat and completions over stdio (for hosts
                        such as Claude Desktop, Cursor, Codex). Every call is approved.

Agent options:
  -p, --prompt PROMPT   Run one turn (- reads the prompt from stdin); exit 1 when it fails,
                        130 when Ctrl-C stops it
      --json            With -p: print a JSON transcript (answer, tool calls, steps)
      --continue        Resume the last conversation
      --max-steps N     Model calls per turn at most (default 20)

Commands:
  status            Show where tai keeps its files, the current profile and model, the vault state
  profile           Manage profiles (which MCP servers are on, model overrides)
  vault             Secrets, the seal, the audit trail and spilled records
  mcp               MCP servers: add (a config, a command line or a GitHub URL), probe, list
  help <COMMAND>    Show help for a command

Options (anywhere on the line):
      --profile NAME  Use this profile for this run (else TAI_PROFILE, `tai profile use`, config)
      --auto          Approve tool calls, printing one line for each
      --yolo          Approve tool calls silently
  -h, --help          Show help (also after any command: `tai vault --help`)
  -V, --version       Show the version

Files:
  config   $TAI_CONFIG, else $XDG_CONFIG_HOME/tai/config.toml, else ~/.config/tai/config.toml
  vault    $TAI_HOME/vault.db, else $XDG_DATA_HOME/tai/vault.db, else ~/.local/share/tai/vault.db

Environment:
  TAI_HOME TAI_CONFIG TAI_PROFILE TAI_BASE_URL TAI_MODEL TAI_API_KEY TAI_VAULT_PASSPHRASE
  TAI_REGISTRY_URL TAI_GITHUB_API_URL TAI_GITHUB_RAW_URL TAI_GLAMA_URL GITHUB_TOKEN
                    (the GitHub URL resolver; see `tai mcp --help`)
  NO_COLOR (plain output)

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
  tai profile use NAME
  tai profile remove NAME

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
  tai vault seal                 Encrypt secret values and server headers at rest
  tai vault unseal               Store them in plain text again
  tai vault audit [--limit N] [--json] [--verify]
                                 Show the audit trail; --verify checks its hash chain
  tai vault record list [--json] Spilled tool results, newest first
  tai vault record get ID        Print one spilled result

The seal uses XChaCha20-Poly1305 under a key derived with Argon2id from a passphrase:
TAI_VAULT_PASSPHRASE, or asked on the terminal. A value is never accepted on the command
line, where other users could read it in the process list.
";

const MCP: &str = "\
MCP servers.

Usage:
  tai mcp add SOURCE [--name N] [--replace] [--json]   verify a server live and store it
  tai mcp add https://github.com/OWNER/REPO [--pick N]  resolve a repository, then add it
  tai mcp resolve URL [--pick N] [--json]              what a GitHub URL resolves to, and why
  tai mcp import FILE [--replace] [--json]             add every server of an editor config
  tai mcp list [--json]                                stored servers, their profiles and tools
  tai mcp enable SERVER | disable SERVER               for the current profile (or --profile P)
  tai mcp remove SERVER                                asks first; removes tools and pins too
  tai mcp tools [SERVER] [--json]                      stored tools and their pin state
  tai mcp call SERVER TOOL [JSON] [--json]             call one tool (approval as for any call)
  tai mcp approve SERVER TOOL                          approve a tool its server added or redefined
  tai mcp probe SOURCE [--json] [--protocol auto|2025-11-25|2026-07-28] [--header 'K: V']...
                       [--call TOOL [--args JSON] [--repeat N]]
                       [--connect-timeout S] [--call-timeout S] [--probe-timeout S]

SOURCE for add is a file path, - for stdin, or the text itself, in any common shape:
Claude Desktop / Cursor / Claude Code `mcpServers` JSON, VS Code `servers` JSON (with
`inputs`), Codex `[mcp_servers.NAME]` TOML, one bare entry, a URL, or a command line.
tai shows the exact command (secrets masked) and asks before running it (--auto and
--yolo approve), checks it live, and stores it with its tools pinned. ${VAR} and
${VAR:-default} come from the environment, then vault secrets; ${input:id} from the
vault secret `id`. A stored server is disabled until enabled for a profile.

A GitHub URL (github.com/OWNER/REPO, or .../tree/REF/PATH for a folder of a monorepo) is
resolved without a model, stopping at the first source that names a runnable server:
the MCP registry (this repository's active, latest servers), server.json and mcpName in
package.json, package.json bin (npx), pyproject.toml scripts (uvx), Cargo.toml (advice
only), the README's config block or start line, the Glama page. Several candidates that
disagree fail with a numbered list: choose with --pick N. A failure lists every step
with its URL and outcome. Required inputs stay ${NAME} references you provide (export
NAME, or `tai vault secret set NAME`). Mirrors: TAI_REGISTRY_URL, TAI_GITHUB_API_URL,
TAI_GITHUB_RAW_URL, TAI_GLAMA_URL (or registry_url, github_api_url, github_raw_url,
glama_url in config.toml); GITHUB_TOKEN, when set, is sent to the GitHub API only.

`probe` connects to one server, prints the protocol era it speaks, its name, instructions
and tools, then shuts it down. It stores nothing. SOURCE is one of:
  a command line      'npx -y @modelcontextprotocol/server-everything'  (run with no shell)
  a URL               http://127.0.0.1:3001/mcp                         (Streamable HTTP)
  a JSON entry        '{\"command\":\"uvx\",\"args\":[\"mcp-server-time\"]}'  or a one-server
                      mcpServers/servers wrapper
  -                   read the SOURCE from stdin

With --call it also calls TOOL on the live connection (N times with --repeat) and reports
the result and the per-call latency (median, p99). A tool that ran and failed exits 1.
--args takes a JSON object, or @FILE to read it from a file.

--protocol auto (the default) probes with server/discover (2026-07-28) and falls back to
initialize (2025-11-25); a version pins the era and skips the probe. Defaults: connect
20 s (MCP_CONNECT_TIMEOUT), call 60 s (MCP_CALL_TIMEOUT), a silent stdio probe 10 s.
";
