//! A synthetic ACK clock for tests: plays the receiver's side of a connection
//! by hand, so a sender and its congestion-control algorithm can be driven by
//! written-out ACK sequences, without a simulator.
//!
//! ```
//! use wavelab_tcp::testing::Harness;
//! use wavelab_tcp::{CongestionControl, TcpConfig};
//!
//! let cfg = TcpConfig { mss: 1000, sack: false, ..TcpConfig::default() };
//! let mut h = Harness::new(cfg, "reno");
//! assert_eq!(h.sent().len(), 10);          // the initial window
//! h.at(200);
//! for _ in 0..3 {
//!     h.ack(0, &[]);                       // segment 0 lost: three duplicate ACKs
//! }
//! assert_eq!(h.sent(), vec![(0, true)]);   // fast retransmit
//! assert_eq!(h.tx.cc().cwnd(), 5000);      // halved
//! ```
//!
//! Sequence numbers start just below 2^32, so every test crosses the 32-bit
//! wrap. ACKs carry the same window as the SYN-ACK (65 534 bytes, advertised
//! unscaled in the SYN-ACK and as 32 767 << 1 afterwards), so they never count
//! as window updates, which RFC 5681's duplicate-ACK definition excludes.

use crate::cc::{AckEvent, CaState, CongestionControl};
use crate::config::TcpConfig;
use crate::seq::SeqNum;
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Options, SackBlock, SackBlocks, Segment};
use crate::{CcConfig, Sender, Transmit, TxKind};

/// The sender's initial sequence number.
pub const ISS: SeqNum = SeqNum(u32::MAX - 4_500);
/// The (played) receiver's initial sequence number.
pub const IRS: SeqNum = SeqNum(77);
/// Window field of the played SYN-ACK (unscaled: 65 534 bytes).
pub const SYNACK_WINDOW: u16 = 65_534;
/// Window field of the played ACKs (scaled by 1: the same 65 534 bytes).
pub const ACK_WINDOW: u16 = 32_767;

/// Every built-in algorithm with its default parameters, then every other
/// named variant of one (TCP Wave's revisions) and TCP Wave with the
/// module's duplicate-ACK rule (`dupack_train = "count"`, which closes
/// trains on duplicate ACKs): what property tests run over, so that each
/// rule set keeps the core's invariants.
pub fn every_algorithm() -> Vec<CcConfig> {
    let mut all: Vec<CcConfig> = crate::cc::ALGORITHMS
        .iter()
        .map(|name| CcConfig::named(name).expect("a listed algorithm"))
        .collect();
    for v in crate::cc::wave::Variant::NAMES.iter().skip(1) {
        let json = serde_json::json!({ "algorithm": "wave", "variant": v });
        all.push(serde_json::from_value(json).expect("a listed variant"));
    }
    let json = serde_json::json!({ "algorithm": "wave", "dupack_train": "count" });
    all.push(serde_json::from_value(json).expect("a Wave option"));
    all
}

/// `t` milliseconds after the origin.
pub fn ms(t: u64) -> Instant {
    Instant::from_nanos(t * 1_000_000)
}

/// A SYN-ACK for the harness's SYN with the given options and window field.
pub fn synack(mss: Option<u16>, window_scale: Option<u8>, sack: bool, window: u16) -> Segment {
    Segment {
        seq: IRS,
        ack: ISS + 1,
        flags: Flags::SYN.with(Flags::ACK),
        window,
        len: 0,
        options: Options {
            mss,
            window_scale,
            sack_permitted: sack,
            ..Options::default()
        },
    }
}

/// A sender connected to a hand-played receiver.
#[derive(Debug)]
pub struct Harness {
    /// The sender under test.
    pub tx: Sender,
    /// The current time.
    pub now: Instant,
}

impl Harness {
    /// A sender for algorithm `cc` (a name such as `"newreno"`) with an
    /// unlimited stream: SYN at 0, a SYN-ACK with the configured MSS, window
    /// scale 1 and SACK as configured at 100 ms.
    pub fn new(cfg: TcpConfig, cc: &str) -> Self {
        let sa = synack(Some(cfg.mss as u16), Some(1), cfg.sack, SYNACK_WINDOW);
        Self::with_synack(cfg, cc, sa)
    }

    /// As [`Harness::new`] with a given SYN-ACK.
    pub fn with_synack(cfg: TcpConfig, cc: &str, sa: Segment) -> Self {
        Self::with_stream(cfg, cc, sa, true)
    }

    /// As [`Harness::with_synack`]; `unlimited` false leaves the stream empty
    /// (write to `tx` yourself).
    pub fn with_stream(cfg: TcpConfig, cc: &str, sa: Segment, unlimited: bool) -> Self {
        let algo = CcConfig::named(cc).expect("a known algorithm");
        Self::with_algorithm(cfg, &algo, sa, unlimited)
    }

    /// A sender for `algo` with an unlimited stream, MSS `mss`, no SACK and
    /// no delayed ACKs (the played receiver ACKs every segment): the plain
    /// exchange the algorithm tests script.
    pub fn plain(algo: &CcConfig, mss: u32) -> Self {
        let cfg = TcpConfig {
            mss,
            sack: false,
            delayed_ack: None,
            ..TcpConfig::default()
        };
        let sa = synack(Some(mss as u16), Some(1), false, SYNACK_WINDOW);
        Self::with_algorithm(cfg, algo, sa, true)
    }

    /// As [`Harness::with_stream`] with an algorithm and its parameters.
    pub fn with_algorithm(cfg: TcpConfig, algo: &CcConfig, sa: Segment, unlimited: bool) -> Self {
        let cc = algo.build(cfg.mss, cfg.initial_cwnd, None, cfg.abc_limit);
        let mut tx = Sender::new(cfg, cc, ISS);
        if unlimited {
            tx.write_unlimited();
        }
        let syn = tx.poll_transmit(ms(0)).expect("the SYN");
        assert_eq!(syn.kind, TxKind::Syn);
        tx.handle_segment(ms(100), &sa);
        Harness { tx, now: ms(100) }
    }

    /// Moves the clock to `t` milliseconds.
    pub fn at(&mut self, t: u64) {
        self.now = ms(t);
    }

    /// Delivers an ACK of stream offset `off` with SACK blocks `sacks` (offsets).
    pub fn ack(&mut self, off: u64, sacks: &[(u64, u64)]) {
        self.ack_flags(off, sacks, Flags::ACK);
    }

    /// As [`Harness::ack`] with ECN-Echo set (RFC 3168 section 6.1.3).
    pub fn ack_ece(&mut self, off: u64) {
        self.ack_flags(off, &[], Flags::ACK.with(Flags::ECE));
    }

    /// As [`Harness::ack`] with the header flags `flags`.
    pub fn ack_flags(&mut self, off: u64, sacks: &[(u64, u64)], flags: Flags) {
        let base = ISS + 1;
        let mut blocks = SackBlocks::default();
        for &(s, e) in sacks {
            blocks.push(SackBlock {
                left: SeqNum::from_offset(base, s),
                right: SeqNum::from_offset(base, e),
            });
        }
        let seg = Segment {
            seq: IRS + 1,
            ack: SeqNum::from_offset(base, off),
            flags,
            window: ACK_WINDOW,
            len: 0,
            options: Options {
                sack: blocks,
                ..Options::default()
            },
        };
        self.tx.handle_segment(self.now, &seg);
    }

    /// Everything the sender transmits now (panics if it never stops).
    pub fn drain(&mut self) -> Vec<Transmit> {
        let mut out = Vec::new();
        while let Some(t) = self.tx.poll_transmit(self.now) {
            out.push(t);
            assert!(out.len() < 100_000, "poll_transmit never returns None");
        }
        out
    }

    /// Stream offsets of the data segments transmitted now, with `true` for
    /// retransmissions.
    pub fn sent(&mut self) -> Vec<(u64, bool)> {
        self.drain()
            .into_iter()
            .filter(|t| matches!(t.kind, TxKind::Data | TxKind::Retransmission))
            .map(|t| (t.offset, t.kind == TxKind::Retransmission))
            .collect()
    }

    /// The algorithm's window.
    pub fn cwnd(&self) -> u64 {
        self.tx.cc().cwnd()
    }

    /// The algorithm's slow-start threshold.
    pub fn ssthresh(&self) -> u64 {
        self.tx.cc().ssthresh()
    }
}

/// An [`AckEvent`] for driving an algorithm directly in a unit test,
/// without a sender: start from [`acked`] (or [`AckBuilder::new`]) and set
/// only the fields the test is about.
///
/// ```
/// use wavelab_tcp::testing::acked;
/// use wavelab_tcp::cc::CaState;
/// use wavelab_tcp::Duration;
///
/// let a = acked(1000, 1500).rtt(Duration::from_millis(80)).state(CaState::Loss).build();
/// assert_eq!((a.bytes_acked, a.bytes_delivered, a.mss), (1500, 1500, 1000));
/// assert_eq!(a.min_rtt, Some(Duration::from_millis(80)));
/// assert!(a.cwnd_limited && !a.dupack && !a.window_reduced);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AckBuilder(AckEvent);

/// An ACK of `bytes` new bytes (cumulatively acknowledged and delivered) for
/// an algorithm with MSS `mss`: see [`AckBuilder`].
pub fn acked(mss: u32, bytes: u64) -> AckBuilder {
    AckBuilder::new(mss).acked(bytes)
}

impl AckBuilder {
    /// An ACK that acknowledges nothing, in state Open, window-limited, with
    /// no RTT figures, nothing in flight and sequence offsets at 0.
    pub fn new(mss: u32) -> Self {
        AckBuilder(AckEvent {
            mss,
            bytes_acked: 0,
            bytes_delivered: 0,
            prior_in_flight: 0,
            in_flight: 0,
            bytes_lost: 0,
            rtt: None,
            srtt: None,
            min_rtt: None,
            state: CaState::Open,
            dupack: false,
            cwnd_limited: true,
            window_reduced: false,
            snd_una: 0,
            snd_nxt: 0,
        })
    }

    /// `bytes` newly acknowledged and newly delivered.
    pub fn acked(mut self, bytes: u64) -> Self {
        self.0.bytes_acked = bytes;
        self.0.bytes_delivered = bytes;
        self
    }

    /// `bytes` newly delivered (after [`Self::acked`], for SACKed bytes).
    pub fn delivered(mut self, bytes: u64) -> Self {
        self.0.bytes_delivered = bytes;
        self
    }

    /// Bytes in flight before and after the ACK.
    pub fn in_flight(mut self, prior: u64, after: u64) -> Self {
        self.0.prior_in_flight = prior;
        self.0.in_flight = after;
        self
    }

    /// Bytes newly marked lost.
    pub fn lost(mut self, bytes: u64) -> Self {
        self.0.bytes_lost = bytes;
        self
    }

    /// The RTT sample, with the smoothed and minimum RTT equal to it.
    pub fn rtt(self, rtt: Duration) -> Self {
        self.sample(Some(rtt)).srtt(Some(rtt)).min_rtt(Some(rtt))
    }

    /// The RTT sample alone (`None`: none taken, Karn's rule).
    pub fn sample(mut self, rtt: Option<Duration>) -> Self {
        self.0.rtt = rtt;
        self
    }

    /// The smoothed RTT.
    pub fn srtt(mut self, srtt: Option<Duration>) -> Self {
        self.0.srtt = srtt;
        self
    }

    /// The minimum RTT.
    pub fn min_rtt(mut self, min_rtt: Option<Duration>) -> Self {
        self.0.min_rtt = min_rtt;
        self
    }

    /// The recovery state.
    pub fn state(mut self, state: CaState) -> Self {
        self.0.state = state;
        self
    }

    /// Marks it a duplicate ACK.
    pub fn dupack(mut self) -> Self {
        self.0.dupack = true;
        self
    }

    /// Whether the window (true, the default) or the application limited
    /// the sender.
    pub fn cwnd_limited(mut self, limited: bool) -> Self {
        self.0.cwnd_limited = limited;
        self
    }

    /// Marks it the ACK that started a recovery.
    pub fn window_reduced(mut self) -> Self {
        self.0.window_reduced = true;
        self
    }

    /// The cumulative ACK point and the next new offset after the ACK.
    pub fn seq(mut self, snd_una: u64, snd_nxt: u64) -> Self {
        self.0.snd_una = snd_una;
        self.0.snd_nxt = snd_nxt;
        self
    }

    /// The event.
    pub fn build(self) -> AckEvent {
        self.0
    }
}

/// How many cases a property test runs: the environment variable `var` if
/// it is set (e.g. `WAVELAB_HOSTILE_CASES=5000` for one test), else
/// `default` times `WAVELAB_CASES_SCALE` (1 when unset). Every property test
/// of the workspace reads its count here, so `WAVELAB_CASES_SCALE=50 cargo
/// test --workspace` runs all of them at 50 times their CI counts.
///
/// Panics with a message naming the variable if its value is not a whole
/// number: a typo must not silently run the default.
pub fn cases(var: &str, default: u32) -> u32 {
    let read = |name: &str| {
        std::env::var(name).ok().map(|v| {
            v.trim()
                .parse::<u32>()
                .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number of cases"))
        })
    };
    read(var).unwrap_or_else(|| default.saturating_mul(read("WAVELAB_CASES_SCALE").unwrap_or(1)))
}
