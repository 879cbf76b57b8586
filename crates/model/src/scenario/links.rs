//! The links of a scenario: each a duplex point-to-point link between two
//! nodes, with per-direction overrides, a schedule of changes, outage
//! windows, handovers, ARQ and an outage process. The settings' types are
//! the link layer's ([`crate::link`]).

use super::preset;
use super::{ArqSpec, LinkHandoverSpec, LossSpec, OutageProcessSpec, QueueLimit, ScheduleEntry};
use crate::link::qdisc::QdiscSpec;
use crate::link::{DelayInterpolation, DelayTraceFormat, LeoSpec};
use serde::{Deserialize, Serialize};
use wavelab_tcp::{Duration, Rate};

/// A duplex point-to-point link. It is read with an optional `preset`
/// ([`LinkPreset`]) whose settings the fields written beside it override;
/// it normalises to the resolved fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "preset::LinkSpecWritten")]
pub struct LinkSpec {
    /// Name (default `link<i>`).
    #[serde(default)]
    pub name: Option<String>,
    /// The two nodes it connects; forward is from the first to the second.
    pub between: [String; 2],
    /// Rate of both directions.
    pub rate: Rate,
    /// One-way propagation delay of both directions.
    pub delay: Duration,
    /// Queue limit at the entrance of each direction (default 1000pkt): the
    /// buffer its queue discipline manages.
    #[serde(default)]
    pub queue: QueueLimit,
    /// Queue discipline of both directions (default drop-tail).
    #[serde(default, skip_serializing_if = "QdiscSpec::is_drop_tail")]
    pub qdisc: QdiscSpec,
    /// Random loss of both directions (default none).
    #[serde(default)]
    pub loss: LossSpec,
    /// Overrides for the forward direction.
    #[serde(default)]
    pub forward: DirectionSpec,
    /// Overrides for the reverse direction.
    #[serde(default)]
    pub reverse: DirectionSpec,
    /// Changes over time.
    #[serde(default)]
    pub schedule: Vec<ScheduleEntry>,
    /// Outage windows (100 % loss in both directions).
    #[serde(default)]
    pub outages: Vec<OutageSpec>,
    /// Vertical handovers: an outage plus a switch to new link settings.
    #[serde(default)]
    pub handovers: Vec<LinkHandoverSpec>,
    /// Link-layer ARQ on both directions (the loss model is then the loss
    /// of one attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arq: Option<ArqSpec>,
    /// On/off outages drawn from distributions (besides `outages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage_process: Option<OutageProcessSpec>,
    /// A LEO satellite access link (Starlink-like): reconfigurations every
    /// `period` that change the delay and the capacities, with delay
    /// spikes, outages and non-congestive loss ([`LeoSpec`]). The link's
    /// directions then run the series it draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leo: Option<LeoSpec>,
}

/// Per-direction overrides of a link's settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "a direction's settings such as { rate = \"2Mbit/s\" }"
)]
pub struct DirectionSpec {
    /// Rate of this direction.
    pub rate: Option<Rate>,
    /// Propagation delay of this direction.
    pub delay: Option<Duration>,
    /// Queue limit of this direction.
    pub queue: Option<QueueLimit>,
    /// Queue discipline of this direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscSpec>,
    /// Random loss of this direction.
    pub loss: Option<LossSpec>,
    /// Link-layer ARQ of this direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arq: Option<ArqSpec>,
    /// A Mahimahi delivery-opportunity trace file: the rate source of this
    /// direction (its `rate` is then not used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// CellReplay's packet-train trace (base delay and light delivery
    /// opportunities, [`crate::link::TrainTrace`]): with `trace` as the heavy
    /// delivery opportunities, the direction is replayed as CellReplay does
    /// ([`crate::link::CellReplay`]); its `delay` and `rate` are then not
    /// used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cellreplay_train: Option<String>,
    /// CellReplay's packet-size latency offsets ([`crate::link::SizeDelays`]),
    /// with `cellreplay_train`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cellreplay_size_delay: Option<String>,
    /// CellReplay's idle timer: how long the light queue must have been
    /// empty before a packet starts a new train (default 0, as the authors'
    /// tool), with `cellreplay_train`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cellreplay_idle: Option<Duration>,
    /// A CSV trace (time, rate) of this direction's rate
    /// ([`crate::link::CsvTrace`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_trace: Option<String>,
    /// A CSV trace (time, one-way delay) of this direction's delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_trace: Option<String>,
    /// How `delay_trace` is written (default CSV `time,delay` points).
    #[serde(skip_serializing_if = "DelayTraceFormat::is_csv")]
    pub delay_trace_format: DelayTraceFormat,
    /// How `delay_trace` is read between two points (default: a step).
    #[serde(skip_serializing_if = "DelayInterpolation::is_step")]
    pub delay_interpolation: DelayInterpolation,
    /// A CSV trace (time, loss probability per packet) of this direction's
    /// loss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_trace: Option<String>,
    /// Lets packets overtake each other when the delay drops (by default
    /// the pipe is first in, first out).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reorder: bool,
}

/// A window during which the link drops every packet in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an outage such as { start = \"30s\", duration = \"2s\" }"
)]
pub struct OutageSpec {
    /// Start of the outage.
    pub start: Duration,
    /// Its length.
    pub duration: Duration,
}

/// The name of link `i` (its `name` or `link<i>`).
pub fn link_name(l: &LinkSpec, i: usize) -> String {
    l.name.clone().unwrap_or_else(|| format!("link{i}"))
}
