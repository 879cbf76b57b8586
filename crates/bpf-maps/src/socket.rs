//! One socket's TCP Wave state, read from the program's socket storage
//! (the first 64 bytes of `struct wave` in src/bpf/wave.bpf.c).

/// What Wave knows about one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaveSocket {
    /// When the next burst is due (kernel monotonic clock, ns).
    pub next_burst_ns: u64,
    /// TxTime, microseconds.
    pub tx_time_us: u32,
    /// The current burst, segments.
    pub burst: u32,
    /// The minimum RTT, microseconds (`None` while forgotten).
    pub min_rtt_us: Option<u32>,
    /// The weighted average RTT, microseconds (`None` before the first).
    pub avg_rtt_us: Option<u32>,
    /// The largest RTT sample, microseconds.
    pub max_rtt_us: u32,
    /// The ACK-train dispersion TxTime is computed from, microseconds.
    pub dispersion_us: Option<u32>,
    /// Trains still to skip (stability counter).
    pub stability: u32,
    /// 0 tracking, 1 adjustment.
    pub mode: u32,
    /// Bursts opened on this connection.
    pub bursts: u32,
    /// ACK trains closed on this connection.
    pub trains: u32,
}

/// Bytes of `struct wave` this reads.
pub const HEADER: usize = 64;

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

impl WaveSocket {
    /// Parses the storage value; `None` if it is shorter than the header.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() < HEADER {
            return None;
        }
        let opt = |v: u32, none: u32| (v != none).then_some(v);
        Some(WaveSocket {
            next_burst_ns: u64::from_ne_bytes(b[0..8].try_into().expect("8 bytes")),
            tx_time_us: u32_at(b, 8),
            burst: u32_at(b, 12),
            min_rtt_us: opt(u32_at(b, 24), u32::MAX),
            avg_rtt_us: opt(u32_at(b, 28), 0),
            max_rtt_us: u32_at(b, 32),
            dispersion_us: opt(u32_at(b, 36), 0),
            stability: u32_at(b, 44),
            mode: u32_at(b, 48),
            bursts: u32_at(b, 52),
            trains: u32_at(b, 56),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_header_in_the_programs_layout() {
        let mut b = vec![0u8; 1856];
        b[0..8].copy_from_slice(&7u64.to_ne_bytes());
        for (off, v) in [
            (8, 20_000u32),
            (12, 10),
            (24, u32::MAX),
            (28, 56_100),
            (36, 20_000),
            (44, 2),
            (48, 1),
            (52, 9),
            (56, 8),
        ] {
            b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        }
        let s = WaveSocket::from_bytes(&b).unwrap();
        assert_eq!(s.tx_time_us, 20_000);
        assert_eq!(s.min_rtt_us, None, "forgotten");
        assert_eq!(s.avg_rtt_us, Some(56_100));
        assert_eq!((s.stability, s.mode, s.bursts, s.trains), (2, 1, 9, 8));
        assert!(WaveSocket::from_bytes(&b[..10]).is_none());
    }
}
