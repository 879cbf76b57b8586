//! TCP segments as they travel on the wire: sequence and acknowledgment numbers,
//! flags, the 16-bit window field, and the options wavelab uses (MSS, window
//! scale, SACK-permitted, SACK blocks, timestamps), and the IP header's ECN
//! field ([`Ecn`]) that travels beside a segment.
//!
//! A [`Segment`] holds exactly what a TCP header holds, plus the payload length;
//! the payload bytes themselves travel beside it (see [`crate::Sender::payload`]).
//! [`Segment::encode`] and [`Segment::decode`] convert to and from the real header
//! layout (RFC 793, RFC 7323, RFC 2018) so that a real-network driver or a pcap
//! writer can put a segment on the wire unchanged.

use crate::seq::SeqNum;
use core::fmt;

/// TCP header flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u8);

impl Flags {
    /// No more data from sender.
    pub const FIN: Flags = Flags(0x01);
    /// Synchronise sequence numbers.
    pub const SYN: Flags = Flags(0x02);
    /// Reset the connection.
    pub const RST: Flags = Flags(0x04);
    /// Push function.
    pub const PSH: Flags = Flags(0x08);
    /// Acknowledgment field significant.
    pub const ACK: Flags = Flags(0x10);
    /// ECN echo.
    pub const ECE: Flags = Flags(0x40);
    /// Congestion window reduced.
    pub const CWR: Flags = Flags(0x80);

    /// True if every flag in `other` is set in `self`.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// The union of two flag sets.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Flags::SYN, "S"),
            (Flags::FIN, "F"),
            (Flags::RST, "R"),
            (Flags::PSH, "P"),
            (Flags::ACK, "."),
            (Flags::ECE, "E"),
            (Flags::CWR, "W"),
        ];
        for (flag, name) in names {
            if self.contains(flag) {
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// The ECN field of an IP header (RFC 3168 section 5: two bits, ECT(1) is
/// 01, ECT(0) 10, CE 11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-Capable Transport (00).
    #[default]
    NotEct = 0b00,
    /// ECN-Capable Transport, codepoint 1 (01): the L4S identifier (RFC
    /// 9331).
    Ect1 = 0b01,
    /// ECN-Capable Transport, codepoint 0 (10): classic ECN.
    Ect0 = 0b10,
    /// Congestion Experienced (11).
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint of the two low bits of `bits`.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// True for ECT(0), ECT(1) and CE: a queue may signal congestion on the
    /// packet by (re)setting CE instead of dropping it. A Not-ECT packet is
    /// never marked: it is dropped (RFC 3168 section 5).
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    /// True for ECT(1) and CE, the packets DualPI2 classifies into its L4S
    /// queue (RFC 9331 section 5.1).
    pub const fn is_l4s(self) -> bool {
        self.bits() & 1 == 1
    }

    /// The codepoint's name as tshark writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "not-ect",
            Ecn::Ect1 => "ect1",
            Ecn::Ect0 => "ect0",
            Ecn::Ce => "ce",
        }
    }
}

/// One SACK block: the half-open range `[left, right)` of sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    /// First sequence number of the block.
    pub left: SeqNum,
    /// Sequence number just past the block.
    pub right: SeqNum,
}

/// Up to four SACK blocks, in the order the receiver put them (RFC 2018: the
/// first block reports the most recently received data, or a DSACK per RFC 2883).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlocks {
    blocks: [SackBlock; 4],
    len: u8,
}

impl SackBlocks {
    /// The largest number of blocks that fit in a header.
    pub const MAX: usize = 4;

    /// Appends a block; returns false (and keeps the list unchanged) if full.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = b;
            self.len += 1;
            true
        } else {
            false
        }
    }
    /// The blocks present.
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// True if there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Drops blocks past the first `n`.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
}

/// The RFC 7323 timestamps option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Timestamps {
    /// TSval: the sender's timestamp clock.
    pub val: u32,
    /// TSecr: the echoed timestamp.
    pub ecr: u32,
}

/// The TCP options wavelab understands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Maximum segment size (SYN only).
    pub mss: Option<u16>,
    /// Window scale shift (SYN only, RFC 7323).
    pub window_scale: Option<u8>,
    /// SACK permitted (SYN only, RFC 2018).
    pub sack_permitted: bool,
    /// Timestamps (RFC 7323).
    pub timestamps: Option<Timestamps>,
    /// SACK blocks (RFC 2018 / RFC 2883).
    pub sack: SackBlocks,
}

impl Options {
    /// Bytes the options occupy in the header, padded to a multiple of 4, laid out
    /// as Linux lays them out (NOPs for alignment).
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        n += match (self.sack_permitted, self.timestamps.is_some()) {
            (_, true) => 12,
            (true, false) => 4,
            (false, false) => 0,
        };
        if self.window_scale.is_some() {
            n += 4;
        }
        if !self.sack.is_empty() {
            n += 4 + 8 * self.sack.len();
        }
        n
    }
}

/// A TCP segment: the header fields plus the payload length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN/FIN).
    pub seq: SeqNum,
    /// Acknowledgment number (valid when [`Flags::ACK`] is set).
    pub ack: SeqNum,
    /// Header flags.
    pub flags: Flags,
    /// The raw 16-bit window field (scaled by the negotiated shift).
    pub window: u16,
    /// Payload length in bytes.
    pub len: u32,
    /// Options.
    pub options: Options,
}

/// Size of the IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Size of the TCP header without options.
pub const TCP_HEADER_LEN: usize = 20;
/// Largest option space in a TCP header.
pub const MAX_OPTIONS_LEN: usize = 40;

/// Errors from [`Segment::decode`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the header needs.
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// The data offset field is below 5 words or beyond the buffer.
    BadDataOffset(u8),
    /// The options need more than the 40 bytes a header has.
    OptionsTooLong(usize),
    /// An option has an impossible length.
    BadOption {
        /// Option kind.
        kind: u8,
        /// Its length byte.
        len: u8,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { need, have } => {
                write!(f, "truncated TCP header: need {need} bytes, have {have}")
            }
            WireError::BadDataOffset(o) => write!(f, "bad TCP data offset {o}"),
            WireError::OptionsTooLong(n) => {
                write!(f, "TCP options of {n} bytes exceed the 40-byte limit")
            }
            WireError::BadOption { kind, len } => {
                write!(f, "bad TCP option kind {kind} with length {len}")
            }
        }
    }
}
impl std::error::Error for WireError {}

impl Segment {
    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u32 {
        self.len + self.flags.contains(Flags::SYN) as u32 + self.flags.contains(Flags::FIN) as u32
    }
    /// TCP header length including options.
    pub fn header_len(&self) -> usize {
        TCP_HEADER_LEN + self.options.encoded_len()
    }
    /// Size of the IPv4 packet carrying this segment (what a link serialises).
    pub fn ip_len(&self) -> usize {
        IPV4_HEADER_LEN + self.header_len() + self.len as usize
    }

    /// Appends the TCP header (with options, checksum zero) to `out`. Fails,
    /// writing nothing, if the options do not fit in the 40 bytes a header has.
    pub fn encode(&self, src_port: u16, dst_port: u16, out: &mut Vec<u8>) -> Result<(), WireError> {
        let options = self.options.encoded_len();
        if options > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong(options));
        }
        let start = out.len();
        let hlen = self.header_len();
        out.extend_from_slice(&src_port.to_be_bytes());
        out.extend_from_slice(&dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.0.to_be_bytes());
        out.extend_from_slice(&self.ack.0.to_be_bytes());
        out.push(((hlen / 4) as u8) << 4);
        out.push(self.flags.0);
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        let o = &self.options;
        if let Some(mss) = o.mss {
            out.extend_from_slice(&[2, 4]);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        match (o.sack_permitted, o.timestamps) {
            (true, Some(ts)) => {
                out.extend_from_slice(&[4, 2, 8, 10]);
                out.extend_from_slice(&ts.val.to_be_bytes());
                out.extend_from_slice(&ts.ecr.to_be_bytes());
            }
            (false, Some(ts)) => {
                out.extend_from_slice(&[1, 1, 8, 10]);
                out.extend_from_slice(&ts.val.to_be_bytes());
                out.extend_from_slice(&ts.ecr.to_be_bytes());
            }
            (true, None) => out.extend_from_slice(&[1, 1, 4, 2]),
            (false, None) => {}
        }
        if let Some(ws) = o.window_scale {
            out.extend_from_slice(&[1, 3, 3, ws]);
        }
        if !o.sack.is_empty() {
            out.extend_from_slice(&[1, 1, 5, (2 + 8 * o.sack.len()) as u8]);
            for b in o.sack.as_slice() {
                out.extend_from_slice(&b.left.0.to_be_bytes());
                out.extend_from_slice(&b.right.0.to_be_bytes());
            }
        }
        debug_assert_eq!(out.len() - start, hlen);
        Ok(())
    }

    /// Parses a TCP header from the start of `buf`. Returns the source and
    /// destination ports, the segment (its `len` is the bytes after the header) and
    /// the header length. Unknown options are skipped; malformed ones are errors.
    pub fn decode(buf: &[u8]) -> Result<(u16, u16, Segment, usize), WireError> {
        if buf.len() < TCP_HEADER_LEN {
            return Err(WireError::Truncated {
                need: TCP_HEADER_LEN,
                have: buf.len(),
            });
        }
        let be16 = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
        let be32 = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let offset_words = buf[12] >> 4;
        let hlen = offset_words as usize * 4;
        if hlen < TCP_HEADER_LEN {
            return Err(WireError::BadDataOffset(offset_words));
        }
        if hlen > buf.len() {
            return Err(WireError::Truncated {
                need: hlen,
                have: buf.len(),
            });
        }
        let mut seg = Segment {
            seq: SeqNum(be32(4)),
            ack: SeqNum(be32(8)),
            flags: Flags(buf[13]),
            window: be16(14),
            len: (buf.len() - hlen) as u32,
            options: Options::default(),
        };
        let mut i = TCP_HEADER_LEN;
        while i < hlen {
            let kind = buf[i];
            match kind {
                0 => break,
                1 => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            if i + 1 >= hlen {
                return Err(WireError::BadOption { kind, len: 0 });
            }
            let len = buf[i + 1];
            if len < 2 || i + len as usize > hlen {
                return Err(WireError::BadOption { kind, len });
            }
            let body = i + 2;
            let bad = WireError::BadOption { kind, len };
            match kind {
                2 if len == 4 => seg.options.mss = Some(be16(body)),
                3 if len == 3 => seg.options.window_scale = Some(buf[body]),
                4 if len == 2 => seg.options.sack_permitted = true,
                5 if len >= 10 && (len - 2) % 8 == 0 => {
                    for k in 0..((len as usize - 2) / 8) {
                        let at = body + 8 * k;
                        seg.options.sack.push(SackBlock {
                            left: SeqNum(be32(at)),
                            right: SeqNum(be32(at + 4)),
                        });
                    }
                }
                8 if len == 10 => {
                    seg.options.timestamps = Some(Timestamps {
                        val: be32(body),
                        ecr: be32(body + 4),
                    })
                }
                2..=5 | 8 => return Err(bad),
                _ => {}
            }
            i += len as usize;
        }
        Ok((be16(0), be16(2), seg, hlen))
    }
}

/// The TCP checksum over an IPv4 pseudo-header and the TCP header plus payload
/// (`tcp` must hold the whole segment with its checksum field zeroed).
pub fn tcp_checksum_ipv4(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        let mut chunks = bytes.chunks_exact(2);
        for c in &mut chunks {
            sum += u16::from_be_bytes([c[0], c[1]]) as u32;
        }
        if let [last] = chunks.remainder() {
            sum += (*last as u32) << 8;
        }
    };
    add(&src);
    add(&dst);
    add(&[0, 6]);
    add(&(tcp.len() as u16).to_be_bytes());
    add(tcp);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] seq={} ack={} win={} len={}",
            self.flags, self.seq, self.ack, self.window, self.len
        )?;
        for b in self.options.sack.as_slice() {
            write!(f, " sack={}-{}", b.left, b.right)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Segment {
        let mut sack = SackBlocks::default();
        sack.push(SackBlock {
            left: SeqNum(100),
            right: SeqNum(200),
        });
        sack.push(SackBlock {
            left: SeqNum(300),
            right: SeqNum(400),
        });
        Segment {
            seq: SeqNum(7),
            ack: SeqNum(u32::MAX),
            flags: Flags::ACK,
            window: 512,
            len: 0,
            options: Options {
                timestamps: Some(Timestamps { val: 1, ecr: 2 }),
                sack,
                ..Options::default()
            },
        }
    }

    #[test]
    fn header_sizes_match_linux_layout() {
        let mut s = Segment::default();
        assert_eq!(s.header_len(), 20);
        s.options.timestamps = Some(Timestamps::default());
        assert_eq!(s.header_len(), 32);
        s.options.sack.push(SackBlock::default());
        s.options.sack.push(SackBlock::default());
        s.options.sack.push(SackBlock::default());
        assert_eq!(s.header_len(), 60);
        let syn = Segment {
            flags: Flags::SYN,
            options: Options {
                mss: Some(1460),
                window_scale: Some(7),
                sack_permitted: true,
                timestamps: Some(Timestamps::default()),
                ..Options::default()
            },
            ..Segment::default()
        };
        assert_eq!(syn.header_len(), 40);
        assert_eq!(syn.seq_len(), 1);
    }

    #[test]
    fn encode_decode_roundtrip() {
        let s = sample();
        let mut buf = Vec::new();
        s.encode(1234, 80, &mut buf).unwrap();
        assert_eq!(buf.len(), s.header_len());
        let (sp, dp, d, h) = Segment::decode(&buf).unwrap();
        assert_eq!((sp, dp, h), (1234, 80, buf.len()));
        assert_eq!(d, s);
    }

    #[test]
    fn checksum_verifies_to_zero() {
        let s = sample();
        let mut buf = Vec::new();
        s.encode(1, 2, &mut buf).unwrap();
        buf.extend_from_slice(b"hello");
        let c = tcp_checksum_ipv4([10, 0, 0, 1], [10, 0, 0, 2], &buf);
        buf[16..18].copy_from_slice(&c.to_be_bytes());
        assert_eq!(tcp_checksum_ipv4([10, 0, 0, 1], [10, 0, 0, 2], &buf), 0);
    }

    #[test]
    fn malformed_options_are_errors() {
        let mut buf = Vec::new();
        Segment::default().encode(1, 2, &mut buf).unwrap();
        buf[12] = 6 << 4;
        buf.extend_from_slice(&[2, 9, 0, 0]); // MSS with length 9
        assert!(matches!(
            Segment::decode(&buf),
            Err(WireError::BadOption { kind: 2, len: 9 })
        ));
        assert!(matches!(
            Segment::decode(&buf[..10]),
            Err(WireError::Truncated { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::testing::cases("WAVELAB_WIRE_CASES", 256),
            ..ProptestConfig::default()
        })]

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = Segment::decode(&bytes);
        }

        #[test]
        fn roundtrip_any(seq in any::<u32>(), ack in any::<u32>(), flags in any::<u8>(), win in any::<u16>(),
                         mss in proptest::option::of(any::<u16>()), ws in proptest::option::of(0u8..15),
                         sp in any::<bool>(), ts in proptest::option::of((any::<u32>(), any::<u32>())),
                         blocks in proptest::collection::vec((any::<u32>(), any::<u32>()), 0..3)) {
            let mut sack = SackBlocks::default();
            for (l, r) in blocks { sack.push(SackBlock { left: SeqNum(l), right: SeqNum(r) }); }
            let s = Segment { seq: SeqNum(seq), ack: SeqNum(ack), flags: Flags(flags), window: win, len: 0,
                options: Options { mss, window_scale: ws, sack_permitted: sp,
                    timestamps: ts.map(|(val, ecr)| Timestamps { val, ecr }), sack } };
            let mut buf = Vec::new();
            if s.options.encoded_len() > MAX_OPTIONS_LEN {
                prop_assert_eq!(s.encode(9, 10, &mut buf), Err(WireError::OptionsTooLong(s.options.encoded_len())));
                prop_assert!(buf.is_empty());
                return Ok(());
            }
            s.encode(9, 10, &mut buf).unwrap();
            let (_, _, d, _) = Segment::decode(&buf).unwrap();
            prop_assert_eq!(d, s);
        }
    }
}
