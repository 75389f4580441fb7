//! The controlling terminal: hidden input (passphrases, secret values) read from `/dev/tty`.

use std::io::{BufRead, BufReader, Write};

use nix::sys::termios::{self, LocalFlags, SetArg};

/// Whether a controlling terminal can be opened.
pub fn has_tty() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

/// Show `prompt` on the terminal and read one line with echo off.
pub fn read_hidden(prompt: &str) -> std::io::Result<String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let mut out = &tty;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let saved = termios::tcgetattr(&tty).map_err(std::io::Error::from)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    quiet.local_flags.insert(LocalFlags::ECHONL);
    termios::tcsetattr(&tty, SetArg::TCSAFLUSH, &quiet).map_err(std::io::Error::from)?;
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    let restored =
        termios::tcsetattr(&tty, SetArg::TCSAFLUSH, &saved).map_err(std::io::Error::from);
    read?;
    restored?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Show `prompt` on the terminal and read one line with echo on.
pub fn read_line(prompt: &str) -> std::io::Result<String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let mut out = &tty;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let mut line = String::new();
    BufReader::new(&tty).read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}
