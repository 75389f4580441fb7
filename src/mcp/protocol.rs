//! The typed method table: one type per MCP method tai sends, with its params and result.
//!
//! `McpClient::request::<M>()` serializes `M::Params`, and decodes the response matched
//! by id as `M::Output`, so results are never guessed from their shape.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::era::Era;
use super::methods;

/// An MCP request: its method name, params and result types.
pub trait Method {
    const NAME: &'static str;
    type Params: Serialize;
    type Output: DeserializeOwned;
}

/// `{name, version}` of a client or server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
}

impl Implementation {
    pub fn tai() -> Implementation {
        Implementation {
            name: super::IMPLEMENTATION_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Params of a request that takes none (serialized as `{}`; `_meta` is added per era).
#[derive(Clone, Debug, Default, Serialize)]
pub struct NoParams {}

/// A result whose content tai does not use (any object).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Empty {}

pub struct Initialize;
impl Method for Initialize {
    const NAME: &'static str = methods::INITIALIZE;
    type Params = InitializeParams;
    type Output = InitializeResult;
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
    pub capabilities: Map<String, Value>,
    pub client_info: Implementation,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    #[serde(default)]
    pub server_info: Implementation,
    pub instructions: Option<String>,
}

pub struct Discover;
impl Method for Discover {
    const NAME: &'static str = methods::SERVER_DISCOVER;
    type Params = NoParams;
    type Output = DiscoverResult;
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    #[serde(default)]
    pub supported_versions: Vec<String>,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    pub instructions: Option<String>,
    #[serde(rename = "_meta", default)]
    pub meta: Map<String, Value>,
}

impl DiscoverResult {
    pub fn server_info(&self) -> Implementation {
        self.meta
            .get(SERVER_INFO_KEY)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

pub struct Ping;
impl Method for Ping {
    const NAME: &'static str = methods::PING;
    type Params = NoParams;
    type Output = Empty;
}

pub struct ListTools;
impl Method for ListTools {
    const NAME: &'static str = methods::TOOLS_LIST;
    type Params = ListToolsParams;
    type Output = ListToolsResult;
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ListToolsParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    pub tools: Vec<Value>,
    pub next_cursor: Option<String>,
    pub ttl_ms: Option<i64>,
}

pub struct CallTool;
impl Method for CallTool {
    const NAME: &'static str = methods::TOOLS_CALL;
    type Params = CallToolParams;
    type Output = CallToolResult;
}

#[derive(Clone, Debug, Serialize)]
pub struct CallToolParams {
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// A tool's answer. `is_error` is a tool that ran and failed, not a protocol failure.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
}

impl CallToolResult {
    /// The text blocks joined; other blocks as their JSON, unchanged.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        for block in &self.content {
            match (
                block.get("type").and_then(Value::as_str),
                block.get("text").and_then(Value::as_str),
            ) {
                (Some("text"), Some(t)) => parts.push(t.to_string()),
                _ => parts.push(block.to_string()),
            }
        }
        if parts.is_empty()
            && let Some(s) = &self.structured_content
        {
            parts.push(s.to_string());
        }
        parts.join("\n")
    }
}

/// A tool as listed by the server (untrusted text throughout).
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// `inputSchema`, defaulting to `{type: object, properties: {}}`.
    pub input_schema: Value,
    /// The whole entry as sent.
    pub raw: Value,
}

impl Tool {
    pub fn from_value(v: Value) -> Result<Tool, String> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a tool without a string \"name\"")?
            .to_string();
        let description = v
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        let input_schema = match v.get("inputSchema") {
            Some(s) if s.is_object() => s.clone(),
            _ => json!({"type": "object", "properties": {}}),
        };
        Ok(Tool {
            name,
            description,
            input_schema,
            raw: v,
        })
    }
}

pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Params as sent in `era`: modern requests always carry `params._meta` with the
/// protocol version, the (empty) client capabilities and client info.
pub fn params_for(era: Era, params: Value) -> Option<Value> {
    let mut obj = match params {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    if era.meta_in_every_request() {
        static META: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
            json!({
                PROTOCOL_VERSION_KEY: Era::Modern.version(),
                CLIENT_CAPABILITIES_KEY: {},
                CLIENT_INFO_KEY: Implementation::tai(),
            })
        });
        obj.insert("_meta".into(), META.clone());
    }
    (!obj.is_empty()).then_some(Value::Object(obj))
}

/// Check a modern result's `resultType`: absent or `complete` is a result; anything else
/// is refused (tai does not answer input requests).
pub fn check_result_type(result: &Value) -> Result<(), String> {
    match result.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(()),
        Some("input_required") => Err(
            "the server asked for input (elicitation/sampling), which tai does not provide".into(),
        ),
        Some(other) => Err(format!("unknown resultType {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_params_carry_meta() {
        let p = params_for(Era::Modern, json!({"cursor": "c"})).unwrap();
        assert_eq!(p["cursor"], "c");
        assert_eq!(p["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(p["_meta"][CLIENT_CAPABILITIES_KEY], json!({}));
        assert_eq!(p["_meta"][CLIENT_INFO_KEY]["name"], "tai");
        assert_eq!(params_for(Era::Legacy, json!({})), None);
        assert_eq!(
            params_for(Era::Legacy, json!({"name": "x"})),
            Some(json!({"name": "x"}))
        );
    }

    #[test]
    fn result_types() {
        assert!(check_result_type(&json!({})).is_ok());
        assert!(check_result_type(&json!({"resultType": "complete"})).is_ok());
        assert!(
            check_result_type(&json!({"resultType": "input_required"}))
                .unwrap_err()
                .contains("input")
        );
        assert!(
            check_result_type(&json!({"resultType": "task"}))
                .unwrap_err()
                .contains("unknown")
        );
    }

    #[test]
    fn tools_and_results_decode() {
        let t = Tool::from_value(json!({"name": "echo", "description": "d"})).unwrap();
        assert_eq!(t.input_schema, json!({"type": "object", "properties": {}}));
        assert!(Tool::from_value(json!({"description": "no name"})).is_err());
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AAA", "mimeType": "image/png"}],
            "isError": true
        }))
        .unwrap();
        assert!(r.is_error);
        assert_eq!(
            r.text(),
            "a\n{\"data\":\"AAA\",\"mimeType\":\"image/png\",\"type\":\"image\"}"
        );
        let r: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"n": 1}})).unwrap();
        assert_eq!((r.is_error, r.text()), (false, "{\"n\":1}".to_string()));
    }
}

/// A tool argument mirrored into an `Mcp-Param-{Name}` header (2026, HTTP only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The chain of `properties` keys leading to the argument.
    pub path: Vec<String>,
    /// `{Name}` of `Mcp-Param-{Name}`.
    pub name: String,
}

/// The `x-mcp-header` annotations of an input schema, validated: a non-empty RFC 9110
/// token, unique case-insensitively, on string, integer or boolean properties reached
/// only through `properties`. An invalid annotation makes the whole tool unusable over
/// HTTP (the caller drops it).
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    fn is_token(s: &str) -> bool {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }
    fn walk(
        schema: &Value,
        path: &mut Vec<String>,
        out: &mut Vec<ParamHeader>,
    ) -> Result<(), String> {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Ok(());
        };
        for (key, prop) in props {
            path.push(key.clone());
            if let Some(h) = prop.get("x-mcp-header") {
                let name = h
                    .as_str()
                    .ok_or_else(|| format!("x-mcp-header on {key:?} is not a string"))?;
                if !is_token(name) {
                    return Err(format!(
                        "x-mcp-header {name:?} on {key:?} is not a valid header name"
                    ));
                }
                let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
                if !matches!(ty, "string" | "integer" | "boolean") {
                    return Err(format!(
                        "x-mcp-header {name:?} is on {key:?} of type {ty:?} (only string, integer, boolean)"
                    ));
                }
                if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
                    return Err(format!("x-mcp-header {name:?} is declared twice"));
                }
                out.push(ParamHeader {
                    path: path.clone(),
                    name: name.to_string(),
                });
            }
            walk(prop, path, out)?;
            path.pop();
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// The header value for one argument, or `None` to omit the header (absent, null, or a
/// type that is not mirrored). Strings that are not plain visible ASCII use the base64
/// sentinel form.
pub fn param_header_value(v: &Value) -> Option<String> {
    const MAX_SAFE: i64 = (1 << 53) - 1;
    match v {
        Value::String(s) => Some(super::http::header_value(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => n
            .as_i64()
            .filter(|i| i.abs() <= MAX_SAFE)
            .map(|i| i.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers for one call's arguments.
pub fn mirror_params(headers: &[ParamHeader], args: &Map<String, Value>) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|h| {
            let mut v = args.get(h.path.first()?)?;
            for key in &h.path[1..] {
                v = v.get(key)?;
            }
            Some((format!("Mcp-Param-{}", h.name), param_header_value(v)?))
        })
        .collect()
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn x_mcp_header_validation() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "nested": {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
            "plain": {"type": "number"}
        }});
        let hs = param_headers(&ok).unwrap();
        assert_eq!(hs.len(), 3);
        assert!(hs.contains(&ParamHeader {
            path: vec!["nested".into(), "flag".into()],
            name: "Flag".into()
        }));
        let bad = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Has Space"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "a\r\nb"}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "Data"}}}),
            json!({"properties": {"v": {"type": "array", "x-mcp-header": "Items"}}}),
            json!({"properties": {"v": {"type": "null", "x-mcp-header": "Nil"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "Score"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "Region"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": 5}}}),
        ];
        for schema in bad {
            assert!(param_headers(&schema).is_err(), "{schema}");
        }
    }

    #[test]
    fn mirrored_values() {
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "text": {"type": "string", "x-mcp-header": "Text"},
            "big": {"type": "integer", "x-mcp-header": "Big"}
        }});
        let hs = param_headers(&schema).unwrap();
        let args = json!({"region": "us-west1", "priority": 42, "verbose": null, "text": "Hello, 世界", "big": 9007199254740993i64});
        let mut got = mirror_params(&hs, args.as_object().unwrap());
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Priority".to_string(), "42".to_string()),
                ("Mcp-Param-Region".to_string(), "us-west1".to_string()),
                (
                    "Mcp-Param-Text".to_string(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_string()
                ),
            ]
        );
        assert_eq!(param_header_value(&json!(false)), Some("false".into()));
        assert_eq!(param_header_value(&json!("")), Some(String::new()));
        assert_eq!(param_header_value(&json!(1.5)), None);
    }
}
