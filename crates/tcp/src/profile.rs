//! TCP profiles: `tcp = { profile = "linux" }` configures a flow as a stock
//! sender of a known stack would be, and any field written beside the
//! profile overrides it.
//!
//! A scenario's `tcp` table is read as a [`TcpConfigSpec`] (every field
//! optional, plus `profile`), then resolved into a [`TcpConfig`]: the
//! profile's values, with the fields the table sets. The resolved
//! configuration is what a scenario normalises to, so a profile and the
//! same fields written out are one run.

use crate::config::{
    BbrQuantum, Hystart, LostRetransmissions, PartialAckTimer, ReceiverProfile, RecoveryReduction,
    RtoRearm, RtoSsthresh, SsthreshBasis, TcpConfig, Tso,
};
use crate::rtt::RtoFlavour;
use crate::time::Duration;
use crate::units::{optional_duration, ByteSize};
use serde::{Deserialize, Deserializer, Serialize};

/// A set of defaults for the `tcp` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpProfile {
    /// The RFCs' values ([`TcpConfig::default`]): RFC 6298's RTO with a 1 s
    /// minimum, RFC 6675 SACK recovery, 200 ms delayed ACKs.
    #[default]
    Rfc,
    /// A stock Linux 6.x sender (6.18's defaults), see [`TcpProfile::config`].
    Linux,
    /// ns-3.44's TCP with its default attributes, see [`TcpProfile::config`].
    Ns3,
}

impl TcpProfile {
    /// The profile's configuration. For Linux (net/ipv4 of 6.18 and its
    /// sysctl defaults; each value is justified in docs/scenarios.md):
    ///
    /// * SACK, DSACK and timestamps on (`tcp_sack`, `tcp_dsack`,
    ///   `tcp_timestamps` = 1);
    /// * an initial window of 10 (`TCP_INIT_CWND`);
    /// * RACK-TLP loss detection (`tcp_recovery` = 1, `tcp_early_retrans` =
    ///   3): `lost_retransmissions = "rack"`, `tlp = true`, with Linux's
    ///   single transmission timer (`rto_rearm = "linux"`: the RTO from the
    ///   oldest outstanding segment's send time, `tcp_rearm_rto`);
    /// * that timer on the kernel's timer wheel at `CONFIG_HZ` = 250 (the
    ///   value of Debian's kernels and of the emulator host this profile was
    ///   checked on): `timer_hz = 250`, so a backed-off RTO fires up to 1/8
    ///   of its value late;
    /// * Linux's RTO (`rto = "linux"`) with `TCP_RTO_MIN` = 200 ms, the
    ///   initial RTO of 1 s (`TCP_TIMEOUT_INIT`) and `TCP_RTO_MAX` = 120 s;
    /// * ssthresh on a timeout as `tcp_enter_loss` decides
    ///   (`rto_ssthresh = "linux"`);
    /// * delayed ACKs of at most 40 ms (`TCP_DELACK_MIN`, where Linux's
    ///   adaptive ACK timer starts and its quick-ACK mode keeps it for a
    ///   bulk transfer's first segments), an ACK every two full segments;
    /// * limited transmit (Linux bounds the pipe, not FlightSize, before
    ///   recovery too, so each duplicate ACK releases a new segment);
    /// * no per-ACK limit on slow start (Linux counts every segment an ACK
    ///   covers since 3.8): RFC 3465's L = 64 segments stands for it;
    /// * a 6 MiB receive buffer (`tcp_rmem`'s maximum, the ceiling of
    ///   receive autotuning);
    /// * PRR in fast recovery (`tcp_cwnd_reduction`), ssthresh from cwnd
    ///   (`tcp_reno_ssthresh`; CUBIC's beta x cwnd is its own rule);
    /// * F-RTO (`tcp_frto` = 2) and the undo of spurious reductions by DSACK
    ///   and timestamps (`tcp_try_undo_recovery`, `tcp_try_undo_loss`,
    ///   `tcp_try_undo_dsack`);
    /// * CUBIC's classic HyStart (`tcp_cubic.c`: `hystart` = 1, both
    ///   detectors);
    /// * no slow-start limit after a timeout either (`tcp_slow_start`);
    /// * Linux's receiver: quick ACKs at the start and after idle, the
    ///   adaptive ACK timer between `TCP_ATO_MIN` (40 ms) and
    ///   `TCP_DELACK_MAX` (200 ms);
    /// * BBR's window and in-flight targets with Linux's quantization budget
    ///   (`bbr_quantum = "linux"`, `bbr_quantization_budget`).
    ///
    /// Not in it: Linux's TSO bursts of a paced flow (`tso = "linux"`), which
    /// moved the DCNET handover cells from 8 Mbit/s to 2 Mbit/s away from
    /// the kernel's (docs/validation.md).
    ///
    /// For ns-3.44 (the attributes' defaults in `tcp-socket.cc`,
    /// `tcp-socket-base.cc`, `tcp-l4-protocol.cc`, `tcp-cubic.cc`):
    ///
    /// * SACK and timestamps on, no DSACK (the receiver sends none);
    /// * `SegmentSize` 536 bytes, `InitialCwnd` 10, `ReTxThreshold` 3,
    ///   `LimitedTransmit` on;
    /// * RFC 6298's RTO with `MinRto` 1 s, an initial estimate of 1 s and
    ///   a 60 s cap; ssthresh recomputed on every timeout from the pipe
    ///   (`rto_ssthresh = "ns3"`);
    /// * `DelAckTimeout` 200 ms, `DelAckCount` 2; `RcvBufSize` 128 KiB;
    /// * `RecoveryType` `TcpPrrRecovery` (PRR), and ssthresh from the pipe
    ///   (`TcpNewReno::GetSsThresh` halves `BytesInFlight`);
    /// * slow start counts every acknowledged segment, also after a timeout
    ///   (the default `SocketType` is `TcpCubic`, whose `IncreaseWindow`
    ///   adds `segmentsAcked` segments; `TcpLinuxReno` does the same), with
    ///   `TcpCubic`'s `HyStart` (ns-3's thresholds);
    /// * no F-RTO, no undo, no RACK or tail loss probe; timers fire at their
    ///   deadline (ns-3's scheduler, `timer_hz = 0`);
    /// * a paced flow sends one packet per pacing interval (`tso = "none"`:
    ///   ns-3's `TcpSocketBase` has no segmentation offload).
    pub fn config(self) -> TcpConfig {
        match self {
            TcpProfile::Rfc => TcpConfig::default(),
            TcpProfile::Linux => TcpConfig {
                sack: true,
                dsack: true,
                timestamps: true,
                initial_cwnd: 10,
                lost_retransmissions: LostRetransmissions::Rack,
                tlp: true,
                rto_rearm: RtoRearm::Linux,
                timer_hz: 250,
                rto: RtoFlavour::Linux,
                min_rto: Duration::from_millis(200),
                initial_rto: Duration::from_secs(1),
                max_rto: Duration::from_secs(120),
                rto_ssthresh: RtoSsthresh::Linux,
                delayed_ack: Some(Duration::from_millis(200)),
                limited_transmit: true,
                abc_limit: 64,
                rcv_window: ByteSize(6 << 20),
                recovery_reduction: RecoveryReduction::Prr,
                ssthresh_basis: SsthreshBasis::Cwnd,
                frto: true,
                undo: true,
                hystart: Hystart::Linux,
                abc_limit_after_rto: 64,
                ca_per_ack: false,
                receiver: ReceiverProfile::Linux,
                bbr_quantum: BbrQuantum::Linux,
                ..TcpConfig::default()
            },
            TcpProfile::Ns3 => TcpConfig {
                mss: 536,
                initial_cwnd: 10,
                initial_ssthresh: None,
                sack: true,
                dsack: false,
                timestamps: true,
                dupthresh: 3,
                limited_transmit: true,
                initial_rto: Duration::from_secs(1),
                min_rto: Duration::from_secs(1),
                max_rto: Duration::from_secs(60),
                rto: RtoFlavour::Rfc6298,
                rto_ssthresh: RtoSsthresh::Ns3,
                delayed_ack: Some(Duration::from_millis(200)),
                rcv_window: ByteSize(128 << 10),
                abc_limit: 64,
                partial_ack_timer: PartialAckTimer::Impatient,
                lost_retransmissions: LostRetransmissions::Rto,
                tlp: false,
                rto_rearm: RtoRearm::Rfc8985,
                timer_hz: 0,
                recovery_reduction: RecoveryReduction::Prr,
                ssthresh_basis: SsthreshBasis::Pipe,
                frto: false,
                undo: false,
                hystart: Hystart::Ns3,
                abc_limit_after_rto: 64,
                ca_per_ack: false,
                receiver: ReceiverProfile::Rfc,
                bbr_quantum: BbrQuantum::None,
                tso: Tso::None,
                ecn: false,
            },
        }
    }
}

/// A scenario's `tcp` table as written: a profile and the fields that
/// override it (see [`TcpConfig`] for each field's meaning).
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "TCP settings such as { mss = 1460, sack = true } or { profile = \"linux\" }"
)]
pub(crate) struct TcpConfigSpec {
    /// The defaults the other fields override (`"rfc"` unless given).
    #[serde(default)]
    profile: TcpProfile,
    #[serde(default)]
    mss: Option<u32>,
    #[serde(default)]
    initial_cwnd: Option<u32>,
    #[serde(default)]
    initial_ssthresh: Option<ByteSize>,
    #[serde(default)]
    sack: Option<bool>,
    #[serde(default)]
    dsack: Option<bool>,
    #[serde(default)]
    timestamps: Option<bool>,
    #[serde(default)]
    dupthresh: Option<u32>,
    #[serde(default)]
    limited_transmit: Option<bool>,
    #[serde(default)]
    initial_rto: Option<Duration>,
    #[serde(default)]
    min_rto: Option<Duration>,
    #[serde(default)]
    max_rto: Option<Duration>,
    #[serde(default)]
    rto: Option<RtoFlavour>,
    #[serde(default)]
    rto_ssthresh: Option<RtoSsthresh>,
    #[serde(default, deserialize_with = "some_delay")]
    delayed_ack: Option<Option<Duration>>,
    #[serde(default)]
    rcv_window: Option<ByteSize>,
    #[serde(default)]
    abc_limit: Option<u32>,
    #[serde(default)]
    partial_ack_timer: Option<PartialAckTimer>,
    #[serde(default)]
    lost_retransmissions: Option<LostRetransmissions>,
    #[serde(default)]
    tlp: Option<bool>,
    #[serde(default)]
    rto_rearm: Option<RtoRearm>,
    #[serde(default)]
    timer_hz: Option<u32>,
    #[serde(default)]
    recovery_reduction: Option<RecoveryReduction>,
    #[serde(default)]
    ssthresh_basis: Option<SsthreshBasis>,
    #[serde(default)]
    frto: Option<bool>,
    #[serde(default)]
    undo: Option<bool>,
    #[serde(default)]
    hystart: Option<Hystart>,
    #[serde(default)]
    abc_limit_after_rto: Option<u32>,
    #[serde(default)]
    ca_per_ack: Option<bool>,
    #[serde(default)]
    receiver: Option<ReceiverProfile>,
    #[serde(default)]
    bbr_quantum: Option<BbrQuantum>,
    #[serde(default)]
    tso: Option<Tso>,
    #[serde(default)]
    ecn: Option<bool>,
}

/// `delayed_ack` as written (`false`, `true` or a duration), present.
fn some_delay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Duration>>, D::Error> {
    optional_duration::deserialize(d).map(Some)
}

impl From<TcpConfigSpec> for TcpConfig {
    fn from(s: TcpConfigSpec) -> Self {
        let mut c = s.profile.config();
        macro_rules! written {
            ($($field:ident),*) => {
                $(if let Some(v) = s.$field { c.$field = v; })*
            };
        }
        written!(
            mss,
            initial_cwnd,
            sack,
            dsack,
            timestamps,
            dupthresh,
            limited_transmit,
            initial_rto,
            min_rto,
            max_rto,
            rto,
            rto_ssthresh,
            delayed_ack,
            rcv_window,
            abc_limit,
            partial_ack_timer,
            lost_retransmissions,
            tlp,
            rto_rearm,
            timer_hz,
            recovery_reduction,
            ssthresh_basis,
            frto,
            undo,
            hystart,
            abc_limit_after_rto,
            ca_per_ack,
            receiver,
            bbr_quantum,
            tso,
            ecn
        );
        if let Some(v) = s.initial_ssthresh {
            c.initial_ssthresh = Some(v);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> TcpConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_linux_profile_is_valid_and_fields_beside_it_override_it() {
        let linux = parse(r#"{"profile": "linux"}"#);
        linux.validate().unwrap();
        assert_eq!(linux, TcpProfile::Linux.config());
        assert!(linux.timestamps && linux.tlp);
        assert_eq!(linux.rto, RtoFlavour::Linux);
        assert_eq!(linux.delayed_ack, Some(Duration::from_millis(200)));
        assert_eq!(linux.receiver, ReceiverProfile::Linux);
        let mine = parse(r#"{"profile": "linux", "min_rto": "1s", "delayed_ack": false}"#);
        assert_eq!(mine.min_rto, Duration::from_secs(1));
        assert_eq!(mine.delayed_ack, None);
        assert_eq!(mine.rto, RtoFlavour::Linux, "the rest stays Linux's");
        // no profile: the RFC defaults, as before
        assert_eq!(parse("{}"), TcpConfig::default());
        assert_eq!(parse(r#"{"profile": "rfc"}"#), TcpConfig::default());
    }

    #[test]
    fn the_ns3_profile_is_valid_and_sets_ns3_defaults() {
        let ns3 = parse(r#"{"profile": "ns3"}"#);
        ns3.validate().unwrap();
        assert_eq!(ns3, TcpProfile::Ns3.config());
        assert_eq!(
            (ns3.mss, ns3.dsack, ns3.min_rto),
            (536, false, Duration::from_secs(1))
        );
        assert_eq!(ns3.rto_ssthresh, RtoSsthresh::Ns3);
        assert_eq!(ns3.hystart, Hystart::Ns3);
        let mine = parse(r#"{"profile": "ns3", "ca_per_ack": true, "mss": 1448}"#);
        assert!(mine.ca_per_ack);
        assert_eq!(mine.mss, 1448);
    }

    #[test]
    fn a_resolved_profile_serialises_to_its_fields_and_reads_back_the_same() {
        for profile in [TcpProfile::Rfc, TcpProfile::Linux, TcpProfile::Ns3] {
            let c = profile.config();
            let json = serde_json::to_string(&c).unwrap();
            assert!(!json.contains("profile"), "{json}");
            assert_eq!(parse(&json), c);
        }
    }

    #[test]
    fn a_bad_profile_or_field_is_named() {
        let e = serde_json::from_str::<TcpConfig>(r#"{"profile": "bsd"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `bsd`"), "{e}");
        assert!(e.to_string().contains("`linux`"), "{e}");
        let e = serde_json::from_str::<TcpConfig>(r#"{"profil": "linux"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `profil`"), "{e}");
    }
}
