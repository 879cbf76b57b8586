//! Network namespaces the emulator creates: anonymous, held only by file
//! descriptors and threads of this process, so the kernel removes them (and
//! the TUN devices in them) when the process ends, however it ends.
//!
//! A namespace is never given a name under `/run/netns` (which would
//! survive a `kill -9`): [`Namespace::new`] makes a short-lived thread
//! `unshare(CLONE_NEWNET)` and keeps `/proc/thread-self/ns/net` open. Work
//! inside it runs on a thread that joins it with `setns` ([`Namespace::run`]);
//! processes spawned from such a thread are born in it.

use nix::sched::{setns, unshare, CloneFlags};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

/// An anonymous network namespace.
#[derive(Clone, Debug)]
pub struct Namespace {
    /// What it is for (a node's name), for messages.
    pub label: String,
    file: Arc<File>,
}

/// An error setting up the emulation's namespaces, devices or processes,
/// with what was being done.
#[derive(Debug)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SetupError {}

impl SetupError {
    /// `what` failed with `e`.
    pub fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Self {
        SetupError(format!("{what}: {e}"))
    }
}

impl Namespace {
    /// A new, empty network namespace (only a loopback device, down).
    pub fn new(label: &str) -> Result<Namespace, SetupError> {
        let file = std::thread::spawn(|| -> io::Result<File> {
            unshare(CloneFlags::CLONE_NEWNET)?;
            File::open("/proc/thread-self/ns/net")
        })
        .join()
        .map_err(|_| SetupError(format!("{label}: the namespace thread panicked")))?
        .map_err(|e| SetupError::io(format!("creating the network namespace of {label}"), e))?;
        Ok(Namespace {
            label: label.to_string(),
            file: Arc::new(file),
        })
    }

    /// Moves the calling thread into the namespace (for good: call it on a
    /// thread that lives only for work there).
    pub fn enter(&self) -> io::Result<()> {
        setns(self.file.as_fd(), CloneFlags::CLONE_NEWNET)?;
        Ok(())
    }

    /// Runs `f` on a new thread inside the namespace and returns its result.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, SetupError> + Send + 'static,
    ) -> Result<T, SetupError> {
        let ns = self.clone();
        std::thread::Builder::new()
            .name(format!("ns-{}", self.label))
            .spawn(move || {
                ns.enter().map_err(|e| {
                    SetupError::io(format!("entering the namespace of {}", ns.label), e)
                })?;
                f()
            })
            .map_err(|e| SetupError::io("spawning a thread", e))?
            .join()
            .map_err(|_| SetupError(format!("{}: a set-up thread panicked", self.label)))?
    }

    /// The namespace's inode (what `/proc/PID/ns/net` links name), to tell
    /// namespaces apart.
    pub fn inode(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().map(|m| m.ino()).unwrap_or(0)
    }
}

/// Runs `ip ARGS` in the calling thread's namespace (call it from
/// [`Namespace::run`]); the error quotes the command and what `ip` said.
pub fn ip(args: &[&str]) -> Result<(), SetupError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SetupError::io(format!("running `ip {}`", args.join(" ")), e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SetupError(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Writes a sysctl of the calling thread's namespace (`net.ipv4.tcp_sack`
/// is `/proc/sys/net/ipv4/tcp_sack`).
pub fn sysctl(key: &str, value: &str) -> Result<(), SetupError> {
    let path = Path::new("/proc/sys").join(key.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| SetupError::io(format!("setting {key} = {value}"), e))
}

/// Reads a sysctl of the calling thread's namespace.
pub fn read_sysctl(key: &str) -> io::Result<String> {
    let path = Path::new("/proc/sys").join(key.replace('.', "/"));
    Ok(std::fs::read_to_string(path)?.trim().to_string())
}
