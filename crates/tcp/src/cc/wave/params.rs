//! TCP Wave's parameters and its named variants.
//!
//! The rules and defaults of TCP Wave changed across the revisions of its
//! public Linux module (kronat/linux, branch `tcp_wave`,
//! `net/ipv4/tcp_wave.c`) and differ from the DCNET 2016 paper's set-up. A
//! variant names one of them; every value it sets can still be overridden
//! field by field:
//!
//! | variant | follows | beta | TxTime0 | stability counter | forgotten minimum | dispersion |
//! |---|---|---|---|---|---|---|
//! | `"dcnet2016"` (default) | the DCNET 2016 paper's set-up (section 3.1) with the later module revisions' rules | 350 ms | 500 ms | avgRTT / TxTime | next sample | span × n/(n−1), mean-smoothed |
//! | `"linux-4.12"` | the 4.12 module after its fixes (the revision with `AVG_SCALE 20` and `stab_factor = avg_rtt / tx_timer`) | 150 ms | 500 ms | avgRTT / TxTime | next sample | first-to-last span, RTT-weighted filter |
//! | `"netdev-2017"` | the 2017 netdev posting of the series (module version 0.2) | 150 ms | 200 ms | avgRTT / TxTime | next sample | span × n/(n−1), latest sample |
//! | `"linux-4.12-first"` | the first 4.12 release (kronat/linux 0276e75) | 150 ms | 500 ms | avgRTT / dispersion | set to zero | first-to-last span, mean-smoothed |
//!
//! The first release's two rules lock TxTime at TxTime0 on any path whose
//! RTT exceeds beta (DeltaRTT = average − 0 stays above beta for good); it
//! is kept so that its behaviour can be shown, not as a usable setting.
//! No code was taken from the module; the rules are described in the
//! project's reference notes and in docs/algorithms/wave.md.

use crate::time::Duration;
use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

/// A named revision of TCP Wave's rules and defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Variant {
    /// The DCNET 2016 study's parameters (beta 350 ms, TxTime0 500 ms) with
    /// the rules of the module's later revisions.
    #[default]
    #[serde(rename = "dcnet2016")]
    Dcnet2016,
    /// The Linux 4.12 module after its fixes: beta 150 ms, TxTime0 500 ms,
    /// dispersion from the first to the last ACK, RTT-weighted filter.
    #[serde(rename = "linux-4.12")]
    Linux412,
    /// The 2017 netdev posting: beta 150 ms, TxTime0 200 ms, dispersion
    /// scaled by n/(n−1), no smoothing.
    #[serde(rename = "netdev-2017")]
    Netdev2017,
    /// The very first 4.12 release: stability counter from the dispersion and
    /// the minimum RTT set to zero in adjustment mode (locks TxTime at TxTime0
    /// on paths whose RTT exceeds beta).
    #[serde(rename = "linux-4.12-first")]
    Linux412First,
}

impl Variant {
    /// Every variant's scenario name.
    pub const NAMES: &'static [&'static str] =
        &["dcnet2016", "linux-4.12", "netdev-2017", "linux-4.12-first"];

    /// The variant's defaults.
    pub fn params(self) -> WaveParams {
        let ms = Duration::from_millis;
        let base = WaveParams {
            variant: self,
            burst: 10,
            min_burst: 3,
            tx_time: ms(500),
            min_tx_time: ms(1),
            beta: ms(150),
            dispersion_scaling: false,
            dispersion_filter: DispersionFilter::Mean,
            rto_samples: RtoSamples::All,
            dupack_train: DupackTrain::Cut,
        };
        match self {
            Variant::Dcnet2016 => WaveParams {
                beta: ms(350),
                dispersion_scaling: true,
                ..base
            },
            Variant::Linux412 => WaveParams {
                dispersion_filter: DispersionFilter::RttWeighted,
                ..base
            },
            Variant::Netdev2017 => WaveParams {
                tx_time: ms(200),
                dispersion_scaling: true,
                dispersion_filter: DispersionFilter::Latest,
                ..base
            },
            Variant::Linux412First => base,
        }
    }

    /// What adjustment mode divides the average RTT by to get the stability
    /// counter.
    pub fn stability_divisor(self) -> StabilityDivisor {
        match self {
            Variant::Linux412First => StabilityDivisor::Dispersion,
            _ => StabilityDivisor::TxTime,
        }
    }

    /// What adjustment mode does with the minimum RTT.
    pub fn minimum_reset(self) -> MinimumReset {
        match self {
            Variant::Linux412First => MinimumReset::Zero,
            _ => MinimumReset::Forget,
        }
    }
}

/// The divisor of the stability counter (average RTT / divisor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StabilityDivisor {
    /// The current TxTime, taken before adjustment mode resets it (later revisions).
    TxTime,
    /// The ACK-train dispersion (the first 4.12 release).
    Dispersion,
}

/// What adjustment mode does with the minimum RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinimumReset {
    /// Forgotten: the next sample becomes the minimum (later revisions).
    Forget,
    /// Set to zero, so that no sample is ever below it (the first release).
    Zero,
}

/// Which RTT samples reach the sender's RFC 6298 estimator, and so the RTO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoSamples {
    /// Every burst's sample, inflated by retransmissions or not (DCNET 2016,
    /// section 2.2: "all the RTT measurements including those calculated
    /// during retransmissions, are sent to the underlying RTT estimator").
    /// A train whose first ACK is a partial ACK after a long repair gives a
    /// sample of that whole repair.
    #[default]
    All,
    /// The sender's own samples, one per ACK of new data under Karn's rule
    /// (or from timestamps), as the Linux module's kernel takes them
    /// (`tcp_ack_update_rtt`): Wave's burst samples then feed only Wave's
    /// statistics.
    Karn,
}

impl RtoSamples {
    fn is_all(&self) -> bool {
        *self == RtoSamples::All
    }
}

/// What a duplicate ACK does to the ACK train in progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DupackTrain {
    /// The train is cut: it gives no dispersion sample, since its duration
    /// measures the repair, not the path (wavelab's rule, in every variant).
    #[default]
    Cut,
    /// A duplicate ACK counts as one delivered segment of the oldest open
    /// train, which ends when as many segments as its burst held have been
    /// acknowledged or counted, and gives a dispersion sample. This is the
    /// Linux module's rule: its round counts the kernel's `acked_sacked`
    /// (`struct rate_sample`), and without SACK the kernel counts each
    /// duplicate ACK as one delivered segment (`tcp_add_reno_sack`,
    /// net/ipv4/tcp_input.c, Linux 4.12).
    Count,
}

impl DupackTrain {
    fn is_cut(&self) -> bool {
        *self == DupackTrain::Cut
    }
}

/// How a new ACK-train dispersion sample is folded into the value TxTime uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DispersionFilter {
    /// The mean of the previous value and the sample (the first 4.12 release;
    /// the project's reference notes).
    #[default]
    Mean,
    /// A sample below the previous value replaces it; a larger one is mixed in
    /// with weight DeltaRTT / beta (the later 4.12 revision).
    RttWeighted,
    /// The latest sample, unsmoothed (the netdev posting).
    Latest,
}

/// TCP Wave's parameters. In a scenario, `variant` chooses the defaults of
/// every other field; fields written next to it override them
/// (`cc = { algorithm = "wave", variant = "linux-4.12", beta = "200ms" }`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaveParams {
    /// The revision whose rules and defaults apply (default `"dcnet2016"`).
    pub variant: Variant,
    /// Initial burst size in segments, BURST0 (10).
    pub burst: u32,
    /// Smallest burst in segments (3, as the Linux module).
    pub min_burst: u32,
    /// Initial (and largest) timer period, TxTime0 (500 ms; 200 ms in the
    /// netdev posting).
    pub tx_time: Duration,
    /// Smallest timer period (1 ms, the module's floor).
    pub min_tx_time: Duration,
    /// DeltaRTT above which adjustment mode starts (350 ms in the DCNET
    /// study; 150 ms in every module revision).
    pub beta: Duration,
    /// Scale a train's first-to-last span by n/(n−1) for its n ACKs (n ACKs
    /// span n−1 gaps; the netdev posting on).
    pub dispersion_scaling: bool,
    /// How dispersion samples are smoothed.
    pub dispersion_filter: DispersionFilter,
    /// Which RTT samples set the RTO (`"all"`, the DCNET 2016 rule, in every
    /// variant; `"karn"`, the kernel's). Left out of the scenario's
    /// normalised form at its default, so stored results keep their keys.
    #[serde(skip_serializing_if = "RtoSamples::is_all")]
    pub rto_samples: RtoSamples,
    /// What a duplicate ACK does to the train in progress (`"cut"`,
    /// wavelab's rule, in every variant; `"count"`, the Linux module's).
    /// Left out of the normalised form at its default.
    #[serde(skip_serializing_if = "DupackTrain::is_cut")]
    pub dupack_train: DupackTrain,
}

impl Default for WaveParams {
    fn default() -> Self {
        Variant::default().params()
    }
}

/// The scenario form: every field optional, resolved against the variant.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaveFields {
    variant: Option<Variant>,
    burst: Option<u32>,
    min_burst: Option<u32>,
    tx_time: Option<Duration>,
    min_tx_time: Option<Duration>,
    beta: Option<Duration>,
    dispersion_scaling: Option<bool>,
    dispersion_filter: Option<DispersionFilter>,
    rto_samples: Option<RtoSamples>,
    dupack_train: Option<DupackTrain>,
}

impl<'de> Deserialize<'de> for WaveParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = WaveFields::deserialize(d)?;
        let p = f.variant.unwrap_or_default().params();
        Ok(WaveParams {
            burst: f.burst.unwrap_or(p.burst),
            min_burst: f.min_burst.unwrap_or(p.min_burst),
            tx_time: f.tx_time.unwrap_or(p.tx_time),
            min_tx_time: f.min_tx_time.unwrap_or(p.min_tx_time),
            beta: f.beta.unwrap_or(p.beta),
            dispersion_scaling: f.dispersion_scaling.unwrap_or(p.dispersion_scaling),
            dispersion_filter: f.dispersion_filter.unwrap_or(p.dispersion_filter),
            rto_samples: f.rto_samples.unwrap_or(p.rto_samples),
            dupack_train: f.dupack_train.unwrap_or(p.dupack_train),
            variant: p.variant,
        })
    }
}

impl WaveParams {
    /// Checks the values; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.min_burst == 0 {
            return Err("min_burst: must be at least 1 segment".into());
        }
        if self.burst < self.min_burst {
            return Err(format!(
                "burst: {} is below min_burst {}",
                self.burst, self.min_burst
            ));
        }
        if self.min_tx_time < Duration::from_micros(1) {
            return Err(format!(
                "min_tx_time: {} is below 1us (TxTime is kept in microseconds, as the module keeps it)",
                self.min_tx_time
            ));
        }
        if self.tx_time < self.min_tx_time {
            return Err(format!(
                "tx_time: {} is below min_tx_time {}",
                self.tx_time, self.min_tx_time
            ));
        }
        if self.beta.is_zero() && self.dispersion_filter == DispersionFilter::RttWeighted {
            return Err(
                "beta: must be above zero with dispersion_filter = \"rtt-weighted\"".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<WaveParams, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn the_default_is_the_dcnet_study() {
        let p = parse("{}").unwrap();
        assert_eq!(p, WaveParams::default());
        assert_eq!(p.variant, Variant::Dcnet2016);
        assert_eq!(p.beta, Duration::from_millis(350));
        assert_eq!(p.tx_time, Duration::from_millis(500));
        assert!(p.dispersion_scaling);
    }

    #[test]
    fn a_variant_sets_the_defaults_and_fields_override_them() {
        let p = parse(r#"{"variant": "netdev-2017"}"#).unwrap();
        assert_eq!(p.tx_time, Duration::from_millis(200));
        assert_eq!(p.beta, Duration::from_millis(150));
        assert_eq!(p.dispersion_filter, DispersionFilter::Latest);
        let p = parse(r#"{"variant": "linux-4.12", "beta": "200ms"}"#).unwrap();
        assert_eq!(p.beta, Duration::from_millis(200));
        assert_eq!(p.tx_time, Duration::from_millis(500));
        assert_eq!(p.dispersion_filter, DispersionFilter::RttWeighted);
        assert!(!p.dispersion_scaling);
    }

    #[test]
    fn a_serialised_form_reads_back_the_same() {
        for name in Variant::NAMES {
            let p = parse(&format!(r#"{{"variant": "{name}", "burst": 12}}"#)).unwrap();
            let back = parse(&serde_json::to_string(&p).unwrap()).unwrap();
            assert_eq!(p, back, "{name}");
        }
    }

    /// An option off its default in every variant, written to the
    /// normalised form only when set (so stored results keep their keys),
    /// read back, and refused by name with its choices listed.
    fn an_option_written_only_when_set(field: &str, set: &str, bad: &str, choices: &str) {
        for name in Variant::NAMES {
            let p = parse(&format!(r#"{{"variant": "{name}"}}"#)).unwrap();
            assert!(!serde_json::to_string(&p).unwrap().contains(field));
        }
        let k = parse(&format!(r#"{{"{field}": "{set}"}}"#)).unwrap();
        assert_ne!(k, WaveParams::default());
        let json = serde_json::to_string(&k).unwrap();
        assert!(json.contains(&format!(r#""{field}":"{set}""#)), "{json}");
        assert_eq!(parse(&json).unwrap(), k);
        let e = parse(&format!(r#"{{"{field}": "{bad}"}}"#)).unwrap_err();
        assert!(e.contains(choices), "{e}");
    }

    #[test]
    fn rto_samples_is_the_papers_unless_set_and_is_written_only_when_set() {
        assert_eq!(WaveParams::default().rto_samples, RtoSamples::All);
        an_option_written_only_when_set("rto_samples", "karn", "linux", "expected `all` or `karn`");
        let k = parse(r#"{"rto_samples": "karn"}"#).unwrap();
        assert_eq!(k.rto_samples, RtoSamples::Karn);
    }

    #[test]
    fn dupack_train_is_cut_unless_set_and_is_written_only_when_set() {
        assert_eq!(WaveParams::default().dupack_train, DupackTrain::Cut);
        an_option_written_only_when_set(
            "dupack_train",
            "count",
            "ignore",
            "expected `cut` or `count`",
        );
        let c = parse(r#"{"dupack_train": "count"}"#).unwrap();
        assert_eq!(c.dupack_train, DupackTrain::Count);
    }

    #[test]
    fn an_unknown_variant_lists_the_known_ones() {
        let e = parse(r#"{"variant": "linux"}"#).unwrap_err();
        assert!(e.contains("unknown variant `linux`"), "{e}");
        assert!(
            e.contains("`dcnet2016`, `linux-4.12`, `netdev-2017`"),
            "{e}"
        );
        let e = parse(r#"{"bogus": 1}"#).unwrap_err();
        assert!(e.contains("unknown field `bogus`"), "{e}");
    }
}
