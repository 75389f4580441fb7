//! Native tools: one trait (name, description, JSON schema, a `safe` flag, run) and the
//! table of every tool tai offers its agent and serves over MCP.

pub mod files;
pub mod glob;
pub mod mcp_admin;
pub mod protected;
pub mod select;
pub mod shell;
pub mod shell_policy;
pub mod vault_tools;
pub mod web;

use serde_json::{Map, Value};

use crate::approval::Approver;
use crate::config::Config;
use crate::vault::Store;

/// A tool's definition as the model sees it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments (served as `inputSchema`).
    pub parameters: Value,
    /// Runs without approval (reads only).
    pub safe: bool,
}

/// What a tool returns: text for the model, and whether it failed as a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            is_error: true,
        }
    }
}

/// What a running tool may use.
pub struct ToolContext<'a> {
    pub store: &'a mut Store,
    pub config: &'a Config,
    pub approver: &'a mut dyn Approver,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// `Send + Sync` so the table [`find`] reads can be built once per process: every tool
/// is a stateless value.
pub trait NativeTool: Send + Sync {
    fn def(&self) -> ToolDef;
    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput;
}

/// Every native tool.
pub fn all() -> Vec<Box<dyn NativeTool>> {
    let mut all = files::tools();
    all.push(Box::new(shell::Shell));
    all.push(Box::new(web::WebFetch));
    all.extend(vault_tools::tools());
    all.extend(mcp_admin::tools());
    all.push(Box::new(mcp_admin::McpResolve));
    all
}

/// One native tool with its definition, as [`find`] hands them out.
pub struct Native {
    pub def: ToolDef,
    pub tool: Box<dyn NativeTool>,
}

/// The native tool `name` and its definition. The table is built once per process: a
/// served call looks its tool up on every request, and building every tool's `def()` (a
/// `json!` schema each) to compare names was ~3% of the server's CPU (docs/benchmarks.md).
pub fn find(name: &str) -> Option<&'static Native> {
    static TABLE: std::sync::OnceLock<Vec<Native>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            all()
                .into_iter()
                .map(|tool| Native {
                    def: tool.def(),
                    tool,
                })
                .collect()
        })
        .iter()
        .find(|n| n.def.name == name)
}

/// Run the native tool `name`, after checking the arguments' required keys and types
/// against its schema; `None` when there is no such tool.
pub fn dispatch(
    name: &str,
    ctx: &mut ToolContext<'_>,
    args: &Map<String, Value>,
) -> Option<ToolOutput> {
    let native = find(name)?;
    if let Err(why) = check_args(&native.def.parameters, args) {
        return Some(ToolOutput::error(format!("{name}: {why}")));
    }
    Some(native.tool.run(ctx, args))
}

/// The checks a model needs to fix its own call: required keys present, and each given
/// key known and of the declared primitive type.
pub fn check_args(schema: &Value, args: &Map<String, Value>) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !args.contains_key(req) {
            return Err(format!("missing the required argument {req:?}"));
        }
    }
    for (k, v) in args {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            return Err(format!("unknown argument {k:?}"));
        };
        let ok = match p.get("type").and_then(Value::as_str) {
            Some("string") => v.is_string(),
            Some("integer") => v.is_i64() || v.is_u64(),
            Some("number") => v.is_number(),
            Some("boolean") => v.is_boolean(),
            Some("object") => v.is_object(),
            Some("array") => v.is_array(),
            _ => true,
        };
        if !ok {
            return Err(format!("the argument {k:?} must be of type {}", p["type"]));
        }
    }
    Ok(())
}

/// A required string argument.
pub fn arg_str<'a>(args: &'a Map<String, Value>, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}
