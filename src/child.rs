//! The one owner of child processes' lives: start a child in its own process group with
//! the environment it is given, wait for it by a deadline, stop it (SIGTERM to its group
//! and to every descendant, a grace, then SIGKILL) and reap it, and end what it left behind.
//!
//! tai makes itself the reaper of its descendants (`PR_SET_CHILD_SUBREAPER`), so a
//! grandchild that called `setsid` and whose parent died is re-parented to tai rather than
//! to init: `stop` finds it (a descendant in /proc, or an adopted orphan carrying the
//! child's `TAI_CHILD` mark in its environment) and ends it too.
//! The MCP stdio transport and the `shell` tool both start and stop children here.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::deadline::Deadline;
use crate::limits::CHILD_REAP_CHECK;

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// What to start.
pub struct Launch<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// Exactly these variables and nothing else (built by `child_env`; tai's own
    /// environment is never inherited).
    pub env: &'a [(String, String)],
    pub cwd: Option<&'a Path>,
    /// A pipe to the child's stdin (else /dev/null).
    pub stdin: bool,
    /// A socket for the child's stdin AND stdout instead of pipes (`stdin` is then
    /// ignored). Unlike a pipe, a socket cannot be opened again through
    /// `/proc/<child>/fd/…` by another process of the same user, in the moment after
    /// `execve` before the child makes itself undumpable (a served worker's job carries
    /// secrets).
    pub channel: Option<BorrowedFd<'a>>,
}

/// Children started here that are still tai's to wait for (never swept as orphans).
static STARTED: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// Numbers the children, for the `TAI_CHILD` mark their descendants inherit.
static NEXT_MARK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The variable every child gets: `PID-N`, tai's pid and the child's number. Processes
/// inherit it through `setsid` and `exec`, so an orphan says which child left it behind.
pub const MARK: &str = "TAI_CHILD";
/// Set once tai is the subreaper: only then is a child tai did not start an orphan it adopted.
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// Make tai the reaper of its descendants (Linux), so nothing it starts escapes to init.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    if nix::sys::prctl::set_child_subreaper(true).is_ok() {
        SUBREAPER.store(true, Ordering::SeqCst);
    }
}

fn started() -> std::sync::MutexGuard<'static, Vec<i32>> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start `launch` in its own process group, stdout and stderr piped.
pub fn start(launch: &Launch<'_>) -> io::Result<Child> {
    let mut cmd = Command::new(launch.program);
    cmd.args(launch.args)
        .stdin(if launch.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(fd) = launch.channel {
        cmd.stdin(Stdio::from(fd.try_clone_to_owned()?))
            .stdout(Stdio::from(fd.try_clone_to_owned()?));
    }
    cmd.env_clear().envs(launch.env.iter().map(|(k, v)| (k, v)));
    if let Some(d) = launch.cwd {
        cmd.current_dir(d);
    }
    let mark = format!(
        "{}-{}",
        std::process::id(),
        NEXT_MARK.fetch_add(1, Ordering::SeqCst)
    );
    cmd.env(MARK, &mark);
    reap_orphans(); // orphans that ended since the last start are reaped here
    let child = cmd.spawn()?;
    started().push(child.id() as i32);
    MARKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(child.id() as i32, mark);
    Ok(child)
}

/// Each started child's mark, by pid.
static MARKS: Mutex<std::collections::BTreeMap<i32, String>> =
    Mutex::new(std::collections::BTreeMap::new());

/// Whether process `pid` carries `mark` in its environment (read from /proc).
fn carries(pid: i32, mark: &str) -> bool {
    let want = format!("{MARK}={mark}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
}

/// Wait for `child` to exit until `deadline`, returning early (with `None`) when
/// `interrupted` says so; its status once it exited.
pub fn wait_until(
    child: &mut Child,
    deadline: Deadline,
    interrupted: &dyn Fn() -> bool,
) -> Option<ExitStatus> {
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            forget(child.id());
            return Some(s);
        }
        if deadline.expired() || interrupted() {
            return None;
        }
        crate::clock::sleep_until(deadline.within(CHILD_REAP_CHECK));
    }
}

/// The child is reaped: it is no longer tai's to wait for, nor its mark to look for.
fn forget(pid: u32) {
    started().retain(|p| *p != pid as i32);
    MARKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(pid as i32));
}

/// `ppid` of every process, from /proc.
fn parents() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(ppid) = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .as_deref()
            .and_then(stat_ppid)
        {
            map.insert(pid, ppid);
        }
    }
    map
}

/// The parent pid in a `/proc/PID/stat` line (the name in parentheses may hold anything).
fn stat_ppid(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every descendant of `root` (children, their children, …), by the parent links given.
fn descendants(root: i32, parents: &HashMap<i32, i32>) -> Vec<i32> {
    let mut found = Vec::new();
    let mut seen = HashSet::from([root]);
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (&pid, &ppid) in parents {
            if ppid == p && seen.insert(pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// Processes tai adopted as subreaper: its children that it did not start itself.
fn adopted(parents: &HashMap<i32, i32>) -> Vec<i32> {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return Vec::new();
    }
    let me = std::process::id() as i32;
    let ours = started().clone();
    parents
        .iter()
        .filter(|(pid, ppid)| **ppid == me && !ours.contains(pid))
        .map(|(pid, _)| *pid)
        .collect()
}

/// What the child left behind: its descendants, and the orphans tai adopted that carry
/// its mark (and their descendants). Another child's leftovers are not touched.
fn family(pid: i32) -> Vec<i32> {
    let parents = parents();
    let mut all = descendants(pid, &parents);
    let mark = MARKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&pid)
        .cloned();
    let Some(mark) = mark else {
        return all;
    };
    for p in adopted(&parents).into_iter().filter(|p| carries(*p, &mark)) {
        if !all.contains(&p) {
            all.push(p);
        }
        for d in descendants(p, &parents) {
            if !all.contains(&d) {
                all.push(d);
            }
        }
    }
    all
}

fn signal_all(group: i32, pids: &[i32], sig: Signal) {
    let _ = killpg(Pid::from_raw(group), sig);
    for p in pids {
        let _ = kill(Pid::from_raw(*p), sig);
    }
}

/// End every process this one adopted as subreaper, and their descendants, whatever mark
/// they carry (a served worker's last step: what its calls left running in the
/// background, even `setsid` without the mark, goes with it); reaped until `deadline`.
pub fn end_adopted(deadline: Deadline) {
    let parents = parents();
    let mut all = adopted(&parents);
    for p in all.clone() {
        all.extend(descendants(p, &parents));
    }
    for p in &all {
        let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
    }
    while !adopted(&self::parents()).is_empty() && !deadline.expired() {
        reap_orphans();
        crate::clock::sleep(CHILD_REAP_CHECK);
    }
}

/// Reap any adopted orphan that has exited (they are tai's zombies otherwise).
pub fn reap_orphans() {
    for p in adopted(&parents()) {
        let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
    }
}

/// Stop `child` and everything it left behind: SIGTERM to its group and every descendant,
/// up to `grace` for them to go, then SIGKILL; reap. Returns the child's status.
pub fn stop(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    let pid = child.id() as i32;
    let mut status = child.try_wait().ok().flatten();
    // Found before any signal, while the parent links still lead to them.
    let left_behind = family(pid);
    signal_all(pid, &left_behind, Signal::SIGTERM);
    let until = Deadline::after(grace);
    loop {
        if status.is_none() {
            status = child.try_wait().ok().flatten();
        }
        reap_orphans();
        let alive = left_behind
            .iter()
            .any(|p| kill(Pid::from_raw(*p), None).is_ok() && !is_zombie(*p))
            || killpg(Pid::from_raw(pid), None).is_ok() && status.is_none();
        if !alive && status.is_some() {
            break;
        }
        if until.expired() {
            // Found again: a descendant may have started a process meanwhile.
            let mut last = family(pid);
            last.extend(left_behind.iter().copied());
            signal_all(pid, &last, Signal::SIGKILL);
            if status.is_none() {
                status = child.wait().ok();
            }
            break;
        }
        crate::clock::sleep(CHILD_REAP_CHECK);
    }
    // The group may outlive the leader (a shell's background job): it goes too.
    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    for p in &left_behind {
        let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
    }
    reap_orphans();
    forget(child.id());
    status
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|st| st == "Z")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn stat_lines_and_family_trees() {
        assert_eq!(stat_ppid("42 (a) b) S 7 42 42 0"), Some(7));
        assert_eq!(stat_ppid("42 (sh) R 1 1 1"), Some(1));
        assert_eq!(stat_ppid("garbage"), None);
        let parents = HashMap::from([(2, 1), (3, 2), (4, 3), (5, 1), (6, 5)]);
        let mut d = descendants(2, &parents);
        d.sort();
        assert_eq!(d, [3, 4]);
        assert!(descendants(4, &parents).is_empty());
    }

    #[test]
    fn stop_ends_a_child_that_ignores_sigterm_and_its_setsid_grandchild() {
        let args = vec![
            "-c".to_string(),
            "trap '' TERM; setsid sleep 30 & echo $!; exec sleep 30".to_string(),
        ];
        let mut child = start(&Launch {
            program: "/bin/sh",
            args: &args,
            env: &[("PATH".into(), "/usr/bin:/bin".into())],
            cwd: None,
            stdin: false,
            channel: None,
        })
        .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        // The grandchild carries this child's mark and no other (that is how an orphan
        // is told apart from another child's).
        let mark = MARKS
            .lock()
            .unwrap()
            .get(&(child.id() as i32))
            .cloned()
            .unwrap();
        // (read until the grandchild's exec has settled: /proc shows no environment
        // for a moment while a process execs)
        let settled = Instant::now() + Duration::from_secs(10);
        while !carries(grandchild, &mark) && Instant::now() < settled {
            crate::clock::sleep(Duration::from_millis(20));
        }
        assert!(
            carries(grandchild, &mark),
            "grandchild {grandchild} (state {:?}, cmdline {:?}) lacks {mark}",
            std::fs::read_to_string(format!("/proc/{grandchild}/stat")).ok(),
            std::fs::read(format!("/proc/{grandchild}/cmdline")).ok()
        );
        assert!(!carries(grandchild, &format!("{mark}0")));
        let t0 = Instant::now();
        let status = stop(&mut child, Duration::from_millis(300));
        assert!(status.is_some());
        assert!(t0.elapsed() < Duration::from_secs(3));
        // The setsid'd grandchild is ours to reap only as subreaper; it is gone or a zombie
        // (soon: up to 10 s on a loaded machine, returning as soon as it is).
        let gone = (0..500).any(|_| {
            let _ = waitpid(Pid::from_raw(grandchild), Some(WaitPidFlag::WNOHANG));
            let g = kill(Pid::from_raw(grandchild), None).is_err() || is_zombie(grandchild);
            if !g {
                crate::clock::sleep(Duration::from_millis(20));
            }
            g
        });
        assert!(gone, "the setsid grandchild {grandchild} survived stop");
    }
}
