//! The streamed chat answer, rebuilt from OpenAI-compatible `chat.completion.chunk`
//! deltas (pure): text appended, tool calls accumulated by index, usage when sent.

use serde_json::Value;

/// A tool call the model asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text, possibly malformed).
    pub arguments: String,
}

/// One whole answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Answer {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    /// `(prompt_tokens, completion_tokens)` when the endpoint reported them.
    pub usage: Option<(u64, u64)>,
    /// The stream ended before `[DONE]` or a finish reason: what arrived is kept.
    pub cut: bool,
}

#[derive(Default)]
pub struct Accumulator {
    answer: Answer,
    done: bool,
}

impl Accumulator {
    pub fn new() -> Accumulator {
        Accumulator::default()
    }

    /// Feed one SSE `data:` payload; returns the new text, for streaming to the screen.
    pub fn feed(&mut self, data: &str) -> Result<String, String> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(String::new());
        }
        let v: Value =
            serde_json::from_str(data).map_err(|e| format!("a stream chunk is not JSON: {e}"))?;
        if let Some(err) = v.get("error") {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(format!("the endpoint reported an error mid-stream: {msg}"));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.answer.usage = Some((n("prompt_tokens"), n("completion_tokens")));
        }
        let mut new_text = String::new();
        for choice in v
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.answer.finish_reason = Some(r.to_string());
            }
            let delta = choice
                .get("delta")
                .or_else(|| choice.get("message"))
                .unwrap_or(&Value::Null);
            if let Some(t) = delta.get("content").and_then(Value::as_str) {
                new_text.push_str(t);
            }
            for tc in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = tc
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.answer.tool_calls.len() as u64)
                    as usize;
                while self.answer.tool_calls.len() <= index {
                    self.answer.tool_calls.push(ToolCall::default());
                }
                let slot = &mut self.answer.tool_calls[index];
                if let Some(id) = tc.get("id").and_then(Value::as_str) {
                    slot.id = id.to_string();
                }
                let f = tc.get("function").unwrap_or(&Value::Null);
                if let Some(name) = f.get("name").and_then(Value::as_str) {
                    slot.name.push_str(name);
                }
                match f.get("arguments") {
                    Some(Value::String(a)) => slot.arguments.push_str(a),
                    Some(obj @ Value::Object(_)) => slot.arguments.push_str(&obj.to_string()),
                    _ => {}
                }
            }
        }
        self.answer.text.push_str(&new_text);
        Ok(new_text)
    }

    /// The answer; `cut` when the stream ended without `[DONE]` or a finish reason.
    pub fn finish(mut self) -> Answer {
        self.answer.cut = !self.done && self.answer.finish_reason.is_none();
        for (i, tc) in self.answer.tool_calls.iter_mut().enumerate() {
            if tc.id.is_empty() {
                tc.id = format!("call_{i}");
            }
        }
        self.answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_tool_calls_by_index() {
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"list_dir","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"file","arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":7}}"#,
            "[DONE]",
        ];
        let mut acc = Accumulator::new();
        let streamed: String = chunks.iter().map(|c| acc.feed(c).unwrap()).collect();
        assert_eq!(streamed, "Hello");
        let a = acc.finish();
        assert_eq!(a.text, "Hello");
        assert_eq!(
            a.tool_calls,
            vec![
                ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.txt"}"#.into()
                },
                ToolCall {
                    id: "c2".into(),
                    name: "list_dir".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(
            (a.finish_reason.as_deref(), a.usage, a.cut),
            (Some("tool_calls"), Some((12, 7)), false)
        );
    }

    #[test]
    fn cut_streams_and_errors() {
        let mut acc = Accumulator::new();
        acc.feed(r#"{"choices":[{"delta":{"content":"partial"}}]}"#)
            .unwrap();
        let a = acc.finish();
        assert_eq!((a.text.as_str(), a.cut), ("partial", true));
        let mut acc = Accumulator::new();
        assert!(acc.feed("not json").unwrap_err().contains("not JSON"));
        assert!(
            acc.feed(r#"{"error":{"message":"overloaded"}}"#)
                .unwrap_err()
                .contains("overloaded")
        );
        // a non-streamed message shape works too (complete())
        let mut acc = Accumulator::new();
        acc.feed(r#"{"choices":[{"message":{"content":"whole"},"finish_reason":"stop"}]}"#)
            .unwrap();
        assert_eq!(acc.finish().text, "whole");
    }
}
