//! Link presets: `preset = "geo-satellite"` or `"wlan-dcf"` on a link gives
//! it the settings of a known hop, and any field written beside the preset
//! overrides it.
//!
//! A link is read as a [`LinkSpecWritten`] (the settings a preset can give
//! optional, plus `preset`), then resolved into a [`LinkSpec`]: the preset's
//! values, with the fields the link sets. The resolved link is what a
//! scenario normalises to, so a preset and the same fields written out are
//! one run.

use super::{
    ArqSpec, BackoffSpec, DirectionSpec, LinkHandoverSpec, LinkSpec, LossSpec, OutageProcessSpec,
    OutageSpec, QdiscSpec, QueueLimit, ScheduleEntry,
};
use crate::link::LeoSpec;
use serde::{Deserialize, Serialize};
use wavelab_tcp::{Duration, Rate};

/// The hops a link can start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkPreset {
    /// The GEO satellite link of Annese et al., "TCP performance measured
    /// over heterogeneous wireless networks with high delay-bandwidth
    /// product" (Table I): 1.2 Mbit/s net,
    /// a minimum RTT of 557 ms, access-router buffers of about 1.5 MB.
    GeoSatellite,
    /// An 802.11b DCF hop at 11 Mbit/s with the standard retry limit of 7.
    WlanDcf,
}

/// The per-attempt loss of the `wlan-dcf` preset: `p^8` is 2.2e-3, the mean
/// of Table II's eight average packet losses (Annese et al.), so that the
/// residual loss after 7 retries is that mean.
pub const WLAN_ATTEMPT_LOSS: f64 = 0.465;

impl LinkPreset {
    /// The preset's settings: rate, delay, queue, loss, ARQ.
    pub fn settings(self) -> (Rate, Duration, QueueLimit, LossSpec, Option<ArqSpec>) {
        match self {
            // one way 273 ms: 2 x 273 ms + a 1500-byte segment at 1.2 Mbit/s
            // (10 ms) + its ACK (0.35 ms) = 556.3 ms, plus the access hops:
            // Table I's 557 ms minimum RTT
            LinkPreset::GeoSatellite => (
                Rate::from_bps(1_200_000),
                Duration::from_millis(273),
                QueueLimit::Bytes(1_500_000),
                LossSpec::None,
                None,
            ),
            // 802.11b DSSS: the ACK timeout (SIFS 10 us + slot 20 us + PLCP
            // 192 us) and DIFS (50 us) before each retry, plus the mean
            // binary exponential backoff (slot 20 us, CW 31..1023)
            LinkPreset::WlanDcf => (
                Rate::from_bps(11_000_000),
                Duration::from_millis(1),
                QueueLimit::Packets(100),
                LossSpec::Bernoulli {
                    p: WLAN_ATTEMPT_LOSS,
                },
                Some(ArqSpec {
                    retries: 7,
                    retry_delay: Duration::from_micros(272),
                    backoff: Some(BackoffSpec {
                        slot: Duration::from_micros(20),
                        cw_min: 31,
                        cw_max: 1023,
                    }),
                    order: Default::default(),
                    report: Default::default(),
                    report_delay: Duration::ZERO,
                }),
            ),
        }
    }
}

/// A link as written: a preset and the fields that override it (see
/// [`LinkSpec`] for each field's meaning).
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a link such as { between = [\"a\", \"b\"], rate = \"10Mbit/s\", delay = \"20ms\" }"
)]
pub(crate) struct LinkSpecWritten {
    #[serde(default)]
    preset: Option<LinkPreset>,
    #[serde(default)]
    name: Option<String>,
    between: [String; 2],
    #[serde(default)]
    rate: Option<Rate>,
    #[serde(default)]
    delay: Option<Duration>,
    #[serde(default)]
    queue: Option<QueueLimit>,
    #[serde(default)]
    qdisc: QdiscSpec,
    #[serde(default)]
    loss: Option<LossSpec>,
    #[serde(default)]
    forward: DirectionSpec,
    #[serde(default)]
    reverse: DirectionSpec,
    #[serde(default)]
    schedule: Vec<ScheduleEntry>,
    #[serde(default)]
    outages: Vec<OutageSpec>,
    #[serde(default)]
    handovers: Vec<LinkHandoverSpec>,
    #[serde(default)]
    arq: Option<ArqSpec>,
    #[serde(default)]
    outage_process: Option<OutageProcessSpec>,
    #[serde(default)]
    leo: Option<LeoSpec>,
}

impl TryFrom<LinkSpecWritten> for LinkSpec {
    type Error = String;
    fn try_from(w: LinkSpecWritten) -> Result<Self, String> {
        let preset = w.preset.map(LinkPreset::settings);
        // serde's own wording, which the scenario's error locator turns into
        // "links[i].rate: missing (it is required)"
        let missing = |field: &str| format!("missing field `{field}`");
        // a LEO link's directions run the series its model draws: the
        // configured rate and delay (shown in the links table) default to
        // the downlink's highest rate and the lowest base delay
        let rate = (w.rate.or(preset.as_ref().map(|p| p.0))).or(w.leo.map(|l| l.downlink.max));
        let delay = (w.delay.or(preset.as_ref().map(|p| p.1))).or(w.leo.map(|l| l.delay.min));
        Ok(LinkSpec {
            name: w.name,
            between: w.between,
            rate: rate.ok_or_else(|| missing("rate"))?,
            delay: delay.ok_or_else(|| missing("delay"))?,
            queue: w.queue.or(preset.as_ref().map(|p| p.2)).unwrap_or_default(),
            qdisc: w.qdisc,
            loss: w.loss.or(preset.as_ref().map(|p| p.3)).unwrap_or_default(),
            forward: w.forward,
            reverse: w.reverse,
            schedule: w.schedule,
            outages: w.outages,
            handovers: w.handovers,
            arq: w.arq.or(preset.and_then(|p| p.4)),
            outage_process: w.outage_process,
            leo: w.leo,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{LinkPreset, Scenario, WLAN_ATTEMPT_LOSS};

    fn link(fields: &str) -> Result<Scenario, String> {
        Scenario::from_toml_str(&format!(
            r#"
            duration = "10s"
            [[links]]
            between = ["a", "b"]
            {fields}
            [[flows]]
            from = "a"
            to = "b"
            "#
        ))
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_preset_gives_its_settings_and_fields_beside_it_override_them() {
        let sat = link("preset = \"geo-satellite\"").unwrap();
        let l = &sat.links[0];
        let (rate, delay, queue, loss, arq) = LinkPreset::GeoSatellite.settings();
        assert_eq!(
            (l.rate, l.delay, l.queue, l.loss, &l.arq),
            (rate, delay, queue, loss, &arq)
        );
        assert_eq!(l.rate.as_bps(), 1_200_000);
        // the preset normalises to its fields: written out, the same link
        let written =
            link("rate = \"1.2Mbit/s\"\ndelay = \"273ms\"\nqueue = \"1500000B\"").unwrap();
        assert_eq!(sat.to_json(), written.to_json());
        let wlan = link("preset = \"wlan-dcf\"\ndelay = \"2ms\"").unwrap();
        let l = &wlan.links[0];
        assert_eq!(
            l.delay.as_nanos(),
            2_000_000,
            "the field beside the preset wins"
        );
        assert_eq!(l.arq.as_ref().unwrap().retries, 7);
        assert_eq!(
            l.loss,
            crate::scenario::LossSpec::Bernoulli {
                p: WLAN_ATTEMPT_LOSS
            }
        );
        // p^8 is the mean of Table II's average losses (2.2e-3)
        assert!((WLAN_ATTEMPT_LOSS.powi(8) - 2.2e-3).abs() < 0.1e-3);
    }

    #[test]
    fn without_a_preset_rate_and_delay_are_required_and_named() {
        let e = link("delay = \"1ms\"").unwrap_err();
        assert_eq!(e, "links[0].rate: missing (it is required)");
        let e = link("preset = \"moon\"").unwrap_err();
        assert!(e.contains("moon") && e.contains("geo-satellite"), "{e}");
    }
}
