//! One socket's TCP Wave state, read from the program's socket storage
//! (the first 64 bytes of `struct wave` in src/bpf/wave.bpf.c), and the
//! bursts it opened last (its ring of `struct burst`).

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

/// Bytes of `struct wave` before its ring of bursts.
pub const HEADER: usize = 64;
/// Bursts the ring holds (`NB` in the program).
pub const RING: usize = 32;
/// Bytes of one `struct burst`.
const BURST_BYTES: usize = 56;

/// One burst the program opened, as its ring records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BurstRecord {
    /// When it opened (`bpf_ktime_get_ns()`: the kernel's monotonic clock,
    /// ns), which is when the stack sent its first segment.
    pub opened_ns: u64,
    /// The sequence number of its first byte (the kernel's, absolute).
    pub start: u32,
    /// The segments it may send.
    pub segments: u32,
    /// The TxTime it opened with, microseconds: the next burst was due
    /// that long after it.
    pub tx_time_us: u32,
}

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

    /// The bursts in the ring of storage value `b`, oldest first: the last
    /// 31 opened (the oldest slot is left out: the program may be writing
    /// it while the value is copied). Empty if `b` is too short.
    pub fn recent_bursts(b: &[u8]) -> Vec<BurstRecord> {
        if b.len() < HEADER + RING * BURST_BYTES {
            return Vec::new();
        }
        let opened = u32_at(b, 52) as usize;
        let n = opened.min(RING - 1);
        (opened - n..opened)
            .map(|k| {
                let off = HEADER + (k % RING) * BURST_BYTES;
                BurstRecord {
                    opened_ns: u64::from_ne_bytes(b[off..off + 8].try_into().expect("8 bytes")),
                    start: u32_at(b, off + 24),
                    segments: u32_at(b, off + 32),
                    tx_time_us: u32_at(b, off + 52),
                }
            })
            .collect()
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

    /// A ring in which 33 bursts were opened: slot k holds burst 32 + k
    /// for k = 0 and burst k otherwise.
    #[test]
    fn reads_the_ring_oldest_first_without_the_slot_being_written() {
        let mut b = vec![0u8; HEADER + RING * BURST_BYTES];
        b[52..56].copy_from_slice(&33u32.to_ne_bytes());
        for burst in 1..33u64 {
            let off = HEADER + (burst as usize % RING) * BURST_BYTES;
            b[off..off + 8].copy_from_slice(&(burst * 1000).to_ne_bytes());
            b[off + 24..off + 28].copy_from_slice(&(burst as u32 * 14_480).to_ne_bytes());
            b[off + 32..off + 36].copy_from_slice(&10u32.to_ne_bytes());
            b[off + 52..off + 56].copy_from_slice(&12_000u32.to_ne_bytes());
        }
        let r = WaveSocket::recent_bursts(&b);
        assert_eq!(r.len(), 31);
        assert_eq!(r[0].opened_ns, 2000, "burst 1, the oldest, is left out");
        assert_eq!(r[30].opened_ns, 32_000);
        assert_eq!((r[30].start, r[30].segments), (32 * 14_480, 10));
        assert_eq!(r[30].tx_time_us, 12_000);
        assert!(r.windows(2).all(|w| w[0].opened_ns < w[1].opened_ns));
        b[52..56].copy_from_slice(&3u32.to_ne_bytes());
        assert_eq!(
            WaveSocket::recent_bursts(&b).len(),
            3,
            "fewer than the ring"
        );
        assert!(WaveSocket::recent_bursts(&b[..HEADER]).is_empty());
    }
}
