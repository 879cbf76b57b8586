//! Link handovers: a link that changes in place (DCNET 2016's model of a
//! vertical handover): an outage, and a switch of its settings to the new
//! link's, at a time or once a flow runs at full rate. The path stays; a
//! node that moves between access links is a handoff
//! ([`super::handoffs`]).

use super::{LossSpec, QueueLimit};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use wavelab_tcp::{Duration, Rate};

/// When a handover happens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkHandoverTime {
    /// At this time.
    At(Duration),
    /// When a flow has reached its steady state on the old link (see
    /// [`SteadyRule`]).
    Steady,
}

impl<'de> Deserialize<'de> for LinkHandoverTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LinkHandoverTime;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time such as \"30s\", or \"steady\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LinkHandoverTime, E> {
                if v == "steady" {
                    return Ok(LinkHandoverTime::Steady);
                }
                wavelab_tcp::units::parse_duration_or(v, || {
                    format!("\"{v}\" is not a time, write e.g. \"30s\", or \"steady\"")
                })
                .map(LinkHandoverTime::At)
                .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LinkHandoverTime, E> {
                Err(E::custom(format!(
                    "{v} has no unit; write a time such as \"30s\", or \"steady\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LinkHandoverTime, E> {
                self.visit_i64(v as i64)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for LinkHandoverTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LinkHandoverTime::At(d) => s.collect_str(d),
            LinkHandoverTime::Steady => s.serialize_str("steady"),
        }
    }
}

/// The rule of `at = "steady"`: the handover happens at the first sample time
/// (at or after `earliest`) at which the flow's goodput over the last `window`
/// reaches `fraction` of the old link's payload capacity (its rate times
/// MSS / (MSS + 40)); at `latest` if that never happens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "a steady rule such as { window = \"5s\", fraction = 0.9 }"
)]
pub struct SteadyRule {
    /// The flow watched (index after replicas are expanded; default 0).
    pub flow: u32,
    /// The goodput averaging window (default 5 s).
    pub window: Duration,
    /// Fraction of the payload capacity that counts as steady (default 0.9).
    pub fraction: f64,
    /// Not before this time (default 10 s).
    pub earliest: Duration,
    /// At this time at the latest (default: the end of the run, i.e. never).
    pub latest: Option<Duration>,
}

impl Default for SteadyRule {
    fn default() -> Self {
        SteadyRule {
            flow: 0,
            window: Duration::from_secs(5),
            fraction: 0.9,
            earliest: Duration::from_secs(10),
            latest: None,
        }
    }
}

/// A break-before-make vertical handover (DCNET 2016's model): at `at` the
/// link drops every packet in both directions for `outage` (the handover time
/// HT), and its settings switch to the new link's at the start of the outage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a handover such as { at = \"30s\", outage = \"2s\", rate = \"8Mbit/s\", delay = \"240ms\" }"
)]
pub struct LinkHandoverSpec {
    /// When: a time, or `"steady"` (see `steady`).
    pub at: LinkHandoverTime,
    /// The disconnection, HT (default 0: the switch alone).
    #[serde(default)]
    pub outage: Duration,
    /// The new link's rate (both directions).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// The new link's one-way delay (both directions).
    #[serde(default)]
    pub delay: Option<Duration>,
    /// The new link's queue limit.
    #[serde(default)]
    pub queue: Option<QueueLimit>,
    /// The new link's random loss.
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// The rule of `at = "steady"`.
    #[serde(default)]
    pub steady: SteadyRule,
}
