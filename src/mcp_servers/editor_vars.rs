//! VS Code's predefined variables in imported entries: `${workspaceFolder}`,
//! `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}` (and `${/}`),
//! substituted once when a config is added or imported (pure).
//!
//! The workspace is the folder the config belongs to: the project root for a project's
//! `.vscode/mcp.json`, else the current directory (or its project root when found). These
//! are paths, not secrets: they never join the redaction set.

use super::normalize::{Entry, Leg};

/// The values the variables take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorVars {
    pub workspace_folder: String,
    pub user_home: String,
}

impl EditorVars {
    /// One string with every variable substituted; other `${...}` stay as written.
    pub fn apply(&self, text: &str) -> String {
        if !text.contains("${") {
            return text.to_string();
        }
        let base = self
            .workspace_folder
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("");
        text.replace("${workspaceFolderBasename}", base)
            .replace("${workspaceFolder}", &self.workspace_folder)
            .replace("${userHome}", &self.user_home)
            .replace("${pathSeparator}", "/")
            .replace("${/}", "/")
    }

    /// Every string of an entry that decides what runs, and its `envFile`.
    pub fn apply_entry(&self, e: &mut Entry) {
        match &mut e.leg {
            Leg::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                *command = self.apply(command);
                for a in args.iter_mut() {
                    *a = self.apply(a);
                }
                for v in env.values_mut() {
                    *v = self.apply(v);
                }
                if let Some(c) = cwd {
                    *c = self.apply(c);
                }
            }
            Leg::Http { url, headers } => {
                *url = self.apply(url);
                for v in headers.values_mut() {
                    *v = self.apply(v);
                }
            }
        }
        if let Some(f) = &mut e.options.env_file {
            *f = self.apply(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let v = EditorVars {
            workspace_folder: "/work/proj".into(),
            user_home: "/home/me".into(),
        };
        for (text, want) in [
            ("plain", "plain"),
            ("${workspaceFolder}/.env", "/work/proj/.env"),
            ("${workspaceFolderBasename}", "proj"),
            ("${userHome}${pathSeparator}x", "/home/me/x"),
            ("${userHome}${/}y", "/home/me/y"),
            (
                "${input:key} ${HOME} ${env:A}",
                "${input:key} ${HOME} ${env:A}",
            ),
            ("${workspaceFolder", "${workspaceFolder"),
        ] {
            assert_eq!(v.apply(text), want, "{text}");
        }
    }

    #[test]
    fn entries_are_substituted_everywhere_that_runs() {
        let n = crate::mcp_servers::normalize::normalize(
            r#"{"servers": {"fs": {"command": "${userHome}/bin/srv", "args": ["${workspaceFolder}"],
                "env": {"ROOT": "${workspaceFolder}"}, "cwd": "${workspaceFolder}", "envFile": "${workspaceFolder}/.env"}}}"#,
            false,
        )
        .unwrap();
        let mut e = n.entries[0].clone();
        EditorVars {
            workspace_folder: "/p".into(),
            user_home: "/h".into(),
        }
        .apply_entry(&mut e);
        let Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } = &e.leg
        else {
            panic!("stdio")
        };
        assert_eq!(
            (
                command.as_str(),
                args[0].as_str(),
                env["ROOT"].as_str(),
                cwd.as_deref()
            ),
            ("/h/bin/srv", "/p", "/p", Some("/p"))
        );
        assert_eq!(e.options.env_file.as_deref(), Some("/p/.env"));
    }
}
