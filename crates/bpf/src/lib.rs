//! TCP Wave for stock Linux: a BPF struct_ops congestion control
//! (`src/bpf/wave.bpf.c`) and its loader.
//!
//! [`load`] opens the program with [`Params`] as its read-only data, loads
//! it, registers it as the congestion control `wave` and pins the
//! registration and the program's maps under [`PIN_DIR`], so that it stays
//! registered after the loader exits; sockets then select it with
//! `setsockopt(TCP_CONGESTION, "wave")` like any kernel congestion control.
//! [`unload`] removes the pins, which unregisters it. [`status`] reads the
//! pinned counters and parameters; [`socket_state`] one connection's Wave
//! state, by its file descriptor.
//!
//! The program is built with the crate when clang, bpftool and the running
//! kernel's BTF are present (build.rs); otherwise every entry point returns
//! an [`Error`] that says what was missing.

#[cfg(wavelab_bpf_program)]
mod program;

pub use wavelab_bpf_maps::{Params, WaveSocket, NAME, PIN_DIR};

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Self {
        Error(s)
    }
}

/// Why this build has no BPF program, if it has none (clang, bpftool or the
/// kernel's BTF were missing when the crate was built).
pub fn build_problem() -> Option<&'static str> {
    let reason = env!("WAVELAB_BPF_MISSING");
    (!reason.is_empty()).then_some(reason)
}

/// Checks what loading needs: the program built in, root (or CAP_BPF and
/// CAP_NET_ADMIN), the kernel's BTF and a BPF filesystem (mounted if
/// missing). The message names what is missing.
pub fn check() -> Result<(), Error> {
    if let Some(reason) = build_problem() {
        return Err(Error(format!(
            "this wavelab-bpf was built without TCP Wave's BPF program: {reason}; install it and rebuild (cargo build --release --manifest-path crates/bpf/Cargo.toml)"
        )));
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(Error(
            "the running kernel has no BTF (/sys/kernel/btf/vmlinux): struct_ops congestion controls need CONFIG_DEBUG_INFO_BTF".into(),
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error(
            "loading a BPF congestion control needs root (or CAP_BPF and CAP_NET_ADMIN)".into(),
        ));
    }
    mount_bpffs()
}

/// Mounts the BPF filesystem at /sys/fs/bpf if nothing is mounted there.
fn mount_bpffs() -> Result<(), Error> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    if mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/fs/bpf") && l.contains(" bpf "))
    {
        return Ok(());
    }
    std::fs::create_dir_all("/sys/fs/bpf").ok();
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL");
    let (src, target, fstype) = (c("bpf"), c("/sys/fs/bpf"), c("bpf"));
    // SAFETY: the three pointers are valid NUL-terminated strings for the
    // duration of the call; data may be null.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(Error(format!(
            "no BPF filesystem at /sys/fs/bpf and mounting one failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// True if the kernel lists `name` among its available congestion controls.
pub fn kernel_has(name: &str) -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().any(|n| n == name))
        .unwrap_or(false)
}

fn pin(name: &str) -> PathBuf {
    Path::new(PIN_DIR).join(name)
}

/// Loads, registers and pins TCP Wave with these parameters. Refused if a
/// congestion control called `wave` is already registered.
pub fn load(params: &Params) -> Result<(), Error> {
    check()?;
    if kernel_has(NAME) {
        return Err(Error(format!(
            "a congestion control named \"{NAME}\" is already registered{}",
            if pin("link").exists() {
                " (by wavelab-bpf: `wavelab-bpf unload` first)"
            } else {
                " (not by wavelab-bpf)"
            }
        )));
    }
    std::fs::create_dir_all(PIN_DIR).map_err(|e| Error(format!("creating {PIN_DIR}: {e}")))?;
    #[cfg(wavelab_bpf_program)]
    return program::load(params, Path::new(PIN_DIR));
    #[cfg(not(wavelab_bpf_program))]
    {
        let _ = params;
        unreachable!("check() refuses a build without the program")
    }
}

/// Unregisters TCP Wave and removes its pins; false if it was not loaded by
/// wavelab-bpf. Sockets that use it keep it until they close.
pub fn unload() -> Result<bool, Error> {
    let link = pin("link");
    if !link.exists() {
        return Ok(false);
    }
    for name in ["link", "counters", "sockets", "params"] {
        let p = pin(name);
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| Error(format!("removing {}: {e}", p.display())))?;
        }
    }
    std::fs::remove_dir(PIN_DIR).ok();
    // The kernel frees a link from a workqueue: wait until the registration
    // is gone, so that the next `load` or a check right after sees it gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while kernel_has(NAME) {
        if std::time::Instant::now() > deadline {
            return Err(Error(format!(
                "the pins are removed but the kernel still lists \"{NAME}\" after 5 s"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(true)
}

/// Counters over every socket that used TCP Wave since it was loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Connections that selected it.
    pub sockets: u64,
    /// Bursts opened.
    pub bursts: u64,
    /// ACK trains closed.
    pub trains: u64,
    /// Entries into adjustment mode.
    pub adjustments: u64,
    /// Fast retransmissions (entries into recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// The TxTime last set, microseconds.
    pub last_tx_time_us: u64,
    /// The dispersion last folded in, microseconds.
    pub last_dispersion_us: u64,
}

impl Counters {
    /// Parses the counters map's value (eight u64).
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let v: Vec<u64> = b
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect();
        (v.len() >= 8).then(|| Counters {
            sockets: v[0],
            bursts: v[1],
            trains: v[2],
            adjustments: v[3],
            fast_retransmits: v[4],
            rtos: v[5],
            last_tx_time_us: v[6],
            last_dispersion_us: v[7],
        })
    }
}

/// What `status` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The kernel lists `wave` among its congestion controls.
    pub registered: bool,
    /// wavelab-bpf's pins exist (it was loaded by wavelab-bpf).
    pub pinned: bool,
    /// The parameters it was loaded with (when pinned).
    pub params: Option<Params>,
    /// Its counters (when pinned).
    pub counters: Option<Counters>,
}

/// Whether TCP Wave is registered, with what parameters and counters.
pub fn status() -> Result<Status, Error> {
    let pinned = pin("link").exists();
    let mut st = Status {
        registered: kernel_has(NAME),
        pinned,
        params: None,
        counters: None,
    };
    if pinned {
        let dir = Path::new(PIN_DIR);
        let read = |e: std::io::Error| Error(format!("reading the pinned maps: {e}"));
        st.params = wavelab_bpf_maps::pinned_params(dir).map_err(read)?;
        st.counters = wavelab_bpf_maps::pinned_counters_bytes(dir)
            .map_err(read)?
            .and_then(|b| Counters::from_bytes(&b));
    }
    Ok(st)
}

/// One connection's TCP Wave state, by the socket's file descriptor (in this
/// process); `None` if the socket does not use the pinned program.
pub fn socket_state(fd: std::os::fd::BorrowedFd<'_>) -> Result<Option<WaveSocket>, Error> {
    let read = |e: std::io::Error| Error(format!("reading a socket's state: {e}"));
    let states = wavelab_bpf_maps::SocketStates::open(Path::new(PIN_DIR))
        .map_err(read)?
        .ok_or_else(|| {
            Error("TCP Wave is not loaded by wavelab-bpf (no pinned socket storage)".into())
        })?;
    states.get(fd).map_err(read)
}
