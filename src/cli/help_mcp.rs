//! The help pages of each `tai mcp` command, of serving, completions and the man page
//! (the topics `help::TOPICS` lists after the first five).

pub const ADD: &str = "\
Add one MCP server (or each server of a config, one by one): show what runs, ask, verify
it live, store it with its tools pinned. A stored server is disabled until enabled.

Usage:
  tai mcp add NAME [-e K=V]... [--env-var NAME]... [-H 'K: V']... [--url URL]
              [--connect-timeout S] [--call-timeout S] [-- CMD ARGS...]
  tai mcp add NAME CMD ARGS...       the words after CMD are its own (-y included)
  tai mcp add NAME URL               a Streamable HTTP server
  tai mcp add -- CMD ARGS...         named after the program
  tai mcp add SOURCE [--name N] [--replace] [--json]
  tai mcp add https://github.com/OWNER/REPO[/tree/REF/PATH] [--pick N]

  -e, --env K=V        Set a variable in the server's environment
      --env-var NAME   Pass NAME through from tai's environment (stored as ${NAME})
  -H, --header 'K: V'  An HTTP header (values may be ${NAME} references)
      --url URL        The server's Streamable HTTP URL
      --connect-timeout S  Spawn or dial plus handshake (default 20 s, MCP_CONNECT_TIMEOUT)
      --call-timeout S     One tool call (default 60 s, MCP_CALL_TIMEOUT); both at most
                       600 s (MCP_TIMEOUT_MAX) and kept with the entry
      --name N         With a SOURCE: the name to store it under (or which server of a
                       config holding several)
      --replace        Replace a stored server of the same name
      --pick N         Which candidate of a GitHub URL's resolution (see `tai mcp resolve`)
      --json           Print {added: [server], skipped: [{name, why}], notes}

SOURCE is a file (a word that looks like a path is always read as a file, and a missing
file says so), - for stdin, or the text itself, in any common shape: Claude Desktop /
Cursor / Claude Code `mcpServers` JSON, VS Code `servers` JSON (JSONC, with `inputs`),
Codex `[mcp_servers.NAME]` TOML, one bare entry, a URL, or a command line. ${VAR} and
${VAR:-default} come from the environment, then vault secrets; ${input:id} from the
vault secret `id` (asked on the terminal when a VS Code input names it);
${workspaceFolder}, ${userHome} and ${pathSeparator} are filled in; `envFile` is read
at every start. Timeouts in the config (startup_timeout_sec, tool_timeout_sec,
timeout) are kept like the flags. --auto and --yolo approve the run.

A GitHub URL is resolved without a model (see `tai mcp resolve --help`).
Exits 1 when anything was skipped.
";

pub const LOGIN: &str = "\
Log in to a remote MCP server behind OAuth, show its login, or forget it.

Usage:
  tai mcp login SERVER [--client-id ID]   log in (again)
  tai mcp login SERVER --status           issuer, scopes, expiry (never a token)
  tai mcp logout SERVER                   forget its OAuth tokens

Remote servers behind OAuth: when an HTTP server without a stored Authorization header
answers 401, tai discovers its authorization server, registers (or uses --client-id or,
for add, TAI_OAUTH_CLIENT_ID, the secret in TAI_OAUTH_CLIENT_SECRET, or the client
metadata document URL in
TAI_OAUTH_CLIENT_METADATA_URL), prints the login URL and opens it in a browser
(TAI_OAUTH_BROWSER names a command given the URL instead, for headless use; else
$BROWSER or xdg-open), and waits on a 127.0.0.1 redirect listener for up to 5 minutes
(or for the final address pasted on the terminal). `add` asks first. Tokens are sealed
vault secrets, refreshed silently; when refresh fails, run `tai mcp login SERVER`.
";

pub const ADD_JSON: &str = "\
Add one server from a JSON entry, under NAME (as `claude mcp add-json`).

Usage: tai mcp add-json NAME JSON [--replace] [--json]

  tai mcp add-json time '{\"command\":\"uvx\",\"args\":[\"mcp-server-time\"]}'
";

pub const IMPORT: &str = "\
Add every server of another tool's config, each with its own consent, and say what was
added and what was skipped (and why). Exits 1 when anything was skipped.

Usage: tai mcp import TOOL|FILE|- [--replace] [--anywhere] [--json]

TOOL reads that tool's documented locations (~ is your home, @ this directory and its
parents up to the repository root):
  claude-desktop  ~/.config/Claude/claude_desktop_config.json (and the macOS path)
  claude-code     ~/.claude.json (user and this project's servers), @/.mcp.json
  cursor          ~/.cursor/mcp.json, @/.cursor/mcp.json
  vscode          ~/.config/Code/User/mcp.json, its settings.json (\"mcp\"), @/.vscode/mcp.json
  codex           $CODEX_HOME/config.toml, else ~/.codex/config.toml
  windsurf        ~/.codeium/windsurf/mcp_config.json
  gemini          ~/.gemini/settings.json, @/.gemini/settings.json
FILE is one config file; - reads one from stdin. A project's own config (.mcp.json,
.vscode/mcp.json, .cursor/mcp.json) records its project with each server: the agent is
offered its tools only inside that project. At start tai names such configs holding
servers it has not stored, and the REPL offers to import them.

      --anywhere  Do not tie a project's servers to their project
      --replace   Replace stored servers of the same names
      --json      Print {added: [server], skipped: [{name, why}], notes}
";

pub const RESOLVE: &str = "\
What a GitHub URL resolves to, and why; runs and stores nothing.

Usage: tai mcp resolve URL [--pick N] [--json]

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
";

pub const LIST: &str = "\
The stored servers: transport, command or URL, the profiles they are enabled for, tools.

Usage: tai mcp list [--json] [--check]

      --check   Connect to each server and show a live status (consent is checked as
                for a call; a changed command asks again)
      --json    An array of server objects (with --check each has status: {ok, detail})
";

pub const GET: &str = "\
One stored server whole: its command or URL, env and headers (values masked unless they
are ${NAME} references), envFile, project, timeouts, the profiles it is enabled for, when
it was last verified, the last error the audit trail holds, and its tools with their pin
and trust state.

Usage: tai mcp get NAME [--json]
";

pub const EXPORT: &str = "\
Write stored servers as a config another tool (or tai) reads back.

Usage: tai mcp export [NAME...] [--format claude|vscode|codex]

      --format F   claude (mcpServers JSON, also Cursor, Windsurf, Gemini; the default),
                   vscode (servers JSON), codex ([mcp_servers.NAME] TOML)

Literal env and header values are written as ${NAME} references (listed on stderr), so
secrets stay out of the file; references are written as they are.
";

pub const ENABLE: &str = "\
Turn a server's tools on or off for the current profile (or --profile P).

Usage:
  tai mcp enable SERVER [--json]
  tai mcp disable SERVER [--json]
";

pub const REMOVE: &str = "\
Remove a server with its tools, pins, trusts and profile settings (asks first).

Usage: tai mcp remove SERVER [--json]
";

pub const TOOLS: &str = "\
The stored tools of every server (or one), with pin, allow and trust state.

Usage: tai mcp tools [SERVER] [--json]
";

pub const CALL: &str = "\
Call one tool of a stored server, with approval as for any call (a trusted tool goes
without asking).

Usage: tai mcp call SERVER TOOL [JSON] [--json]

JSON is the arguments object (or @FILE). --json prints {server, tool, outcome, isError,
text}. A tool that ran and failed exits 1.
";

pub const APPROVE: &str = "\
Approve a tool its server added or redefined: shows the description and schema change
and pins the new definition, so it is offered again.

Usage: tai mcp approve SERVER TOOL
";

pub const TRUST: &str = "\
Lasting trust: calls of a trusted tool go without the approval question, across
sessions, while the tool stays as it is now (the trust is kept with its pin in the vault;
a redefinition drops it). '*' trusts each tool the server has now. The approval question
offers the same as \"[r]emember\".

Usage:
  tai mcp trust SERVER TOOL|'*' [--json]
  tai mcp untrust SERVER TOOL|'*' [--json]
";

pub const PROBE: &str = "\
Connect to one server, print the protocol era it speaks, its name, instructions and
tools, then shut it down. It stores nothing.

Usage: tai mcp probe SOURCE [--json] [--protocol auto|2025-11-25|2026-07-28]
                     [--header 'K: V']... [--call TOOL [--args JSON] [--repeat N]]
                     [--connect-timeout S] [--call-timeout S] [--probe-timeout S]

SOURCE is one of:
  a command line      'npx -y @modelcontextprotocol/server-everything'  (run with no shell)
  a URL               http://127.0.0.1:3001/mcp                         (Streamable HTTP)
  a JSON entry        '{\"command\":\"uvx\",\"args\":[\"mcp-server-time\"]}'  or any config
                      holding one server that `tai mcp add` reads (mcpServers, servers,
                      context_servers, serverUrl, Codex TOML); nothing is expanded
  -                   read the SOURCE from stdin

With --call it also calls TOOL on the live connection (N times with --repeat) and reports
the result and the per-call latency (median, p99). A tool that ran and failed exits 1.
--args takes a JSON object, or @FILE to read it from a file.

--protocol auto (the default) probes with server/discover (2026-07-28) and falls back to
initialize (2025-11-25); a version pins the era and skips the probe. Defaults: connect
20 s (MCP_CONNECT_TIMEOUT), call 60 s (MCP_CALL_TIMEOUT), a silent stdio probe 10 s.
";

pub const SERVE: &str = "\
tai as an MCP server: its native tools plus chat and completions, both MCP eras.

Usage:
  tai --serve-mcp KEY [--mcp-port N] [--mcp-bind ADDR] [--serve-tools LIST] [--serve-workers N]
  tai --serve-mcp-stdio [--serve-tools LIST] [--serve-workers N]

      --serve-mcp KEY    Streamable HTTP at http://ADDR:PORT/mcp; clients send
                         Authorization: Bearer KEY (8 characters at least). - reads the
                         key from TAI_MCP_KEY, else the first line of stdin
      --mcp-port N       The port (else TAI_MCP_PORT, else 8765)
      --mcp-bind ADDR    The address (else TAI_MCP_BIND, else 127.0.0.1)
      --serve-tools LIST Serve only these tools (comma-separated; chat and completions
                         count as tools)
      --serve-mcp-stdio  MCP on stdin/stdout, for hosts that launch servers
                         (Claude Desktop, Cursor, Codex, Claude Code)
      --serve-workers N  Long calls (chat, completions, shell, web_fetch, mcp_add,
                         mcp_resolve, grep, glob) run in worker processes, N at once
                         (else `serve_workers` in the config file, else 4); beyond N,
                         HTTP answers 503 with Retry-After and stdio queues the call

No user is present while serving: every tool call is approved, as with --yolo; the key
(or the launching host) is the authorization. Served tools carry annotations
(readOnlyHint, destructiveHint, idempotentHint, openWorldHint). TAI_MCP_SESSION_IDLE
shortens how long an idle 2025-11-25 session is kept (seconds; default 3600).
A chat conversation is kept in the vault, so its session continues after a restart and
on every tai sharing the vault (see docs/serve.md for several behind nginx); a second
turn on a conversation while one runs is refused as busy.
";

pub const COMPLETIONS: &str = "\
Print a shell completion script.

Usage: tai completions bash|zsh|fish

  bash   eval \"$(tai completions bash)\"     (or save it in ~/.local/share/bash-completion/completions/tai)
  zsh    tai completions zsh > ~/.zfunc/_tai   (with fpath+=(~/.zfunc) before compinit)
  fish   tai completions fish > ~/.config/fish/completions/tai.fish
";

pub const MAN: &str = "\
Print tai's man page (roff), made from these help texts; docs/tai.1 is the same page.

Usage: tai man              (view it with: tai man | man -l -)
";
