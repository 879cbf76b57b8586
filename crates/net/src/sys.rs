//! The system calls that have no safe wrapper in `nix`: the one module of
//! the crate that allows `unsafe` (the crate denies it everywhere else; see
//! its `Cargo.toml`). Each function is a thin, checked wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Puts the calling thread under `SCHED_FIFO` at `priority` (1-99), or
/// back under `SCHED_OTHER` with `None`.
pub fn set_fifo_priority(priority: Option<i32>) -> io::Result<()> {
    let (policy, p) = match priority {
        Some(p) => (libc::SCHED_FIFO, p),
        None => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param { sched_priority: p };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0
    // is the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A new IPv4 stream socket of `protocol` (`IPPROTO_MPTCP`, which `nix`
/// does not name), close-on-exec, with `flags` such as `SOCK_NONBLOCK`.
pub fn stream_socket(protocol: i32, flags: i32) -> io::Result<std::os::fd::OwnedFd> {
    // SAFETY: socket(2) takes no pointers; a descriptor it returns is owned
    // by the OwnedFd alone.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | flags,
            protocol,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh, open descriptor that nothing else owns.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Reads option `name` at level `level` of socket `fd` into `buf`; returns
/// the length the kernel wrote.
pub fn getsockopt_bytes(
    fd: BorrowedFd<'_>,
    level: i32,
    name: i32,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is valid for writes of `len` bytes and `len` points to
    // its size; the kernel writes at most that many bytes and updates `len`.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(len as usize)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets an integer socket option (those `nix` has no wrapper for, such as
/// `TCP_RTO_MAX_MS` of Linux 6.15).
pub fn setsockopt_int(fd: BorrowedFd<'_>, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` is a valid c_int for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the command's process receive SIGKILL when the thread that spawns
/// it exits (`PR_SET_PDEATHSIG`), so that it never outlives the emulator.
pub fn kill_with_parent(cmd: &mut Command) -> &mut Command {
    // SAFETY: the hook only makes the async-signal-safe prctl(2) system call
    // between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == 0
            {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        })
    }
}
