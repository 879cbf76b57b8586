//! Human units for configuration: `"240ms"`, `"8Mbit/s"`, `"150KB"`, `"100pkt"`.
//!
//! The parsers return a message that quotes the bad value and shows a correct
//! example, e.g. `"8 Mbps/s" is not a rate, write e.g. "8Mbit/s"`; wrapped by
//! serde they produce errors such as `links[1].rate: "8 Mbps/s" is not a rate,
//! write e.g. "8Mbit/s"` in the scenario loader.

use crate::time::{Duration, Rate};
use core::fmt;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A size in bytes, written with a unit (`"1500B"`, `"150KB"`, `"64MiB"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

/// Splits `"12.5 ms"` into the number and the unit (an optional space between).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_' || *c == 'e' || *c == 'E'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // An exponent marker must be followed by digits; otherwise it belongs to the unit.
    let (mut num, mut unit) = s.split_at(end);
    if num.ends_with(['e', 'E']) {
        num = &num[..num.len() - 1];
        unit = &s[num.len()..];
    }
    let num = num.replace('_', "");
    let value: f64 = num.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let unit = unit.strip_prefix(' ').unwrap_or(unit);
    Some((value, unit))
}

fn bad(value: &str, what: &str, example: &str) -> String {
    format!("\"{value}\" is not {what}, write e.g. \"{example}\"")
}

/// The longest duration a configuration may write: 10^9 s, about 31.7
/// years. The simulator's clock counts nanoseconds in 64 bits (584 years), so
/// a sum of up to 18 such times never overflows it; anything longer is a unit
/// mistake, refused rather than saturated.
pub const MAX_DURATION: Duration = Duration::from_secs(1_000_000_000);

/// Parses a duration such as `"240ms"`, `"2.5s"`, `"100us"`, `"1min"`.
/// Durations longer than [`MAX_DURATION`], and positive ones shorter than the
/// 1 ns resolution, are errors that quote the value as written.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    parse_duration_or(s, || bad(s, "a duration", "240ms"))
}

/// As [`parse_duration`], with `syntax` giving the message for text that is
/// not a duration at all (fields that also take words, such as `"steady"`).
pub fn parse_duration_or(s: &str, syntax: impl Fn() -> String) -> Result<Duration, String> {
    let (v, unit) = split_number(s).ok_or_else(&syntax)?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(syntax()),
    };
    let secs = v * scale;
    if secs > MAX_DURATION.as_secs_f64() {
        return Err(format!(
            "\"{s}\" is too long (at most {MAX_DURATION}, about 31.7 years)"
        ));
    }
    let d = Duration::from_secs_f64(secs);
    if d.is_zero() && secs > 0.0 {
        return Err(format!(
            "\"{s}\" is shorter than 1ns, the resolution of time"
        ));
    }
    Ok(d)
}

/// Parses a rate such as `"8Mbit/s"`, `"100 kbit/s"`, `"1Gbps"`, `"2MB/s"`.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let err = || bad(s, "a rate", "8Mbit/s");
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let bps = match unit {
        "bit/s" | "bps" => 1.0,
        "kbit/s" | "Kbit/s" | "kbps" | "Kbps" => 1e3,
        "Mbit/s" | "Mbps" => 1e6,
        "Gbit/s" | "Gbps" => 1e9,
        "B/s" => 8.0,
        "kB/s" | "KB/s" => 8e3,
        "MB/s" => 8e6,
        "GB/s" => 8e9,
        _ => return Err(err()),
    };
    let r = (v * bps).round();
    if r > u64::MAX as f64 {
        return Err(err());
    }
    Ok(Rate::from_bps(r as u64))
}

/// Parses a size such as `"1500B"`, `"150KB"`, `"10MB"`, `"64KiB"`.
pub fn parse_size(s: &str) -> Result<ByteSize, String> {
    let err = || bad(s, "a size", "150KB");
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(err()),
    };
    let b = (v * scale).round();
    if b > u64::MAX as f64 {
        return Err(err());
    }
    Ok(ByteSize(b as u64))
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b % 1_000_000_000 == 0 {
            write!(f, "{}GB", b / 1_000_000_000)
        } else if b != 0 && b % 1_000_000 == 0 {
            write!(f, "{}MB", b / 1_000_000)
        } else if b != 0 && b % (1 << 20) == 0 {
            write!(f, "{}MiB", b >> 20)
        } else if b != 0 && b % 1_000 == 0 {
            write!(f, "{}KB", b / 1_000)
        } else {
            write!(f, "{b}B")
        }
    }
}

/// A serde visitor for a unit string: rejects numbers and other types with a
/// message that quotes the value and shows an example.
struct UnitVisitor<T> {
    what: &'static str,
    example: &'static str,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} such as \"{}\"", self.what, self.example)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Err(self.no_unit(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(self.no_unit(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(self.no_unit(v))
    }
}

impl<T> UnitVisitor<T> {
    /// The error for a bare number. `{v:?}` keeps 1e-300 short (`{v}` writes
    /// out all 300 digits) and prints integers as written.
    fn no_unit<E: de::Error>(&self, v: impl fmt::Debug) -> E {
        E::custom(format!(
            "{v:?} has no unit; write {} with a unit, e.g. \"{}\"",
            self.what, self.example
        ))
    }
}

macro_rules! unit_serde {
    ($ty:ty, $what:expr, $example:expr, $parse:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(UnitVisitor {
                    what: $what,
                    example: $example,
                    parse: $parse,
                })
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}

unit_serde!(Duration, "a duration", "240ms", parse_duration);
unit_serde!(Rate, "a rate", "8Mbit/s", parse_rate);
unit_serde!(ByteSize, "a size", "150KB", parse_size);

/// Serde helpers for an optional timer written as `false` (off), `true` (the
/// default delay) or a duration string, as used by `delayed_ack`.
pub mod optional_duration {
    use super::*;

    /// The delay `true` stands for.
    pub const DEFAULT_DELAY: Duration = Duration::from_millis(200);

    /// Deserialises `false` / `true` / `"200ms"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Option<Duration>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("false, true or a duration such as \"200ms\"")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(v.then_some(DEFAULT_DELAY))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_duration_or(v, || {
                    format!(
                        "\"{v}\" is not a duration, write e.g. \"200ms\", or false to turn it off"
                    )
                })
                .map(Some)
                .map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }

    /// Serialises `None` as `false` and a delay as its duration string.
    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_bool(false),
            Some(d) => s.collect_str(d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("240ms").unwrap(), Duration::from_millis(240));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(
            parse_duration("0.35 s").unwrap(),
            Duration::from_millis(350)
        );
        assert_eq!(parse_duration("1min").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1e3ms").unwrap(), Duration::from_secs(1));
        assert_eq!(
            parse_duration("240").unwrap_err(),
            "\"240\" is not a duration, write e.g. \"240ms\""
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1.2.3s").is_err());
    }

    /// Out-of-range durations are refused with the value as written, never
    /// saturated (`"1e30s"` used to become 2^64 - 1 ns) or rounded to zero.
    #[test]
    fn durations_out_of_range_are_refused() {
        assert_eq!(
            parse_duration("1e30s").unwrap_err(),
            "\"1e30s\" is too long (at most 1000000000s, about 31.7 years)"
        );
        assert!(parse_duration("1e20h").unwrap_err().contains("too long"));
        assert_eq!(parse_duration("1e9s").unwrap(), MAX_DURATION);
        assert!(parse_duration("1000000001s").is_err());
        assert_eq!(
            parse_duration("0.1ns").unwrap_err(),
            "\"0.1ns\" is shorter than 1ns, the resolution of time"
        );
        assert_eq!(parse_duration("0ms").unwrap(), Duration::ZERO);
        let e = serde_json::from_str::<crate::TcpConfig>(r#"{"delayed_ack": "1e30s"}"#);
        assert!(e.unwrap_err().to_string().contains("too long"));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("8Mbit/s").unwrap(), Rate::from_mbps(8));
        assert_eq!(parse_rate("100 kbit/s").unwrap(), Rate::from_bps(100_000));
        assert_eq!(parse_rate("1Gbps").unwrap(), Rate::from_bps(1_000_000_000));
        assert_eq!(parse_rate("1MB/s").unwrap(), Rate::from_mbps(8));
        assert_eq!(
            parse_rate("8 Mbps/s").unwrap_err(),
            "\"8 Mbps/s\" is not a rate, write e.g. \"8Mbit/s\""
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("150KB").unwrap(), ByteSize(150_000));
        assert_eq!(parse_size("64KiB").unwrap(), ByteSize(65_536));
        assert_eq!(parse_size("1500B").unwrap(), ByteSize(1500));
        assert!(parse_size("10").is_err());
        assert_eq!(ByteSize(150_000).to_string(), "150KB");
        assert_eq!(ByteSize(64 << 20).to_string(), "64MiB");
    }

    #[test]
    fn serde_messages_quote_the_value() {
        let e = serde_json::from_str::<Rate>("\"8 Mbps/s\"").unwrap_err();
        assert!(
            e.to_string().starts_with("\"8 Mbps/s\" is not a rate"),
            "{e}"
        );
        let e = serde_json::from_str::<Duration>("240").unwrap_err();
        assert!(e.to_string().starts_with("240 has no unit"), "{e}");
        let e = serde_json::from_str::<Rate>("-1e-300").unwrap_err();
        assert!(e.to_string().starts_with("-1e-300 has no unit"), "{e}");
        let e = serde_json::from_str::<Rate>("0.5").unwrap_err();
        assert!(e.to_string().starts_with("0.5 has no unit"), "{e}");
        let d: Duration = serde_json::from_str("\"240ms\"").unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"240ms\"");
    }
}
