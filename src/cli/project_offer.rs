//! Project scope at start: when this directory (or a parent up to the repository root)
//! holds `.mcp.json`, `.vscode/mcp.json` or `.cursor/mcp.json` with servers tai has not
//! stored, tai says so, and in the REPL on a terminal offers to import them. Never
//! silently: each server is still shown and consented to, and a declined offer is not
//! asked again until the file changes (the one-line notice stays).
//!
//! Imported project servers record their project and are offered to the agent only
//! inside it (`mcp_servers::project::inside`).

use crate::limits::FILE_MAX;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::import_cmd::{self, Origin};
use super::{Context, Result};
use crate::mcp_servers::project::{self, ProjectConfig};
use crate::mcp_servers::store;

fn declined_key(path: &Path) -> String {
    format!("project.declined.{}", path.display())
}

/// The servers of a project config that are not stored yet.
fn new_servers(ctx: &Context, c: &ProjectConfig, cwd: &Path) -> Vec<String> {
    let Ok(Some(text)) = import_cmd::file_origin(&c.path, cwd) else {
        return Vec::new();
    };
    let Ok(n) = crate::mcp_servers::normalize::normalize(&text, false) else {
        return Vec::new();
    };
    n.entries
        .into_iter()
        .map(|e| e.name)
        .filter(|name| store::load(&ctx.store, name).ok().flatten().is_none())
        .collect()
}

/// Say what the project holds; `ask` (the REPL on a terminal) offers to import it.
pub fn offer(ctx: &mut Context, ask: bool) -> Result {
    let cwd = std::env::current_dir()?;
    let exists = |p: &Path| p.exists();
    for c in project::find(&cwd, &exists) {
        let names = new_servers(ctx, &c, &cwd);
        if names.is_empty() {
            continue;
        }
        // A repository's own paths and names: shown escaped.
        let shown = crate::sanitize::line(&c.path.display().to_string());
        eprintln!(
            "tai: this project's {shown} ({}) lists MCP servers tai has not stored: {}",
            c.tool,
            crate::sanitize::line(&names.join(", "))
        );
        // A repository's file: a FIFO or a link to /dev/zero planted there reads as empty.
        let text = crate::regular_file::read_text(&c.path.to_string_lossy(), FILE_MAX)
            .unwrap_or_default()
            .into_bytes();
        let hash = crate::entropy::hex(&Sha256::digest(&text));
        let declined =
            ctx.store.meta_text(&declined_key(&c.path))?.as_deref() == Some(hash.as_str());
        // Offered only where a person answers each consent: under --auto or --yolo the
        // import would run a repository's servers with nobody reading what they run.
        let person = ctx.config.approval == crate::config::Approval::Ask;
        if !ask || !person || declined || !crate::term::has_tty() {
            eprintln!(
                "tai: import them with `tai mcp import {shown}` (each is shown and asked for; they stay tied to this project)"
            );
            continue;
        }
        let answer = crate::term::read_line(
            "Import them now? Each is shown and asked for before it runs; they are enabled only in this project. [y/N] ",
        )?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            ctx.store.meta_set(&declined_key(&c.path), hash.as_str())?;
            eprintln!("tai: not imported (not asked again until the file changes)");
            continue;
        }
        let origin = Origin {
            label: shown.clone(),
            text: import_cmd::file_origin(&c.path, &cwd)?.unwrap_or_default(),
            workspace: c.root.clone(),
            project: Some(c.root.clone()),
        };
        // a skipped server was reported by the summary; the REPL goes on
        let added =
            super::mcp_cmd::import_origins(ctx, vec![origin], false, false).unwrap_or_else(|e| {
                eprintln!("tai: {e}");
                Vec::new()
            });
        for name in added {
            store::set_enabled(&ctx.store, &name, &ctx.config.profile, true)?;
            eprintln!(
                "tai: {name} is enabled for profile {} in this project",
                ctx.config.profile
            );
        }
    }
    Ok(())
}
