//! The parameters the BPF program is loaded with: the same rules and values
//! as the sans-IO Wave's [`WaveParams`], so that a variant chosen in a
//! scenario means the same on a real kernel.

use wavelab_tcp::cc::wave::{DispersionFilter, DupackTrain, Variant, WaveParams};
use wavelab_tcp::cc::CcConfig;

/// What the program's read-only data holds (microseconds, flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// BURST0, segments.
    pub burst: u32,
    /// The smallest burst, segments.
    pub min_burst: u32,
    /// TxTime0.
    pub tx_time_us: u32,
    /// The smallest TxTime.
    pub min_tx_time_us: u32,
    /// DeltaRTT above which adjustment mode starts.
    pub beta_us: u32,
    /// Scale a train's span by n/(n-1).
    pub dispersion_scaling: bool,
    /// 0 mean, 1 RTT-weighted, 2 latest.
    pub dispersion_filter: u32,
    /// The first 4.12 release's rules (stability from the dispersion, the
    /// minimum set to zero).
    pub first_release: bool,
}

fn micros(d: wavelab_tcp::Duration) -> Result<u32, String> {
    u32::try_from(d.as_nanos() / 1000)
        .map_err(|_| format!("{d} does not fit the program's 32-bit microseconds"))
}

impl Params {
    /// The program's parameters for a sans-IO Wave configuration; checks it
    /// first (the message names the field). The program cuts a train at a
    /// duplicate ACK, so the module's `dupack_train = "count"` is refused
    /// rather than silently run as `"cut"`.
    pub fn from_wave(p: &WaveParams) -> Result<Self, String> {
        p.validate()?;
        if p.dupack_train == DupackTrain::Count {
            return Err(
                "dupack_train: \"count\" is not in the BPF Wave, which cuts a train at a duplicate ACK (use \"cut\")"
                    .into(),
            );
        }
        Ok(Params {
            burst: p.burst,
            min_burst: p.min_burst,
            tx_time_us: micros(p.tx_time).map_err(|e| format!("tx_time: {e}"))?,
            min_tx_time_us: micros(p.min_tx_time).map_err(|e| format!("min_tx_time: {e}"))?,
            beta_us: micros(p.beta).map_err(|e| format!("beta: {e}"))?,
            dispersion_scaling: p.dispersion_scaling,
            dispersion_filter: match p.dispersion_filter {
                DispersionFilter::Mean => 0,
                DispersionFilter::RttWeighted => 1,
                DispersionFilter::Latest => 2,
            },
            first_release: p.variant == Variant::Linux412First,
        })
    }

    /// The parameters written as a scenario would (`{"variant": ...}` plus
    /// overrides), e.g. `{"variant": "linux-4.12", "beta": "200ms"}`.
    /// Errors name the field, as a scenario's do.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let mut v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let obj = v
            .as_object_mut()
            .ok_or("Wave's parameters are a table such as {\"variant\": \"linux-4.12\"}")?;
        obj.insert("algorithm".into(), "wave".into());
        match serde_json::from_value::<CcConfig>(v).map_err(|e| e.to_string())? {
            CcConfig::Wave(p) => Self::from_wave(&p),
            _ => unreachable!("the algorithm is wave"),
        }
    }
}

impl Params {
    /// Parses the program's read-only data as pinned (`params`): its first
    /// eight `u32` are burst0, min_burst, tx_time0_us, min_tx_time_us,
    /// beta_us, dispersion_scaling, dispersion_filter and first_release, in
    /// the order `wave.bpf.c` declares them; `None` if it is shorter.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let u = |i: usize| {
            b.get(4 * i..4 * i + 4)
                .map(|s| u32::from_ne_bytes(s.try_into().expect("4 bytes")))
        };
        Some(Params {
            burst: u(0)?,
            min_burst: u(1)?,
            tx_time_us: u(2)?,
            min_tx_time_us: u(3)?,
            beta_us: u(4)?,
            dispersion_scaling: u(5)? != 0,
            dispersion_filter: u(6)?,
            first_release: u(7)? != 0,
        })
    }

    /// The fields in which `self` and `other` differ, as
    /// `name: self's value vs other's`, in declaration order.
    pub fn differences(&self, other: &Params) -> Vec<String> {
        let mut d = Vec::new();
        let mut cmp = |name: &str, a: String, b: String| {
            if a != b {
                d.push(format!("{name}: {a} vs {b}"));
            }
        };
        cmp("burst", self.burst.to_string(), other.burst.to_string());
        cmp(
            "min_burst",
            self.min_burst.to_string(),
            other.min_burst.to_string(),
        );
        let us = |v: u32| format!("{v} us");
        cmp("tx_time", us(self.tx_time_us), us(other.tx_time_us));
        cmp(
            "min_tx_time",
            us(self.min_tx_time_us),
            us(other.min_tx_time_us),
        );
        cmp("beta", us(self.beta_us), us(other.beta_us));
        cmp(
            "dispersion_scaling",
            self.dispersion_scaling.to_string(),
            other.dispersion_scaling.to_string(),
        );
        let filter = |f: u32| match f {
            0 => "mean".to_string(),
            1 => "rtt-weighted".to_string(),
            2 => "latest".to_string(),
            n => format!("filter {n}"),
        };
        cmp(
            "dispersion_filter",
            filter(self.dispersion_filter),
            filter(other.dispersion_filter),
        );
        cmp(
            "variant",
            if self.first_release {
                "linux-4.12-first"
            } else {
                "a later revision's rules"
            }
            .into(),
            if other.first_release {
                "linux-4.12-first"
            } else {
                "a later revision's rules"
            }
            .into(),
        );
        d
    }
}

impl Default for Params {
    fn default() -> Self {
        Self::from_wave(&WaveParams::default()).expect("the defaults are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_dcnet_study() {
        let p = Params::default();
        assert_eq!((p.burst, p.min_burst), (10, 3));
        assert_eq!((p.tx_time_us, p.beta_us), (500_000, 350_000));
        assert!(p.dispersion_scaling && !p.first_release);
    }

    #[test]
    fn variants_map_onto_the_programs_flags() {
        let p = Params::from_json(r#"{"variant": "netdev-2017"}"#).unwrap();
        assert_eq!(
            (p.tx_time_us, p.beta_us, p.dispersion_filter),
            (200_000, 150_000, 2)
        );
        let p = Params::from_json(r#"{"variant": "linux-4.12-first"}"#).unwrap();
        assert!(p.first_release && !p.dispersion_scaling);
        let e = Params::from_json(r#"{"burst": 2}"#).unwrap_err();
        assert!(e.contains("burst: 2 is below min_burst 3"), "{e}");
        let e = Params::from_json(r#"{"beta": "soon"}"#).unwrap_err();
        assert!(e.starts_with("beta: \"soon\" is not a duration"), "{e}");
    }

    #[test]
    fn reads_back_the_read_only_data_in_declaration_order() {
        let p = Params::from_json(r#"{"variant": "linux-4.12", "burst": 12}"#).unwrap();
        let b: Vec<u8> = [
            p.burst,
            p.min_burst,
            p.tx_time_us,
            p.min_tx_time_us,
            p.beta_us,
            p.dispersion_scaling as u32,
            p.dispersion_filter,
            p.first_release as u32,
            7, // what follows in .rodata is not a parameter
        ]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
        assert_eq!(Params::from_bytes(&b), Some(p));
        assert_eq!(Params::from_bytes(&b[..28]), None);
    }

    #[test]
    fn the_modules_duplicate_ack_count_is_refused_by_name() {
        let e = Params::from_json(r#"{"dupack_train": "count"}"#).unwrap_err();
        assert!(e.starts_with("dupack_train: \"count\""), "{e}");
        assert!(Params::from_json(r#"{"dupack_train": "cut"}"#).is_ok());
    }

    #[test]
    fn differences_name_the_field_and_both_values() {
        let a = Params::default();
        let b = Params::from_json(r#"{"variant": "linux-4.12"}"#).unwrap();
        assert_eq!(
            a.differences(&b),
            [
                "beta: 350000 us vs 150000 us",
                "dispersion_scaling: true vs false",
                "dispersion_filter: mean vs rtt-weighted",
            ]
        );
        assert!(a.differences(&a).is_empty());
    }
}
