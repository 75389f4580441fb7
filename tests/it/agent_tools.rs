//! The seven `mcp_*` agent tools, run as native tools with a scripted approver.

use serde_json::{Map, Value, json};

use tai::testing::approval::Approver;
use tai::testing::config::{self, FlagSettings, Paths};
use tai::testing::tools::{self, ToolContext};
use tai::testing::vault::Store;

use crate::support::{TempDir, stub_stdio};

/// Approves or refuses everything, and remembers what it was asked.
struct Scripted {
    answer: bool,
    asked: Vec<String>,
}

impl Approver for Scripted {
    fn approve(&mut self, what: &str, _detail: &str) -> Result<bool, String> {
        self.asked.push(what.to_string());
        Ok(self.answer)
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn the_seven_tools_are_the_contracts() {
    let names: Vec<&str> = tools::mcp_admin::tools()
        .iter()
        .map(|t| t.def().name)
        .collect();
    assert_eq!(names, tai::testing::mcp::AGENT_TOOLS);
    for t in tools::all() {
        let d = t.def();
        assert_eq!(d.parameters["type"], "object", "{}", d.name);
        assert!(!d.description.is_empty());
    }
}

#[test]
fn manage_a_server_through_the_agent_tools() {
    let dir = TempDir::new("agent-tools");
    let mut store = Store::open(&dir.path().join("vault.db")).unwrap();
    let paths = Paths {
        home: dir.path().into(),
        config: dir.path().join("c.toml"),
    };
    let cfg = config::resolve(
        &paths,
        None,
        &|_: &str| None,
        &FlagSettings::default(),
        None,
        |_| None,
    );
    let env = |k: &str| std::env::var(k).ok();
    let mut yes = Scripted {
        answer: true,
        asked: Vec::new(),
    };
    let run = |store: &mut Store, approver: &mut Scripted, name: &str, a: Value| {
        let mut ctx = ToolContext {
            store,
            config: &cfg,
            approver,
            env: &env,
        };
        tools::dispatch(name, &mut ctx, &args(a)).expect("a known tool")
    };

    let source = format!("{} --era legacy", stub_stdio());
    let out = run(
        &mut store,
        &mut yes,
        "mcp_add",
        json!({"source": source, "name": "agentstub"}),
    );
    assert!(!out.is_error, "{}", out.text);
    let v: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["added"]["name"], "agentstub");
    assert!(yes.asked[0].contains("run the MCP server \"agentstub\""));

    let list: Value =
        serde_json::from_str(&run(&mut store, &mut yes, "mcp_list", json!({})).text).unwrap();
    assert_eq!(
        (list[0]["name"].as_str(), list[0]["tools"].as_u64()),
        (Some("agentstub"), Some(7))
    );
    assert!(
        !run(
            &mut store,
            &mut yes,
            "mcp_enable",
            json!({"server": "agentstub"})
        )
        .is_error
    );
    let list: Value =
        serde_json::from_str(&run(&mut store, &mut yes, "mcp_list", json!({})).text).unwrap();
    assert_eq!(list[0]["enabledProfiles"], json!(["default"]));
    assert!(
        !run(
            &mut store,
            &mut yes,
            "mcp_disable",
            json!({"server": "agentstub", "profile": "default"})
        )
        .is_error
    );

    let tools: Value = serde_json::from_str(
        &run(
            &mut store,
            &mut yes,
            "mcp_tools",
            json!({"server": "agentstub"}),
        )
        .text,
    )
    .unwrap();
    assert_eq!(tools[0]["name"], "echo");
    assert_eq!(tools[0]["pinned"], true);

    // the model reaches only servers enabled for the profile
    let out = run(
        &mut store,
        &mut yes,
        "mcp_call",
        json!({"server": "agentstub", "tool": "echo", "args": {"text": "from the agent"}}),
    );
    assert!(
        out.is_error && out.text.contains("not enabled for the profile default"),
        "{}",
        out.text
    );
    run(
        &mut store,
        &mut yes,
        "mcp_enable",
        json!({"server": "agentstub"}),
    );
    let out = run(
        &mut store,
        &mut yes,
        "mcp_call",
        json!({"server": "agentstub", "tool": "echo", "args": {"text": "from the agent"}}),
    );
    assert_eq!((out.text.as_str(), out.is_error), ("from the agent", false));
    let out = run(
        &mut store,
        &mut yes,
        "mcp_call",
        json!({"server": "agentstub", "tool": "fail"}),
    );
    assert!(out.is_error);

    // bad arguments come back as a tool error the model can fix
    let out = run(
        &mut store,
        &mut yes,
        "mcp_call",
        json!({"server": "agentstub"}),
    );
    assert!(
        out.is_error && out.text.contains("missing the required argument \"tool\""),
        "{}",
        out.text
    );
    let out = run(&mut store, &mut yes, "mcp_enable", json!({"server": 3}));
    assert!(
        out.is_error && out.text.contains("must be of type"),
        "{}",
        out.text
    );

    // removal asks; a refusal keeps everything
    let mut no = Scripted {
        answer: false,
        asked: Vec::new(),
    };
    let out = run(
        &mut store,
        &mut no,
        "mcp_remove",
        json!({"server": "agentstub"}),
    );
    assert!(out.is_error && out.text.contains("did not approve"));
    assert_eq!(tai::testing::mcp_servers::store::count(&store).unwrap(), 1);
    assert!(
        !run(
            &mut store,
            &mut yes,
            "mcp_remove",
            json!({"server": "agentstub"})
        )
        .is_error
    );
    assert_eq!(tai::testing::mcp_servers::store::count(&store).unwrap(), 0);
}
