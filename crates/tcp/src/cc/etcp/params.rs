//! ETCP's parameters: the choices where MobiWac 2009 defers to its
//! references [6, 7, 9] (the licentiate thesis, the WiMob 2008 reordering
//! paper and the IJCNDS 2008 article), written down and made settable.
//! docs/algorithms/etcp.md gives the reasons for each default.

use serde::{Deserialize, Serialize};

/// Which of the paper's two forms of the "flight too large for the new
/// link" rule decides the window reduction at a handoff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReductionRule {
    /// Figure 1 (section 3.2): reduce when FlightSize exceeds 1.5 x BDP_new / N
    /// if the old link is at least 8 times faster than the new one, and
    /// 2 x BDP_new / N otherwise.
    #[default]
    Figure1,
    /// Figure 3 (section 3.4, after [7]): reduce when FlightSize exceeds
    /// 2 x BDP_new / N, the BDP decreases and the new link is less than 8
    /// times faster than the old one (a much faster new link is left to the
    /// reordering defence).
    Figure3,
}

/// ETCP's parameters (`cc = { algorithm = "etcpv1", ... }`; ETCPv0 takes the
/// same). Defaults are the study's; every field is optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EtcpParams {
    /// Section 3.1's minimum RTO from the new access link: at a handoff the
    /// RTO floor becomes `minrto_factor` times the sum of twice the new
    /// link's one-way delay and the time it takes to send one 1500-byte
    /// packet on it, never below the connection's `min_rto` (default 2: room
    /// for the round trip of the access link and a full BDP-sized buffer on
    /// it). 0 leaves the floor alone.
    pub minrto_factor: f64,
    /// Section 3.5: the RTT variables are initialised afresh when the old
    /// and the new RTT differ by this factor or more (default 2, the
    /// paper's "factor of two").
    pub delay_change: f64,
    /// Which rule reduces the window at a handoff (default Figure 1).
    pub reduction: ReductionRule,
    /// Figure 3's reordering defence (default on).
    pub reordering: bool,
    /// Whether the DSACK undo also ends the reordering defence (dupthresh
    /// back to 3) at once. Figure 3 as the text rendering flattens it lists
    /// "Reset dupthresh to 3" under the DSACK rule; section 3.4's prose
    /// keeps the defence "until all the segments transmitted before the
    /// handoff are acknowledged or the number of dupacks exceeds the
    /// dupthresh". Default false (the prose): the DSACK undo sets the window
    /// and the defence lasts until everything sent before the handoff is
    /// acknowledged, so the old link's later segments, still on their way
    /// when the first one's DSACK arrives, are not taken for lost.
    pub dsack_ends_defence: bool,
}

impl Default for EtcpParams {
    fn default() -> Self {
        EtcpParams {
            minrto_factor: 2.0,
            delay_change: 2.0,
            reduction: ReductionRule::Figure1,
            reordering: true,
            dsack_ends_defence: false,
        }
    }
}

impl EtcpParams {
    /// Checks the values; the message names the field and the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.minrto_factor.is_finite() && (0.0..=100.0).contains(&self.minrto_factor)) {
            return Err(format!(
                "minrto_factor: {} is out of range; it must be from 0 (off) to 100 (default 2)",
                self.minrto_factor
            ));
        }
        if !(self.delay_change.is_finite() && self.delay_change > 1.0 && self.delay_change <= 1e6) {
            return Err(format!(
                "delay_change: {} is out of range; it must be above 1 (MobiWac 2009: 2)",
                self.delay_change
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<EtcpParams, String> {
        serde_json::from_str::<EtcpParams>(json)
            .map_err(|e| e.to_string())
            .and_then(|p| p.validate().map(|()| p))
    }

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(parse("{}").unwrap(), EtcpParams::default());
        let p = parse(r#"{"reduction": "figure3", "reordering": false}"#).unwrap();
        assert_eq!(p.reduction, ReductionRule::Figure3);
        assert!(!p.reordering);
        assert_eq!(p.minrto_factor, 2.0);
    }

    #[test]
    fn bad_values_name_their_field() {
        let e = parse(r#"{"minrto_factor": -1}"#).unwrap_err();
        assert!(e.starts_with("minrto_factor: -1 is out of range"), "{e}");
        let e = parse(r#"{"delay_change": 1}"#).unwrap_err();
        assert!(e.starts_with("delay_change: 1 is out of range"), "{e}");
        let e = parse(r#"{"reduction": "figure2"}"#).unwrap_err();
        assert!(e.contains("unknown variant `figure2`"), "{e}");
        let e = parse(r#"{"dupthresh": 4}"#).unwrap_err();
        assert!(e.contains("unknown field `dupthresh`"), "{e}");
    }
}
