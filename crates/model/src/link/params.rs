//! The parameters of a link direction, as a scenario writes them and the
//! link layer runs them: queue limits, random loss, which direction a
//! setting covers, the changes of a schedule, how a delay trace is read.
//! The scenario schema re-exports them ([`crate::scenario`]).

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use wavelab_tcp::units::{parse_size, ByteSize};
use wavelab_tcp::{Duration, Rate};

/// A drop-tail queue limit: packets (`"100pkt"`) or bytes (`"150KB"`). It
/// counts packets waiting, not the one being transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets wait.
    Packets(u32),
    /// At most this many bytes wait.
    Bytes(u64),
}

impl Default for QueueLimit {
    fn default() -> Self {
        QueueLimit::Packets(1000)
    }
}

impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLimit::Packets(n) => write!(f, "{n}pkt"),
            QueueLimit::Bytes(b) => write!(f, "{}", ByteSize(*b)),
        }
    }
}

/// Parses `"100pkt"` or a size such as `"150KB"`.
pub fn parse_queue(s: &str) -> Result<QueueLimit, String> {
    let t = s.trim();
    if let Some(n) = t.strip_suffix("pkt").or_else(|| t.strip_suffix("packets")) {
        return n
            .trim()
            .parse::<u32>()
            .map(QueueLimit::Packets)
            .map_err(|_| {
                format!("\"{s}\" is not a queue size, write e.g. \"100pkt\" or \"150KB\"")
            });
    }
    parse_size(t)
        .map(|b| QueueLimit::Bytes(b.0))
        .map_err(|_| format!("\"{s}\" is not a queue size, write e.g. \"100pkt\" or \"150KB\""))
}

impl<'de> Deserialize<'de> for QueueLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = QueueLimit;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a queue size such as \"100pkt\" or \"150KB\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<QueueLimit, E> {
                parse_queue(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<QueueLimit, E> {
                Err(E::custom(format!(
                    "{v} has no unit; write a queue size with a unit, e.g. \"{v}pkt\" or \"150KB\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<QueueLimit, E> {
                self.visit_i64(v as i64)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for QueueLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Random loss on a link direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "model",
    rename_all = "snake_case",
    deny_unknown_fields,
    expecting = "a loss model such as { model = \"bernoulli\", p = 0.01 }"
)]
pub enum LossSpec {
    /// No random loss.
    #[default]
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Two-state Markov loss (Gilbert-Elliott), one transition per packet.
    GilbertElliott {
        /// Probability of moving from the good to the bad state.
        p_good_bad: f64,
        /// Probability of moving from the bad to the good state.
        p_bad_good: f64,
        /// Loss probability in the good state.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the bad state.
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

/// Which direction(s) of a link a setting applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Both directions.
    #[default]
    Both,
    /// From `between[0]` to `between[1]`.
    Forward,
    /// From `between[1]` to `between[0]`.
    Reverse,
}

impl Direction {
    /// True if it covers a link's direction `k` (0 forward, 1 reverse).
    pub fn covers(self, k: usize) -> bool {
        match self {
            Direction::Both => true,
            Direction::Forward => k == 0,
            Direction::Reverse => k == 1,
        }
    }
}

/// A change applied at a given time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a change such as { at = \"30s\", rate = \"2Mbit/s\" }"
)]
pub struct ScheduleEntry {
    /// When the change takes effect.
    pub at: Duration,
    /// Which direction(s) change (default both).
    #[serde(default)]
    pub direction: Direction,
    /// New rate (applies to packets that start transmission afterwards).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// New propagation delay (applies to packets that leave afterwards; the
    /// pipe stays first-in first-out).
    #[serde(default)]
    pub delay: Option<Duration>,
    /// New queue limit (applies to arrivals; packets already queued stay).
    #[serde(default)]
    pub queue: Option<QueueLimit>,
    /// New loss model.
    #[serde(default)]
    pub loss: Option<LossSpec>,
}

/// How a delay trace's file is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelayTraceFormat {
    /// `time,delay` points (see [`crate::link::CsvTrace`]).
    #[default]
    Csv,
    /// `time,rtt` points, as path RTT series are published (a Hypatia-style
    /// series of a satellite path's RTT): the one-way delay is half the RTT.
    Rtt,
    /// LeoReplayer's `delay_N.txt`: one one-way delay in milliseconds per
    /// line, each line the next 10 ms interval from the start of the run.
    Leoreplayer,
}

impl DelayTraceFormat {
    /// True for the default (kept out of the normalised scenario).
    pub fn is_csv(&self) -> bool {
        *self == DelayTraceFormat::Csv
    }
}

/// How a delay trace is read between two of its points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelayInterpolation {
    /// Each point's delay holds until the next point (as the rate and loss
    /// traces, and the changes of `schedule`).
    #[default]
    Step,
    /// Linear between two points; two points at the same time make a jump.
    Linear,
}

impl DelayInterpolation {
    /// True for the default (kept out of the normalised scenario).
    pub fn is_step(&self) -> bool {
        *self == DelayInterpolation::Step
    }
}
