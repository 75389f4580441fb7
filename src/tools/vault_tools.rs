//! Vault tools: `record_get`, `record_list` (spilled results), `secret_list` (names only),
//! `audit_tail`; and `ask_user`.

use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};

pub fn tools() -> Vec<Box<dyn NativeTool>> {
    vec![
        Box::new(RecordGet),
        Box::new(RecordList),
        Box::new(SecretList),
        Box::new(AuditTail),
        Box::new(AskUser),
    ]
}

struct RecordGet;
impl NativeTool for RecordGet {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "record_get",
            description: "Read a spilled tool result (a vault record) by id: offset and limit are in bytes (default 0 and 32768).",
            parameters: json!({"type": "object", "properties": {
                "id": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}
            }, "required": ["id"]}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let rec = match ctx.store.record_get(arg_str(args, "id")) {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(crate::limits::RECORD_GET_DEFAULT_LIMIT) as usize;
        let text = &rec.content;
        // Cut on character boundaries.
        let start = (0..=offset.min(text.len()))
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        let end_raw = start.saturating_add(limit).min(text.len());
        let end = (start..=end_raw)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(start);
        let mut out = text[start..end].to_string();
        if end < text.len() {
            out.push_str(&format!(
                "\n… {} more bytes (record_get with offset={end})",
                text.len() - end
            ));
        }
        ToolOutput::ok(out)
    }
}

struct RecordList;
impl NativeTool for RecordList {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "record_list",
            description: "List spilled tool results (vault records), newest first: id, source, size.",
            parameters: json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
        match ctx.store.record_list(limit) {
            Ok(rs) => ToolOutput::ok(
                json!(
                    rs.iter()
                        .map(|r| json!({"id": r.id, "source": r.source, "size": r.size}))
                        .collect::<Vec<_>>()
                )
                .to_string(),
            ),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

struct SecretList;
impl NativeTool for SecretList {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "secret_list",
            description: "List the names of the secrets in the vault (never their values). Refer to one as ${NAME} in server configs.",
            parameters: json!({"type": "object", "properties": {}}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, _args: &Map<String, Value>) -> ToolOutput {
        match ctx.store.secret_names() {
            Ok(n) => ToolOutput::ok(json!(n).to_string()),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

struct AuditTail;
impl NativeTool for AuditTail {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "audit_tail",
            description: "The newest rows of tai's audit trail (tool calls, approvals, server changes).",
            parameters: json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(20)
            .clamp(1, 500) as usize;
        match ctx.store.audit_rows(Some(limit)) {
            Ok(rows) => ToolOutput::ok(json!(rows).to_string()),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

struct AskUser;
impl NativeTool for AskUser {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "ask_user",
            description: "Ask the user a question and wait for the answer (only when a person is at the terminal).",
            parameters: json!({"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        match ctx.approver.ask(arg_str(args, "question")) {
            Ok(answer) => ToolOutput::ok(answer),
            Err(e) => ToolOutput::error(e),
        }
    }
}
