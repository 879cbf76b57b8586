//! Multipath TCP on the kernel (RFC 8684; Linux's MPTCP, upstream since
//! 5.6, with its in-kernel path manager): what a flow with `mptcp = { ... }`
//! sets up and reads back.
//!
//! * **Addresses.** The multi-homed end keeps its address for the subflow
//!   on its primary access link and gets one more per other access link
//!   ([`subflow_address`]), on its TUN device; the wire thread routes the
//!   packets between the other end and each address over that access link
//!   (the simulator's subflow routes, [`wavelab_model::scenario::subflow_plan`]).
//! * **Path manager.** In the multi-homed end's namespace each extra address
//!   is an MPTCP endpoint (`ip mptcp endpoint add`): `signal` when that end
//!   is the listener (it announces the address, ADD_ADDR, and the other end
//!   opens a subflow to it, MP_JOIN), `subflow` when it connects (it opens
//!   the subflow itself); with `paths = "backup"` the endpoints of the
//!   non-primary links are `backup` (RFC 8684 section 3.3.8). Both ends'
//!   limits allow [`MAX_SUBFLOWS`] subflows and announced addresses.
//! * **Sockets.** The sender's socket and the receiver's listener are
//!   `IPPROTO_MPTCP` sockets; a peer without MPTCP would fall back to TCP.
//! * **What the kernel reports.** `MPTCP_INFO` (the connection's bytes sent,
//!   received, acknowledged and retransmitted), `MPTCP_TCPINFO` (each
//!   subflow's `TCP_INFO`) and `MPTCP_SUBFLOW_ADDRS` (each subflow's
//!   addresses, which tell its access link), all on `SOL_MPTCP` (Linux
//!   5.16+).
//!
//! What Linux does not have is refused naming the field ([`check`]): a
//! scheduler other than its default (the lowest RTT among the subflows with
//! room, as `lowest-rtt`), and coupled congestion control (each subflow runs
//! the flow's `cc` on its own, as `uncoupled`).

use crate::sys::getsockopt_bytes;
use crate::tcpinfo::TcpInfo;
use nix::sys::socket::{bind, listen, setsockopt, sockopt, Backlog, SockaddrIn};
use std::io;
use std::net::{SocketAddrV4, TcpListener};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use wavelab_model::scenario::{Coupling, Failover, MptcpSpec, Scheduler};
use wavelab_model::ScenarioError;

/// `IPPROTO_MPTCP`.
pub const IPPROTO_MPTCP: i32 = 262;
/// `SOL_MPTCP`.
const SOL_MPTCP: i32 = 284;
/// `MPTCP_INFO`, `MPTCP_TCPINFO`, `MPTCP_SUBFLOW_ADDRS` (`linux/mptcp.h`).
const MPTCP_INFO: i32 = 1;
const MPTCP_TCPINFO: i32 = 2;
const MPTCP_SUBFLOW_ADDRS: i32 = 3;
/// The subflows and announced addresses each end's path manager accepts.
pub const MAX_SUBFLOWS: usize = 8;

/// One subflow of an emulated MPTCP flow.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowEnd {
    /// Its access link's name.
    pub link: String,
    /// Its row among the plan's flows (the connection's own for subflow 0).
    pub row: usize,
    /// The multi-homed end's address on its access link.
    pub address: [u8; 4],
    /// A backup subflow.
    pub backup: bool,
}

/// How an MPTCP flow runs on the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct MptcpPlan {
    /// The multi-homed end (an index into [`crate::Plan::nodes`]).
    pub node: usize,
    /// The multi-homed end sends (it opens the subflows), else it listens
    /// (it announces its addresses).
    pub node_sends: bool,
    /// Subflow 0 on the primary link, then the others.
    pub subflows: Vec<SubflowEnd>,
}

/// The address of a node whose own address is `base` on the access link of
/// its subflow `j` (0: `base`): `10.0.(hi + 8 j).lo`, inside the emulator's
/// 10.0.0.0/16 and apart from every node's own address while nodes number
/// fewer than 2,047 and subflows 16. None beyond that.
pub fn subflow_address(base: [u8; 4], j: usize) -> Option<[u8; 4]> {
    if j == 0 {
        return Some(base);
    }
    (base[2] < 8 && j < 16).then(|| [base[0], base[1], base[2] + 8 * j as u8, base[3]])
}

/// Refuses what Linux's MPTCP does not do, naming the field (`p` is the
/// flow's path, `flows[i]`); notes what it does differently.
pub fn check(p: &str, m: &MptcpSpec, notes: &mut Vec<String>) -> Result<(), ScenarioError> {
    if m.scheduler != Scheduler::LowestRtt {
        return Err(ScenarioError {
            path: format!("{p}.mptcp.scheduler"),
            message: format!(
                "\"{}\": Linux's MPTCP schedules by the lowest RTT among the subflows with room \
                 (its one built-in scheduler): use scheduler = \"lowest-rtt\" to emulate the flow",
                Scheduler::NAMES[m.scheduler as usize]
            ),
        });
    }
    if m.coupled != Coupling::Uncoupled {
        return Err(ScenarioError {
            path: format!("{p}.mptcp.coupled"),
            message: format!(
                "\"{}\": Linux's MPTCP has no coupled congestion control (each subflow runs the \
                 socket's own): use coupled = \"uncoupled\" to emulate the flow",
                m.coupled.name()
            ),
        });
    }
    if m.failover == Failover::Notice {
        notes.push(format!(
            "{p}.mptcp.failover: the kernel's path manager takes no cross-layer notices; its \
             subflows fail by their own timeouts"
        ));
    }
    if m.stale_after != 1 {
        notes.push(format!(
            "{p}.mptcp.stale_after: the kernel decides when a subflow is stale by its own rule \
             (net.mptcp.stale_loss_cnt)"
        ));
    }
    Ok(())
}

/// A new IPv4 MPTCP stream socket (close-on-exec, with `flags` such as
/// `SOCK_NONBLOCK`).
pub fn socket(flags: i32) -> io::Result<OwnedFd> {
    crate::sys::stream_socket(IPPROTO_MPTCP, flags)
}

/// An MPTCP listener on `addr` (it accepts plain TCP too: a peer without
/// MPTCP falls back).
pub fn listener(addr: SocketAddrV4) -> io::Result<TcpListener> {
    let fd = socket(0)?;
    setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    bind(fd.as_raw_fd(), &SockaddrIn::from(addr))?;
    listen(&fd, Backlog::new(128).expect("a valid backlog"))?;
    Ok(TcpListener::from(fd))
}

/// Whether the running kernel has MPTCP on (`net.mptcp.enabled`).
pub fn enabled() -> bool {
    std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|s| s.trim() == "1")
}

/// A connection's figures from `MPTCP_INFO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnInfo {
    /// Subflows open now.
    pub subflows: u8,
    /// Data bytes retransmitted at the connection level (reinjections).
    pub bytes_retrans: u64,
    /// Data bytes sent.
    pub bytes_sent: u64,
    /// Data bytes received in order.
    pub bytes_received: u64,
    /// Data bytes acknowledged (data ACK).
    pub bytes_acked: u64,
}

impl ConnInfo {
    /// Reads `MPTCP_INFO` of an MPTCP socket.
    pub fn read(fd: BorrowedFd<'_>) -> io::Result<ConnInfo> {
        let mut b = [0u8; 256];
        let n = getsockopt_bytes(fd, SOL_MPTCP, MPTCP_INFO, &mut b)?;
        ConnInfo::decode(&b[..n]).ok_or_else(|| {
            io::Error::other(format!("MPTCP_INFO of {n} bytes: a kernel older than 6.2"))
        })
    }

    /// `struct mptcp_info` (`linux/mptcp.h`, Linux 6.2+): the byte counters
    /// at offsets 48 (retransmitted), 56 (sent), 64 (received), 72 (acked).
    fn decode(b: &[u8]) -> Option<ConnInfo> {
        let u64_at = |o: usize| Some(u64::from_ne_bytes(b.get(o..o + 8)?.try_into().ok()?));
        Some(ConnInfo {
            subflows: *b.first()?,
            bytes_retrans: u64_at(48)?,
            bytes_sent: u64_at(56)?,
            bytes_received: u64_at(64)?,
            bytes_acked: u64_at(72)?,
        })
    }
}

/// One subflow as the kernel reports it: its local and remote IPv4
/// addresses and its `TCP_INFO`.
#[derive(Clone, Debug)]
pub struct SubflowInfo {
    /// Local address.
    pub local: [u8; 4],
    /// Remote address.
    pub remote: [u8; 4],
    /// Its TCP_INFO.
    pub info: TcpInfo,
}

/// `struct mptcp_subflow_data`: the header of the `MPTCP_TCPINFO` and
/// `MPTCP_SUBFLOW_ADDRS` answers (the sizes of the header and of one
/// element given, the kernel's count and element size filled in).
const HEADER: usize = 16;
/// `struct tcp_info` as asked for.
const TCP_INFO_SIZE: usize = 256;
/// `struct mptcp_subflow_addrs`: two `__kernel_sockaddr_storage`.
const ADDRS_SIZE: usize = 256;

fn subflow_array(fd: BorrowedFd<'_>, opt: i32, elem: usize) -> io::Result<Vec<Vec<u8>>> {
    let mut b = vec![0u8; HEADER + MAX_SUBFLOWS * elem];
    b[0..4].copy_from_slice(&(HEADER as u32).to_ne_bytes());
    b[12..16].copy_from_slice(&(elem as u32).to_ne_bytes());
    let n = getsockopt_bytes(fd, SOL_MPTCP, opt, &mut b)?;
    let count = u32::from_ne_bytes(b[4..8].try_into().expect("4 bytes")) as usize;
    let size = u32::from_ne_bytes(b[12..16].try_into().expect("4 bytes")) as usize;
    let size = size.min(elem);
    Ok((0..count.min(MAX_SUBFLOWS))
        .filter_map(|k| {
            let o = HEADER + k * elem;
            (o + size <= n).then(|| b[o..o + size].to_vec())
        })
        .collect())
}

/// The IPv4 address of a `sockaddr_in` at the start of `b` (None for
/// another family).
fn ipv4(b: &[u8]) -> Option<[u8; 4]> {
    let family = u16::from_ne_bytes(b.get(0..2)?.try_into().ok()?);
    (family == libc::AF_INET as u16).then(|| b[4..8].try_into().expect("4 bytes"))
}

/// Every subflow of an MPTCP socket: its addresses and `TCP_INFO`.
pub fn subflows(fd: BorrowedFd<'_>) -> io::Result<Vec<SubflowInfo>> {
    let infos = subflow_array(fd, MPTCP_TCPINFO, TCP_INFO_SIZE)?;
    let addrs = subflow_array(fd, MPTCP_SUBFLOW_ADDRS, ADDRS_SIZE)?;
    Ok(infos
        .iter()
        .zip(&addrs)
        .filter_map(|(i, a)| {
            Some(SubflowInfo {
                local: ipv4(a)?,
                remote: ipv4(a.get(128..)?)?,
                info: TcpInfo::decode(i, i.len())?,
            })
        })
        .collect())
}

/// Each subflow's `TCP_INFO` on an MPTCP socket `fd` of connection `m`, by
/// subflow number (None: not open); `local_is_node` says whether the
/// socket is the multi-homed end's (its subflows' local addresses then tell
/// their links, else their remote ones).
pub fn by_subflow(fd: BorrowedFd<'_>, m: &MptcpPlan, local_is_node: bool) -> Vec<Option<TcpInfo>> {
    let mut out = vec![None; m.subflows.len()];
    for s in subflows(fd).unwrap_or_default() {
        let at = if local_is_node { s.local } else { s.remote };
        if let Some(j) = m.subflows.iter().position(|e| e.address == at) {
            out[j] = Some(s.info);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subflow_addresses_stay_apart_from_every_nodes_own() {
        let base = [10, 0, 0, 3];
        assert_eq!(subflow_address(base, 0), Some(base));
        assert_eq!(subflow_address(base, 1), Some([10, 0, 8, 3]));
        assert_eq!(subflow_address(base, 2), Some([10, 0, 16, 3]));
        // node 2,047 (10.0.8.0) is the first own address an extra one could take
        assert_eq!(subflow_address([10, 0, 7, 255], 1), Some([10, 0, 15, 255]));
        assert_eq!(subflow_address([10, 0, 8, 0], 1), None);
        assert_eq!(subflow_address(base, 16), None);
    }

    #[test]
    fn what_linux_does_not_do_is_refused_by_field() {
        let mut notes = Vec::new();
        let ok = MptcpSpec {
            stale_after: 1,
            ..MptcpSpec::default()
        };
        assert!(check("flows[0]", &ok, &mut notes).is_ok());
        assert!(notes.is_empty());
        let rr = MptcpSpec {
            scheduler: Scheduler::RoundRobin,
            ..ok.clone()
        };
        let e = check("flows[0]", &rr, &mut notes).unwrap_err().to_string();
        assert!(
            e.starts_with("flows[0].mptcp.scheduler: \"round-robin\""),
            "{e}"
        );
        let lia = MptcpSpec {
            coupled: Coupling::Lia,
            ..ok.clone()
        };
        let e = check("flows[0]", &lia, &mut notes).unwrap_err().to_string();
        assert!(e.starts_with("flows[0].mptcp.coupled: \"lia\""), "{e}");
        let notice = MptcpSpec {
            failover: Failover::Notice,
            stale_after: 3,
            ..ok
        };
        assert!(check("flows[0]", &notice, &mut notes).is_ok());
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn mptcp_info_reads_the_byte_counters() {
        let mut b = [0u8; 96];
        b[0] = 2;
        for (o, v) in [(48, 7u64), (56, 1000), (64, 900), (72, 800)] {
            b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
        }
        let c = ConnInfo::decode(&b).unwrap();
        assert_eq!(
            c,
            ConnInfo {
                subflows: 2,
                bytes_retrans: 7,
                bytes_sent: 1000,
                bytes_received: 900,
                bytes_acked: 800
            }
        );
        assert_eq!(ConnInfo::decode(&b[..40]), None);
    }
}
