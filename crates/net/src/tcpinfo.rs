//! `TCP_INFO` and `TCP_CC_INFO`, read from a kernel socket and turned into
//! the simulator's series row ([`FlowSample`]).
//!
//! The kernel's `struct tcp_info` grows at its end from release to release;
//! it is read into a byte buffer and decoded by offset (include/uapi/linux/
//! tcp.h), so fields a kernel does not fill (the RTO counters before Linux
//! 6.7) come out as `None` instead of being read past what it wrote.

use crate::sys::getsockopt_bytes;
use std::io;
use std::os::fd::BorrowedFd;
use wavelab_model::tables::series::FlowSample;

/// The fields of `struct tcp_info` the emulator reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// TCP state (`TCP_ESTABLISHED` = 1, ... `TCP_FIN_WAIT2` = 5, ...).
    pub state: u8,
    /// Congestion-avoidance state: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss.
    pub ca_state: u8,
    /// Retransmission timeout (us).
    pub rto: u32,
    /// Sender MSS (bytes).
    pub snd_mss: u32,
    /// Segments sent and not cumulatively acknowledged.
    pub unacked: u32,
    /// Segments SACKed.
    pub sacked: u32,
    /// Segments marked lost.
    pub lost: u32,
    /// Retransmitted segments in flight.
    pub retrans: u32,
    /// Smoothed RTT (us).
    pub rtt: u32,
    /// Slow-start threshold (segments; 0x7fffffff: infinite).
    pub snd_ssthresh: u32,
    /// Congestion window (segments).
    pub snd_cwnd: u32,
    /// Segments retransmitted over the connection.
    pub total_retrans: u32,
    /// Pacing rate (bytes/s; `u64::MAX`: none).
    pub pacing_rate: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Bytes received in order (a receiver's).
    pub bytes_received: u64,
    /// Segments sent and received.
    pub segs_out: u32,
    /// Segments received.
    pub segs_in: u32,
    /// Minimum RTT (us; `u32::MAX`: none yet).
    pub min_rtt: u32,
    /// Data segments sent (retransmissions included).
    pub data_segs_out: u32,
    /// Bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Bytes retransmitted.
    pub bytes_retrans: u64,
    /// DSACK blocks received.
    pub dsack_dups: u32,
    /// Reordering events seen.
    pub reord_seen: u32,
    /// Out-of-order packets received (a receiver's).
    pub rcv_ooopack: u32,
    /// Retransmission timeouts, SYN's included (Linux 6.7 and later).
    pub total_rto: Option<u16>,
}

/// `TCP_FIN_WAIT2`: our FIN is acknowledged.
pub const TCP_FIN_WAIT2: u8 = 5;
/// `TCP_TIME_WAIT`.
pub const TCP_TIME_WAIT: u8 = 6;
/// `TCP_CLOSE`.
pub const TCP_CLOSE: u8 = 7;
/// `TCP_CC_INFO` (include/uapi/linux/tcp.h).
const TCP_CC_INFO: i32 = 26;

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[o..o + 8]);
    u64::from_ne_bytes(x)
}

impl TcpInfo {
    /// Decodes the first `len` bytes the kernel wrote into `b`.
    pub fn decode(b: &[u8], len: usize) -> Option<TcpInfo> {
        if len < 232 {
            return None; // older than Linux 5.x: not supported
        }
        Some(TcpInfo {
            state: b[0],
            ca_state: b[1],
            rto: u32_at(b, 8),
            snd_mss: u32_at(b, 16),
            unacked: u32_at(b, 24),
            sacked: u32_at(b, 28),
            lost: u32_at(b, 32),
            retrans: u32_at(b, 36),
            rtt: u32_at(b, 68),
            snd_ssthresh: u32_at(b, 76),
            snd_cwnd: u32_at(b, 80),
            total_retrans: u32_at(b, 100),
            pacing_rate: u64_at(b, 104),
            bytes_acked: u64_at(b, 120),
            bytes_received: u64_at(b, 128),
            segs_out: u32_at(b, 136),
            segs_in: u32_at(b, 140),
            min_rtt: u32_at(b, 148),
            data_segs_out: u32_at(b, 156),
            bytes_sent: u64_at(b, 200),
            bytes_retrans: u64_at(b, 208),
            dsack_dups: u32_at(b, 216),
            reord_seen: u32_at(b, 220),
            rcv_ooopack: u32_at(b, 224),
            total_rto: (len >= 242).then(|| u16::from_ne_bytes([b[240], b[241]])),
        })
    }

    /// Reads a socket's `TCP_INFO`.
    pub fn read(fd: BorrowedFd<'_>) -> io::Result<TcpInfo> {
        let mut b = [0u8; 512];
        let len = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut b)?;
        TcpInfo::decode(&b, len).ok_or_else(|| {
            io::Error::other(format!("TCP_INFO of {len} bytes: a kernel older than 5.x"))
        })
    }

    /// The series row of a sender with this info and a receiver that
    /// delivered `delivered` bytes in order. Windows are bytes (segments
    /// times the MSS), times seconds; the kernel has no latest RTT sample
    /// (NaN).
    pub fn sample(&self, delivered: u64) -> FlowSample {
        let mss = self.snd_mss as u64;
        let seg = |n: u32| n as u64 * mss;
        let us = |v: u32| v as f64 / 1e6;
        FlowSample {
            bytes_sent: self.bytes_sent.saturating_sub(self.bytes_retrans),
            bytes_retransmitted: self.bytes_retrans,
            bytes_acked: self.bytes_acked,
            bytes_delivered: delivered,
            cwnd: seg(self.snd_cwnd) as f64,
            ssthresh: if self.snd_ssthresh >= 0x7fff_ffff {
                f64::NAN
            } else {
                seg(self.snd_ssthresh) as f64
            },
            // the kernel's packets_in_flight
            in_flight: seg((self.unacked + self.retrans).saturating_sub(self.sacked + self.lost)),
            outstanding: seg(self.unacked),
            sacked: seg(self.sacked),
            lost: seg(self.lost),
            srtt: if self.rtt == 0 {
                f64::NAN
            } else {
                us(self.rtt)
            },
            rtt: f64::NAN,
            min_rtt: if self.min_rtt == u32::MAX || self.min_rtt == 0 {
                f64::NAN
            } else {
                us(self.min_rtt)
            },
            rto: us(self.rto),
            state: self.ca_state.min(4),
            pacing_rate: if self.pacing_rate == u64::MAX || self.pacing_rate == 0 {
                f64::NAN
            } else {
                self.pacing_rate as f64 * 8.0
            },
        }
    }
}

/// BBR's variables as the kernel reports them (`struct tcp_bbr_info`), in
/// the simulator's BBR column names: `btl_bw` (bit/s), `rt_prop` (s),
/// `pacing_gain`, `cwnd_gain`.
pub const BBR_METRICS: &[&str] = &["btl_bw", "rt_prop", "pacing_gain", "cwnd_gain"];

/// Reads `TCP_CC_INFO` of a BBR socket as [`BBR_METRICS`].
pub fn bbr_metrics(fd: BorrowedFd<'_>) -> io::Result<[f64; 4]> {
    let mut b = [0u8; 64];
    let len = getsockopt_bytes(fd, libc::IPPROTO_TCP, TCP_CC_INFO, &mut b)?;
    if len < 20 {
        return Err(io::Error::other("no BBR information"));
    }
    let bw = u32_at(&b, 0) as u64 | (u32_at(&b, 4) as u64) << 32;
    Ok([
        bw as f64 * 8.0,
        u32_at(&b, 8) as f64 * 1e-6,
        u32_at(&b, 12) as f64 / 256.0,
        u32_at(&b, 16) as f64 / 256.0,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_by_offset_and_converts_to_bytes() {
        let mut b = [0u8; 248];
        b[1] = 3; // Recovery
        b[16..20].copy_from_slice(&1000u32.to_ne_bytes()); // mss
        b[24..28].copy_from_slice(&20u32.to_ne_bytes()); // unacked
        b[28..32].copy_from_slice(&5u32.to_ne_bytes()); // sacked
        b[32..36].copy_from_slice(&3u32.to_ne_bytes()); // lost
        b[36..40].copy_from_slice(&1u32.to_ne_bytes()); // retrans
        b[68..72].copy_from_slice(&25_000u32.to_ne_bytes()); // srtt 25 ms
        b[76..80].copy_from_slice(&0x7fff_ffffu32.to_ne_bytes());
        b[80..84].copy_from_slice(&10u32.to_ne_bytes());
        b[200..208].copy_from_slice(&5000u64.to_ne_bytes());
        b[208..216].copy_from_slice(&1000u64.to_ne_bytes());
        b[240..242].copy_from_slice(&2u16.to_ne_bytes());
        let i = TcpInfo::decode(&b, 248).unwrap();
        assert_eq!(i.total_rto, Some(2));
        assert_eq!(TcpInfo::decode(&b, 236).unwrap().total_rto, None);
        let s = i.sample(777);
        assert_eq!(
            (s.bytes_sent, s.bytes_retransmitted, s.bytes_delivered),
            (4000, 1000, 777)
        );
        assert_eq!((s.cwnd, s.in_flight, s.state), (10_000.0, 13_000, 3));
        assert!(s.ssthresh.is_nan() && s.rtt.is_nan());
        assert_eq!(s.srtt, 0.025);
    }
}
