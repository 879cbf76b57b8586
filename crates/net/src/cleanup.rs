//! `wavelab emulate --cleanup`: what an emulation can leave behind, found
//! and removed.
//!
//! A run's namespaces are anonymous and its TUN devices belong to them, so
//! the kernel removes both when the last process in them and the last file
//! descriptor on them are gone; the emulator's own threads and sockets go
//! with its process, however it ends (a `kill -9` included). A flow's
//! command (`cmd`) runs in a PID namespace of its own whose PID 1 dies with
//! the emulator (`PR_SET_PDEATHSIG`), taking every process of the command
//! with it. What can remain is a process that left that PID namespace (a
//! command that re-executes itself through `nsenter`, say), which also
//! keeps its network namespace alive. Every process a run starts carries
//! the environment variable [`crate::MARKER`]; this finds those still
//! running and kills them.

use std::fs;

/// A process left behind by an emulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Its PID.
    pub pid: i32,
    /// Its command line.
    pub cmdline: String,
    /// The PID of the emulation that started it.
    pub owner: i32,
}

/// The processes that carry [`crate::MARKER`] of an emulation that no longer
/// runs (or of any emulation, with `all`).
pub fn leftovers(all: bool) -> Vec<Leftover> {
    let mut out = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    let prefix = format!("{}=", crate::MARKER);
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(env) = fs::read(e.path().join("environ")) else {
            continue;
        };
        let owner = env
            .split(|&b| b == 0)
            .filter_map(|v| std::str::from_utf8(v).ok())
            .find_map(|v| v.strip_prefix(&prefix))
            .and_then(|o| o.parse::<i32>().ok());
        let Some(owner) = owner else { continue };
        let alive = fs::metadata(format!("/proc/{owner}")).is_ok();
        if all || !alive {
            let cmdline = fs::read(e.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            out.push(Leftover {
                pid,
                cmdline,
                owner,
            });
        }
    }
    out.sort_by_key(|l| l.pid);
    out
}

/// Kills the leftovers (SIGKILL); returns those it killed.
pub fn cleanup(all: bool) -> Vec<Leftover> {
    let found = leftovers(all);
    for l in &found {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(l.pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    found
}
