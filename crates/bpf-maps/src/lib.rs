//! TCP Wave's BPF program as the rest of wavelab sees it once it is loaded:
//! where `wavelab-bpf` pins its maps ([`PIN_DIR`]), the parameters it was
//! loaded with ([`Params`], read back by [`pinned_params`]) and one
//! connection's state ([`WaveSocket`], read by [`SocketStates`]).
//!
//! The loader (crates/bpf, which needs clang and libbpf) writes these; the
//! emulator (crates/net) only reads them, with the bare bpf(2) system call,
//! so that neither it nor the Python package needs libbpf. The layouts are
//! those of `crates/bpf/src/bpf/wave.bpf.c`; a change there is a change
//! here.

pub mod params;
pub mod socket;
mod syscall;

pub use params::Params;
pub use socket::{BurstRecord, WaveSocket};

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

/// Where the registration and the maps are pinned.
pub const PIN_DIR: &str = "/sys/fs/bpf/wavelab";
/// The congestion control's name.
pub const NAME: &str = "wave";

/// Opens the map pinned at `dir/name`; `None` if nothing is pinned there.
fn open_pinned(dir: &Path, name: &str) -> io::Result<Option<OwnedFd>> {
    let path = dir.join(name);
    if !path.exists() {
        return Ok(None);
    }
    syscall::obj_get(&path).map(Some).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("opening the pinned map {}: {e}", path.display()),
        )
    })
}

/// The first value of the single-entry array map pinned at `dir/name`.
fn first_value(dir: &Path, name: &str) -> io::Result<Option<Vec<u8>>> {
    let Some(map) = open_pinned(dir, name)? else {
        return Ok(None);
    };
    syscall::lookup(&map, &0u32.to_ne_bytes())
}

/// The parameters the program pinned in `dir` was loaded with; `None` if
/// nothing is pinned there (not loaded, or not by `wavelab-bpf`).
pub fn pinned_params(dir: &Path) -> io::Result<Option<Params>> {
    Ok(first_value(dir, "params")?.and_then(|b| Params::from_bytes(&b)))
}

/// The pinned counters map's value (the loader parses it).
pub fn pinned_counters_bytes(dir: &Path) -> io::Result<Option<Vec<u8>>> {
    first_value(dir, "counters")
}

/// The program's per-socket storage, opened once and read per connection.
#[derive(Debug)]
pub struct SocketStates {
    map: OwnedFd,
}

impl SocketStates {
    /// Opens the socket storage pinned in `dir`; `None` if nothing is
    /// pinned there.
    pub fn open(dir: &Path) -> io::Result<Option<Self>> {
        Ok(open_pinned(dir, "sockets")?.map(|map| SocketStates { map }))
    }

    /// The TCP Wave state of the connection `sock` (a socket of this
    /// process); `None` if it does not use the pinned program.
    pub fn get(&self, sock: BorrowedFd<'_>) -> io::Result<Option<WaveSocket>> {
        Ok(self.value(sock)?.and_then(|b| WaveSocket::from_bytes(&b)))
    }

    /// As [`get`](Self::get), with the bursts the program opened last
    /// (its ring, oldest first; see [`WaveSocket::recent_bursts`]).
    pub fn get_with_bursts(
        &self,
        sock: BorrowedFd<'_>,
    ) -> io::Result<Option<(WaveSocket, Vec<BurstRecord>)>> {
        Ok(self
            .value(sock)?
            .and_then(|b| WaveSocket::from_bytes(&b).map(|s| (s, WaveSocket::recent_bursts(&b)))))
    }

    /// The storage value of the connection `sock`, if it has one.
    fn value(&self, sock: BorrowedFd<'_>) -> io::Result<Option<Vec<u8>>> {
        use std::os::fd::AsRawFd;
        syscall::lookup(&self.map, &sock.as_raw_fd().to_ne_bytes())
    }
}
