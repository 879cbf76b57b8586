//! TCP profiles: `tcp = { profile = "linux" }` configures a flow as a stock
//! sender of a known stack would be, and any field written beside the
//! profile overrides it.
//!
//! A scenario's `tcp` table is read as a [`TcpConfigSpec`] (every field
//! optional, plus `profile`), then resolved into a [`TcpConfig`]: the
//! profile's values, with the fields the table sets. The resolved
//! configuration is what a scenario normalises to, so a profile and the
//! same fields written out are one run.

use crate::config::{LostRetransmissions, PartialAckTimer, RtoSsthresh, TcpConfig};
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
}

impl TcpProfile {
    /// The profile's configuration. For Linux (net/ipv4 of 6.18 and its
    /// sysctl defaults; each value is justified in docs/scenarios.md):
    ///
    /// * SACK, DSACK and timestamps on (`tcp_sack`, `tcp_dsack`,
    ///   `tcp_timestamps` = 1);
    /// * an initial window of 10 (`TCP_INIT_CWND`);
    /// * RACK-TLP loss detection (`tcp_recovery` = 1, `tcp_early_retrans` =
    ///   3): `lost_retransmissions = "rack"`, `tlp = true`;
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
    ///   receive autotuning).
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
                rto: RtoFlavour::Linux,
                min_rto: Duration::from_millis(200),
                initial_rto: Duration::from_secs(1),
                max_rto: Duration::from_secs(120),
                rto_ssthresh: RtoSsthresh::Linux,
                delayed_ack: Some(Duration::from_millis(40)),
                limited_transmit: true,
                abc_limit: 64,
                rcv_window: ByteSize(6 << 20),
                ..TcpConfig::default()
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
            tlp
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
        assert_eq!(linux.delayed_ack, Some(Duration::from_millis(40)));
        let mine = parse(r#"{"profile": "linux", "min_rto": "1s", "delayed_ack": false}"#);
        assert_eq!(mine.min_rto, Duration::from_secs(1));
        assert_eq!(mine.delayed_ack, None);
        assert_eq!(mine.rto, RtoFlavour::Linux, "the rest stays Linux's");
        // no profile: the RFC defaults, as before
        assert_eq!(parse("{}"), TcpConfig::default());
        assert_eq!(parse(r#"{"profile": "rfc"}"#), TcpConfig::default());
    }

    #[test]
    fn a_resolved_profile_serialises_to_its_fields_and_reads_back_the_same() {
        let linux = TcpProfile::Linux.config();
        let json = serde_json::to_string(&linux).unwrap();
        assert!(!json.contains("profile"), "{json}");
        assert_eq!(parse(&json), linux);
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
