//! What an emulation needs from the machine, checked before anything is
//! created, so that a user without it gets one message naming what is
//! missing (and the tests that need it can say why they skip).

use std::fs::OpenOptions;
use std::process::{Command, Stdio};

/// `CAP_NET_ADMIN`: configure devices, addresses, routes.
const CAP_NET_ADMIN: u32 = 12;
/// `CAP_SYS_ADMIN`: create network namespaces.
const CAP_SYS_ADMIN: u32 = 21;

/// The effective capabilities of this process.
fn effective_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line.split_whitespace().nth(1)?, 16).ok()
}

/// Checks that this process can run an emulation (and, if `commands`,
/// flows that run commands); the error lists everything missing.
pub fn check(commands: bool) -> Result<(), String> {
    let mut missing = Vec::new();
    match effective_caps() {
        Some(caps) => {
            for (bit, name, why) in [
                (
                    CAP_SYS_ADMIN,
                    "CAP_SYS_ADMIN",
                    "to create network namespaces",
                ),
                (
                    CAP_NET_ADMIN,
                    "CAP_NET_ADMIN",
                    "to configure their devices and routes",
                ),
            ] {
                if caps & (1 << bit) == 0 {
                    missing.push(format!("{name} ({why}): run as root"));
                }
            }
        }
        None => missing.push("capabilities unknown (no /proc/self/status): run as root".into()),
    }
    match OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
    {
        Ok(_) => {}
        Err(e) => missing.push(format!(
            "/dev/net/tun ({e}): the kernel's TUN driver, or access to it in this container"
        )),
    }
    let runs = |cmd: &str, arg: &str| {
        Command::new(cmd)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !runs("ip", "-V") {
        missing.push("the `ip` command (Debian: apt-get install iproute2)".into());
    }
    if commands && !runs("unshare", "--version") {
        missing.push("the `unshare` command for flows with `cmd` (Debian: util-linux)".into());
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("emulation needs {}", missing.join("; ")))
    }
}
