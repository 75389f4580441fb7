//! JSON-RPC 2.0 envelopes: ids, the four message kinds, error objects and codes (data, not Rust errors).

use serde_json::{Map, Value, json};

/// Standard and MCP error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The implementation-defined server error (HTTP-level refusals carry it).
    pub const SERVER_ERROR: i64 = -32000;
    /// 2025-11-25 Streamable HTTP: the `Mcp-Session-Id` is unknown (HTTP 404).
    pub const SESSION_NOT_FOUND: i64 = -32001;
    /// 2026: HTTP headers disagree with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026: the request needs a client capability it did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026: the requested protocol version is not supported (`data.supported`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A request id: a string or an integer, echoed exactly (never `1.5`, never `null`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    Num(i64),
    Str(String),
}

impl Id {
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Num),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Id::Num(n) => json!(n),
            Id::Str(s) => json!(s),
        }
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Num(n) => write!(f, "{n}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// The `error` member of an error response.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }

    fn from_value(v: &Value) -> Option<ErrorObject> {
        let o = v.as_object()?;
        Some(ErrorObject {
            code: o.get("code")?.as_i64()?,
            message: o
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: o.get("data").cloned(),
        })
    }

    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("code".into(), json!(self.code));
        o.insert("message".into(), json!(self.message));
        if let Some(d) = &self.data {
            o.insert("data".into(), d.clone());
        }
        Value::Object(o)
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (JSON-RPC {})", self.message, self.code)
    }
}

/// One JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: Id,
        result: Value,
    },
    /// `id` is `None` when the peer could not read the request's id (`null`, `""` or absent).
    Error {
        id: Option<Id>,
        error: ErrorObject,
    },
}

/// Why a value is not a JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub String);

impl Message {
    /// Classify a parsed JSON value. Batches (arrays) are not messages.
    pub fn from_value(v: Value) -> Result<Message, Invalid> {
        let Value::Object(mut o) = v else {
            return Err(Invalid(if v.is_array() {
                "a batch array (one message per frame is required)".into()
            } else {
                "not a JSON object".into()
            }));
        };
        if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(Invalid("missing \"jsonrpc\": \"2.0\"".into()));
        }
        let id = o.get("id").map(|raw| (Id::from_value(raw), raw.clone()));
        if let Some(method) = o.remove("method") {
            let Value::String(method) = method else {
                return Err(Invalid("\"method\" is not a string".into()));
            };
            let params = o.remove("params");
            if let Some(p) = &params
                && !p.is_object()
                && !p.is_array()
            {
                return Err(Invalid("\"params\" is not an object".into()));
            }
            return match id {
                None => Ok(Message::Notification { method, params }),
                Some((Some(id), _)) => Ok(Message::Request { id, method, params }),
                Some((None, raw)) => Err(Invalid(format!(
                    "request id {raw} is not a string or an integer"
                ))),
            };
        }
        if let Some(result) = o.remove("result") {
            return match id {
                Some((Some(id), _)) => Ok(Message::Response { id, result }),
                _ => Err(Invalid("a result without a usable id".into())),
            };
        }
        if let Some(err) = o.get("error") {
            let error = ErrorObject::from_value(err)
                .ok_or_else(|| Invalid("malformed \"error\" object".into()))?;
            let id = id
                .and_then(|(id, _)| id)
                .filter(|id| *id != Id::Str(String::new()));
            return Ok(Message::Error { id, error });
        }
        Err(Invalid(
            "neither a request, a notification nor a response".into(),
        ))
    }

    /// Parse one frame of bytes.
    pub fn parse(bytes: &[u8]) -> Result<Message, Invalid> {
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| Invalid(format!("not JSON: {e}")))?;
        Message::from_value(v)
    }

    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("jsonrpc".into(), json!("2.0"));
        match self {
            Message::Request { id, method, params } => {
                o.insert("id".into(), id.to_value());
                o.insert("method".into(), json!(method));
                if let Some(p) = params {
                    o.insert("params".into(), p.clone());
                }
            }
            Message::Notification { method, params } => {
                o.insert("method".into(), json!(method));
                if let Some(p) = params {
                    o.insert("params".into(), p.clone());
                }
            }
            Message::Response { id, result } => {
                o.insert("id".into(), id.to_value());
                o.insert("result".into(), result.clone());
            }
            Message::Error { id, error } => {
                o.insert("id".into(), id.as_ref().map_or(Value::Null, Id::to_value));
                o.insert("error".into(), error.to_value());
            }
        }
        Value::Object(o)
    }

    /// Compact JSON with no raw newline, ready for a stdio line or an HTTP body.
    /// Serialized from borrows: nothing of the message is copied first.
    pub fn to_bytes(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Wire<'a> {
            jsonrpc: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            id: Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            method: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<Value>,
        }
        let mut w = Wire {
            jsonrpc: "2.0",
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        match self {
            Message::Request { id, method, params } => {
                w.id = Some(id.to_value());
                w.method = Some(method);
                w.params = params.as_ref();
            }
            Message::Notification { method, params } => {
                w.method = Some(method);
                w.params = params.as_ref();
            }
            Message::Response { id, result } => {
                w.id = Some(id.to_value());
                w.result = Some(result);
            }
            Message::Error { id, error } => {
                w.id = Some(id.as_ref().map_or(Value::Null, Id::to_value));
                w.error = Some(error.to_value());
            }
        }
        serde_json::to_vec(&w).unwrap_or_default()
    }

    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request { method, .. } | Message::Notification { method, .. } => Some(method),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Message, Invalid> {
        Message::parse(s.as_bytes())
    }

    #[test]
    fn classification_table() {
        let ok: &[(&str, Message)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                Message::Request {
                    id: Id::Num(1),
                    method: "ping".into(),
                    params: None,
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}}"#,
                Message::Request {
                    id: Id::Str("a-1".into()),
                    method: "tools/list".into(),
                    params: Some(json!({})),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Message::Notification {
                    method: "notifications/initialized".into(),
                    params: None,
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":0,"result":{}}"#,
                Message::Response {
                    id: Id::Num(0),
                    result: json!({}),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
                Message::Error {
                    id: None,
                    error: ErrorObject::new(-32700, "Parse error"),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"","error":{"code":-32600,"message":"x"}}"#,
                Message::Error {
                    id: None,
                    error: ErrorObject::new(-32600, "x"),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","error":{"code":-32022,"message":"v","data":{"supported":["2026-07-28"]}}}"#,
                Message::Error {
                    id: None,
                    error: ErrorObject::new(-32022, "v")
                        .with_data(json!({"supported":["2026-07-28"]})),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"7","error":{"code":-32601,"message":"nope"}}"#,
                Message::Error {
                    id: Some(Id::Str("7".into())),
                    error: ErrorObject::new(-32601, "nope"),
                },
            ),
        ];
        for (text, want) in ok {
            let got = parse(text).unwrap_or_else(|e| panic!("{text}: {}", e.0));
            assert_eq!(&got, want, "{text}");
            // and it round-trips
            assert_eq!(Message::parse(&got.to_bytes()).unwrap(), got, "{text}");
        }
        let bad: &[(&str, &str)] = &[
            ("[]", "batch"),
            (
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                "batch",
            ),
            ("3", "not a JSON object"),
            ("{\"id\":1,\"method\":\"ping\"}", "jsonrpc"),
            (
                "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
                "jsonrpc",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
                "not a string or an integer",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
                "not a string or an integer",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":3}",
                "not a string",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":5}",
                "params",
            ),
            ("{\"jsonrpc\":\"2.0\",\"result\":{}}", "without a usable id"),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}",
                "malformed",
            ),
            ("{\"jsonrpc\":\"2.0\",\"id\":1}", "neither"),
            ("{\"jsonrpc\":\"2.0\",", "not JSON"),
        ];
        for (text, want) in bad {
            let e = parse(text).expect_err(text);
            assert!(
                e.0.contains(want),
                "{text}: {:?} should mention {want:?}",
                e.0
            );
        }
    }

    #[test]
    fn ids_keep_their_json_type() {
        assert_ne!(Id::from_value(&json!(1)), Id::from_value(&json!("1")));
        assert_eq!(Id::Str("1".into()).to_value(), json!("1"));
        assert_eq!(Id::Num(-4).to_value(), json!(-4));
        let bytes = Message::Notification {
            method: "m".into(),
            params: Some(json!({"t":"a\nb"})),
        }
        .to_bytes();
        assert!(!bytes.contains(&b'\n'), "a frame never holds a raw newline");
    }

    /// Found by fuzzing (tests/fuzz, `jsonrpc`): a decoded message re-encodes to one that
    /// decodes the same, large floats included (serde_json's `float_roundtrip`).
    #[test]
    fn a_message_survives_its_own_encoding() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"n":{}1}}}}"#,
            "7".repeat(89)
        );
        for text in [
            big.as_str(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"x":0.1,"y":1e-320,"z":-0.0}}"#,
        ] {
            let m = Message::parse(text.as_bytes()).unwrap();
            assert_eq!(Message::parse(&m.to_bytes()).unwrap(), m, "{text}");
        }
    }
}
