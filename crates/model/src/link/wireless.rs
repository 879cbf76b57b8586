//! The wireless parameters of a link: link-layer ARQ ([`ArqSpec`]) and
//! on/off outage processes ([`OutageProcessSpec`]), as a scenario writes
//! them and the link layer runs them ([`super::Arq`],
//! [`super::outage_windows`]).

use serde::{Deserialize, Serialize};
use wavelab_tcp::Duration;

/// Link-layer ARQ on a link direction: each frame is sent up to
/// `retries + 1` times until an attempt gets through the link's loss model
/// (which, with `arq`, is the loss of one attempt); a frame whose attempts
/// all fail is lost (a residual loss). Between two attempts the sender waits
/// `retry_delay` (the MAC's acknowledgement timeout) plus, with `backoff`,
/// the mean contention backoff of that retry. With `order = "in-order"` a
/// frame in retry holds the ones behind it (a stop-and-wait MAC such as
/// 802.11 DCF: its retries occupy the link); with `"out-of-order"` the ones
/// behind it pass (as with several HARQ processes: its retries delay it
/// alone and do not occupy the link).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "link-layer ARQ such as { retries = 7, retry_delay = \"1ms\" }"
)]
pub struct ArqSpec {
    /// Retransmissions allowed per frame (802.11's default retry limit: 7).
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Fixed wait before each retransmission (the acknowledgement timeout).
    #[serde(default)]
    pub retry_delay: Duration,
    /// A contention backoff that grows per retry, added to `retry_delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff: Option<BackoffSpec>,
    /// Whether a frame in retry holds the frames behind it.
    #[serde(default)]
    pub order: ArqOrder,
    /// Which delivered frames of a flow's data produce a link-layer report
    /// to the flow's sender (with any setting but `none`, a frame given up
    /// after its retry limit produces a link-layer drop notice).
    #[serde(default)]
    pub report: ReportWhen,
    /// How long a report takes to reach the sender after the frame's
    /// delivery.
    #[serde(default)]
    pub report_delay: Duration,
}

fn default_retries() -> u32 {
    7
}

/// The most up/down cycles an outage process may make in a run (its
/// windows are drawn before the run).
pub const MAX_OUTAGE_CYCLES: u64 = 1_000_000;

/// The most retransmissions per frame a scenario may ask for.
pub const MAX_RETRIES: u32 = 1000;

/// The binary exponential backoff of 802.11 DCF (IEEE 802.11-2020, 10.3.3):
/// before retry `i` (1, 2, ...) the contention window is
/// `CW_i = min((cw_min + 1) 2^i - 1, cw_max)` slots and the backoff is drawn
/// uniformly from `[0, CW_i]`; the model adds its mean, `slot * CW_i / 2`, so
/// that the delay of a retry is deterministic (the randomness is in the
/// number of attempts). Defaults: 802.11b DSSS (slot 20 us, CW 31 to 1023).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a backoff such as { slot = \"20us\", cw_min = 31, cw_max = 1023 }"
)]
pub struct BackoffSpec {
    /// Length of a backoff slot.
    #[serde(default = "default_slot")]
    pub slot: Duration,
    /// The contention window of the first attempt, in slots.
    #[serde(default = "default_cw_min")]
    pub cw_min: u32,
    /// The largest contention window, in slots.
    #[serde(default = "default_cw_max")]
    pub cw_max: u32,
}

fn default_slot() -> Duration {
    Duration::from_micros(20)
}
fn default_cw_min() -> u32 {
    31
}
fn default_cw_max() -> u32 {
    1023
}

/// Whether a frame in retry holds the frames behind it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArqOrder {
    /// It does: frames leave in the order they came (stop-and-wait).
    #[default]
    InOrder,
    /// It does not: later frames pass it, so they arrive out of order.
    OutOfOrder,
}

/// Which delivered data frames produce a link-layer report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportWhen {
    /// None.
    #[default]
    None,
    /// Those that needed at least one retransmission.
    Retried,
    /// All of them.
    All,
}

/// On/off outages drawn from distributions: from `start`, the link is up for
/// a time drawn with mean `up`, then down (both directions destroy every
/// packet on them, as in an outage window) for a time drawn with mean
/// `down`, and so on to the end of the run. Seeded per link.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an outage process such as { up = \"120s\", down = \"4s\" }"
)]
pub struct OutageProcessSpec {
    /// Mean time the link is up between two outages.
    pub up: Duration,
    /// Mean length of an outage.
    pub down: Duration,
    /// How the times are drawn.
    #[serde(default)]
    pub distribution: Distribution,
    /// When the first up period starts (the link is up before it).
    #[serde(default)]
    pub start: Duration,
}

/// How the up and down times of an outage process are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Exponentially distributed with the given mean.
    #[default]
    Exponential,
    /// Exactly the given time.
    Fixed,
}

impl Distribution {
    /// A time drawn from the distribution with mean `mean` (exponential:
    /// by inverse transform of one uniform draw of `rng`; fixed: `mean`,
    /// drawing nothing).
    pub fn draw(self, mean: Duration, rng: &mut crate::rng::Rng) -> Duration {
        match self {
            Distribution::Fixed => mean,
            Distribution::Exponential => {
                // 1 - u is in (0, 1]
                let u = 1.0 - rng.next_f64();
                Duration::from_secs_f64(-u.ln() * mean.as_secs_f64())
            }
        }
    }
}
