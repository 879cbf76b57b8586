//! The scenario schema: the one definition of what a scenario file may say.
//!
//! A scenario is data: links (each a duplex pair of directions with rate,
//! delay, queue, loss, a schedule of changes and outage windows), flows
//! (endpoints, algorithm, TCP parameters, start/stop/size), output settings and
//! a seed. Unknown fields are rejected; every error names the field path and
//! the bad value, e.g. `links[1].rate: "8 Mbps/s" is not a rate, write e.g.
//! "8Mbit/s"`.

mod handoff;
mod plain;
mod preset;
mod traces;
mod wireless;

pub(crate) use handoff::link_index;
pub use handoff::{
    detached_links, handoff_order, Held, NodeHandoffKind, NodeHandoffSpec, NotifySpec, TransferSpec,
};
pub use preset::{LinkPreset, WLAN_ATTEMPT_LOSS};
pub use traces::DelayInterpolation;
pub use wireless::{
    ArqOrder, ArqSpec, BackoffSpec, Distribution, OutageProcessSpec, ReportWhen, MAX_RETRIES,
};

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use wavelab_tcp::units::{parse_size, ByteSize};
use wavelab_tcp::{CcConfig, Duration, Rate, TcpConfig};

/// A scenario error: where (a field path such as `links[1].rate`) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Field path; empty for file-level errors.
    pub path: String,
    /// What is wrong, quoting the bad value.
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario table")]
pub struct Scenario {
    /// Short name, used in output file names.
    #[serde(default)]
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Simulated time to run.
    pub duration: Duration,
    /// Seed of every random choice (loss, initial sequence numbers).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// What to record.
    #[serde(default)]
    pub output: OutputSpec,
    /// Links; nodes are the names they connect.
    pub links: Vec<LinkSpec>,
    /// Flows.
    pub flows: Vec<FlowSpec>,
    /// Handoffs of multi-homed nodes between their access links.
    #[serde(default)]
    pub handoffs: Vec<NodeHandoffSpec>,
}

pub use crate::limits::MAX_SAMPLES;

fn default_seed() -> u64 {
    1
}

/// What the run records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "an output table such as { interval = \"100ms\" }"
)]
pub struct OutputSpec {
    /// Sampling interval of the per-flow time series and queue series.
    pub interval: Duration,
    /// Record queue lengths at each sample.
    pub queues: bool,
    /// Also record a row of the notified flow's time series at every
    /// cross-layer notification, right after its sender handled it.
    pub notification_samples: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            interval: Duration::from_millis(100),
            queues: true,
            notification_samples: false,
        }
    }
}

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
    /// Random loss of this direction.
    pub loss: Option<LossSpec>,
    /// Link-layer ARQ of this direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arq: Option<ArqSpec>,
    /// A Mahimahi delivery-opportunity trace file: the rate source of this
    /// direction (its `rate` is then not used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// A CSV trace (time, rate) of this direction's rate
    /// ([`crate::link::CsvTrace`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_trace: Option<String>,
    /// A CSV trace (time, one-way delay) of this direction's delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_trace: Option<String>,
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
    /// Queue limit at the entrance of each direction (default 1000pkt).
    #[serde(default)]
    pub queue: QueueLimit,
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
}

/// One flow (or `count` identical flows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a flow such as { from = \"a\", to = \"b\" }"
)]
pub struct FlowSpec {
    /// Name (default `flow<i>`; replicas get `#k`).
    #[serde(default)]
    pub name: Option<String>,
    /// Node of the sender.
    pub from: String,
    /// Node of the receiver.
    pub to: String,
    /// Congestion control (default NewReno).
    #[serde(default)]
    pub cc: CcConfig,
    /// TCP parameters of both endpoints.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// When the sender opens the connection (default 0 s).
    #[serde(default)]
    pub start: Duration,
    /// When the application stops writing (default: never).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Bytes to transfer (default: unlimited).
    #[serde(default)]
    pub size: Option<ByteSize>,
    /// Number of identical flows (default 1).
    #[serde(default = "one_u32")]
    pub count: u32,
    /// Explicit node path (default: the shortest path by hops).
    #[serde(default)]
    pub path: Option<Vec<String>>,
    /// Record every packet of this flow in the packet log.
    #[serde(default)]
    pub log_packets: bool,
    /// Emulation only: a shell command run in the sender node's namespace
    /// at `start` instead of the built-in sender (the simulator refuses
    /// it). See `docs/emulation.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
    /// Emulation only: a shell command run in the receiver node's namespace
    /// from the start of the run (a server for `cmd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_cmd: Option<String>,
}

fn one_u32() -> u32 {
    1
}

fn locate<E>(e: serde_path_to_error::Error<E>, message: impl Fn(&E) -> String) -> ScenarioError {
    let path = e.path().to_string();
    let path = if path == "." { String::new() } else { path };
    let message = message(e.inner());
    // serde names a missing field in its message, at the table's path: put
    // it in the path, so that every message starts with the field it is about
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'));
    match missing {
        Some(field) if path.is_empty() => ScenarioError::at(field, "missing (it is required)"),
        Some(field) => ScenarioError::at(format!("{path}.{field}"), "missing (it is required)"),
        None => ScenarioError::at(path, plain::plain(&message)),
    }
}

impl Scenario {
    /// Parses and validates a scenario written as JSON (what the Python layer
    /// passes after reading TOML).
    pub fn from_json_str(s: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(s);
        let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            locate(e, |i: &serde_json::Error| {
                // The JSON position means nothing to someone who wrote TOML.
                let m = i.to_string();
                let suffix = format!(" at line {} column {}", i.line(), i.column());
                m.strip_suffix(&suffix).unwrap_or(&m).to_string()
            })
        })?;
        sc.validate()?;
        Ok(sc)
    }

    /// Parses and validates a scenario written as TOML.
    pub fn from_toml_str(s: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(s).map_err(|e| {
            ScenarioError::at("", format!("not valid TOML: {}", e.to_string().trim()))
        })?;
        let sc: Scenario = serde_path_to_error::deserialize(de)
            .map_err(|e| locate(e, |i: &toml::de::Error| i.message().to_string()))?;
        sc.validate()?;
        Ok(sc)
    }

    /// The scenario as JSON (normalised: every default filled in).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serialises")
    }

    /// Node names in order of first appearance in `links`.
    pub fn node_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for l in &self.links {
            for n in &l.between {
                if !v.contains(n) {
                    v.push(n.clone());
                }
            }
        }
        v
    }

    /// Checks what the types cannot: ranges, references between fields, routes.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration.is_zero() {
            return Err(ScenarioError::at("duration", "must be above zero"));
        }
        if self.output.interval.is_zero() {
            return Err(ScenarioError::at("output.interval", "must be above zero"));
        }
        crate::limits::check(self)?;
        crate::names::check(self)?;
        if self.links.is_empty() {
            return Err(ScenarioError::at("links", "at least one link is needed"));
        }
        if self.flows.is_empty() {
            return Err(ScenarioError::at("flows", "at least one flow is needed"));
        }
        let mut names = BTreeMap::new();
        for (i, l) in self.links.iter().enumerate() {
            let p = format!("links[{i}]");
            if l.between[0].is_empty() || l.between[1].is_empty() {
                return Err(ScenarioError::at(
                    format!("{p}.between"),
                    "node names must not be empty",
                ));
            }
            if l.between[0] == l.between[1] {
                return Err(ScenarioError::at(
                    format!("{p}.between"),
                    format!("\"{}\" is connected to itself", l.between[0]),
                ));
            }
            let name = link_name(l, i);
            if let Some(j) = names.insert(name.clone(), i) {
                return Err(ScenarioError::at(
                    format!("{p}.name"),
                    format!("\"{name}\" is already the name of links[{j}]"),
                ));
            }
            check_settings(&p, Some(l.rate), Some(&l.loss), Some(l.queue))?;
            for (dname, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                check_settings(&format!("{p}.{dname}"), d.rate, d.loss.as_ref(), d.queue)?;
            }
            for (k, s) in l.schedule.iter().enumerate() {
                let sp = format!("{p}.schedule[{k}]");
                if s.rate.is_none() && s.delay.is_none() && s.queue.is_none() && s.loss.is_none() {
                    return Err(ScenarioError::at(
                        sp,
                        "changes nothing: set rate, delay, queue or loss",
                    ));
                }
                check_settings(&sp, s.rate, s.loss.as_ref(), s.queue)?;
                self.check_before_end(&format!("{sp}.at"), s.at)?;
            }
            for (k, h) in l.handovers.iter().enumerate() {
                let hp = format!("{p}.handovers[{k}]");
                check_settings(&hp, h.rate, h.loss.as_ref(), h.queue)?;
                if h.outage.is_zero()
                    && h.rate.is_none()
                    && h.delay.is_none()
                    && h.queue.is_none()
                    && h.loss.is_none()
                {
                    return Err(ScenarioError::at(
                        hp,
                        "changes nothing: set an outage, or the new rate, delay, queue or loss",
                    ));
                }
                if let LinkHandoverTime::At(t) = h.at {
                    self.check_before_end(&format!("{hp}.at"), t)?;
                }
                if h.at == LinkHandoverTime::Steady {
                    let st = &h.steady;
                    if !(st.fraction > 0.0 && st.fraction <= 1.0) {
                        return Err(ScenarioError::at(
                            format!("{hp}.steady.fraction"),
                            format!("{:?} is not a fraction (above 0, at most 1)", st.fraction),
                        ));
                    }
                    if st.earliest >= self.duration {
                        return Err(ScenarioError::at(
                            format!("{hp}.steady.earliest"),
                            format!(
                                "{} is not before the end of the run ({}), so the handover \
                                 could never happen (the default is 10s)",
                                st.earliest, self.duration
                            ),
                        ));
                    }
                    if let Some(latest) = st.latest {
                        if latest < st.earliest {
                            return Err(ScenarioError::at(
                                format!("{hp}.steady.latest"),
                                format!("{latest} is before steady.earliest ({})", st.earliest),
                            ));
                        }
                    }
                    if st.window.is_zero() {
                        return Err(ScenarioError::at(
                            format!("{hp}.steady.window"),
                            "must be above zero",
                        ));
                    }
                    let flows: u32 = self.flows.iter().map(|f| f.count).sum();
                    if st.flow >= flows {
                        return Err(ScenarioError::at(
                            format!("{hp}.steady.flow"),
                            format!("{} is not a flow index; there are {flows} flows", st.flow),
                        ));
                    }
                }
            }
            if let Some(a) = &l.arq {
                a.check(&format!("{p}.arq"))?;
            }
            for (dname, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                if let Some(a) = &d.arq {
                    a.check(&format!("{p}.{dname}.arq"))?;
                }
            }
            traces::check(&p, l)?;
            if let Some(o) = &l.outage_process {
                o.check(&format!("{p}.outage_process"), self.duration)?;
            }
            for (k, o) in l.outages.iter().enumerate() {
                self.check_before_end(&format!("{p}.outages[{k}].start"), o.start)?;
                if o.duration.is_zero() {
                    return Err(ScenarioError::at(
                        format!("{p}.outages[{k}].duration"),
                        "must be above zero",
                    ));
                }
            }
        }
        let nodes = self.node_names();
        let topo = crate::topology::Topology::new(self);
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            for (field, n) in [("from", &f.from), ("to", &f.to)] {
                if !nodes.contains(n) {
                    return Err(ScenarioError::at(
                        format!("{p}.{field}"),
                        format!("\"{n}\" is not a node; nodes are {}", nodes.join(", ")),
                    ));
                }
            }
            if f.from == f.to {
                return Err(ScenarioError::at(
                    format!("{p}.to"),
                    "sender and receiver are the same node",
                ));
            }
            if f.count == 0 {
                return Err(ScenarioError::at(
                    format!("{p}.count"),
                    "must be at least 1",
                ));
            }
            f.tcp
                .validate()
                .map_err(|m| ScenarioError::at(format!("{p}.tcp.{}", field_of(&m)), rest_of(&m)))?;
            f.cc.validate()
                .map_err(|m| ScenarioError::at(format!("{p}.cc.{}", field_of(&m)), rest_of(&m)))?;
            self.check_before_end(&format!("{p}.start"), f.start)?;
            if let Some(stop) = f.stop {
                if stop <= f.start {
                    return Err(ScenarioError::at(
                        format!("{p}.stop"),
                        format!("{stop} is not after start ({})", f.start),
                    ));
                }
            }
            if f.size.is_some_and(|s| s.0 == 0) {
                return Err(ScenarioError::at(format!("{p}.size"), "must be above zero"));
            }
            for (field, c) in [("cmd", &f.cmd), ("receiver_cmd", &f.receiver_cmd)] {
                if c.as_ref().is_some_and(|c| c.trim().is_empty()) {
                    return Err(ScenarioError::at(format!("{p}.{field}"), "is empty"));
                }
            }
            if f.receiver_cmd.is_some() && f.cmd.is_none() {
                return Err(ScenarioError::at(
                    format!("{p}.receiver_cmd"),
                    "needs cmd: the built-in sender talks only to the built-in receiver",
                ));
            }
            match &f.path {
                Some(path) => {
                    topo.route_along(path)
                        .map_err(|m| ScenarioError::at(format!("{p}.path"), m))?;
                    if path.first() != Some(&f.from) || path.last() != Some(&f.to) {
                        return Err(ScenarioError::at(
                            format!("{p}.path"),
                            format!("must start at \"{}\" and end at \"{}\"", f.from, f.to),
                        ));
                    }
                }
                None => {
                    for (a, b) in [(&f.from, &f.to), (&f.to, &f.from)] {
                        if topo.shortest_route(a, b).is_none() {
                            return Err(ScenarioError::at(
                                format!("{p}.to"),
                                format!("no route from \"{a}\" to \"{b}\""),
                            ));
                        }
                    }
                }
            }
        }
        handoff::validate(self, &topo)
    }
}

impl Scenario {
    /// An error at `path` unless `t` is before the end of the run (an event
    /// at or after it would silently never happen).
    fn check_before_end(&self, path: &str, t: Duration) -> Result<(), ScenarioError> {
        if t >= self.duration {
            return Err(ScenarioError::at(
                path,
                format!("{t} is not before the end of the run ({})", self.duration),
            ));
        }
        Ok(())
    }
}

impl Scenario {
    /// Checks what only the emulator can run: flows that run a command
    /// (`cmd`) have nothing to simulate.
    pub fn check_simulable(&self) -> Result<(), ScenarioError> {
        match self.flows.iter().position(|f| f.cmd.is_some()) {
            Some(i) => Err(ScenarioError::at(
                format!("flows[{i}].cmd"),
                "a command runs only under `wavelab emulate`; remove it to simulate the flow",
            )),
            None => Ok(()),
        }
    }
}

/// The name of link `i` (its `name` or `link<i>`).
pub fn link_name(l: &LinkSpec, i: usize) -> String {
    l.name.clone().unwrap_or_else(|| format!("link{i}"))
}

/// The name of replica `k` of flow `i` (its `name` or `flow<i>`, followed by
/// `#k` when the flow has `count > 1`).
pub fn flow_name(f: &FlowSpec, i: usize, k: u32) -> String {
    let base = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
    if f.count > 1 {
        format!("{base}#{k}")
    } else {
        base
    }
}

fn field_of(m: &str) -> &str {
    m.split(':').next().unwrap_or("")
}
fn rest_of(m: &str) -> String {
    m.split_once(": ")
        .map_or(m.to_string(), |(_, r)| r.to_string())
}

/// Checks the link settings present under `path` (`<path>.rate`, ...).
fn check_settings(
    path: &str,
    rate: Option<Rate>,
    loss: Option<&LossSpec>,
    queue: Option<QueueLimit>,
) -> Result<(), ScenarioError> {
    if let Some(r) = rate {
        check_rate(&format!("{path}.rate"), r)?;
    }
    if let Some(l) = loss {
        check_loss(&format!("{path}.loss"), l)?;
    }
    if let Some(q) = queue {
        check_queue(&format!("{path}.queue"), q)?;
    }
    Ok(())
}

fn check_rate(path: &str, r: Rate) -> Result<(), ScenarioError> {
    if r.as_bps() == 0 {
        return Err(ScenarioError::at(
            path,
            "must be above zero (use an outage to stop a link)",
        ));
    }
    Ok(())
}

fn check_queue(path: &str, q: QueueLimit) -> Result<(), ScenarioError> {
    match q {
        QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
            Err(ScenarioError::at(path, "must hold at least one packet"))
        }
        _ => Ok(()),
    }
}

fn check_loss(path: &str, l: &LossSpec) -> Result<(), ScenarioError> {
    let probs: Vec<(&str, f64)> = match *l {
        LossSpec::None => vec![],
        LossSpec::Bernoulli { p } => vec![("p", p)],
        LossSpec::GilbertElliott {
            p_good_bad,
            p_bad_good,
            loss_good,
            loss_bad,
        } => vec![
            ("p_good_bad", p_good_bad),
            ("p_bad_good", p_bad_good),
            ("loss_good", loss_good),
            ("loss_bad", loss_bad),
        ],
    };
    for (name, p) in probs {
        if !(0.0..=1.0).contains(&p) {
            return Err(ScenarioError::at(
                format!("{path}.{name}"),
                format!("{p:?} is not a probability (0 to 1)"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const BASE: &str = r#"
        duration = "10s"
        [[links]]
        between = ["a", "b"]
        rate = "10Mbit/s"
        delay = "25ms"
        queue = "100pkt"
        [[flows]]
        from = "a"
        to = "b"
    "#;

    /// The error message a scenario written as TOML gets (for the tests of
    /// this module, `limits` and `names`).
    pub(crate) fn err(toml_text: &str) -> String {
        Scenario::from_toml_str(toml_text).unwrap_err().to_string()
    }

    #[test]
    fn minimal_scenario_gets_defaults() {
        let s = Scenario::from_toml_str(BASE).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.output.interval, Duration::from_millis(100));
        assert_eq!(s.flows[0].cc.name(), "newreno");
        assert_eq!(s.links[0].queue, QueueLimit::Packets(100));
        // the JSON form round-trips
        let again = Scenario::from_json_str(&s.to_json()).unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn bad_rate_names_field_and_value() {
        let t = BASE.replace("\"10Mbit/s\"", "\"8 Mbps/s\"");
        assert_eq!(
            err(&t),
            "links[0].rate: \"8 Mbps/s\" is not a rate, write e.g. \"8Mbit/s\""
        );
    }

    #[test]
    fn unknown_fields_are_rejected_with_their_path() {
        let t = BASE.replace("queue = \"100pkt\"", "queue = \"100pkt\"\nqeue = 3");
        let e = err(&t);
        assert!(e.starts_with("links[0].qeue: unknown field `qeue`"), "{e}");
        let t = BASE.replace(
            "to = \"b\"",
            "to = \"b\"\n[flows.tcp]\nmss = 1000\nsak = true",
        );
        let e = err(&t);
        assert!(
            e.starts_with("flows[0].tcp.sak: unknown field `sak`"),
            "{e}"
        );
    }

    #[test]
    fn semantic_errors_name_the_field() {
        assert_eq!(
            err(&BASE.replace("to = \"b\"", "to = \"c\"")),
            "flows[0].to: \"c\" is not a node; nodes are a, b"
        );
        assert_eq!(
            err(&BASE.replace("to = \"b\"", "to = \"b\"\ntcp = { mss = 10 }")),
            "flows[0].tcp.mss: 10 is out of range 64..=65495 bytes"
        );
        assert_eq!(
            err(&BASE.replace(
                "queue = \"100pkt\"",
                "queue = \"100pkt\"\nloss = { model = \"bernoulli\", p = 1.5 }"
            )),
            "links[0].loss.p: 1.5 is not a probability (0 to 1)"
        );
        assert_eq!(
            err(&BASE.replace("delay = \"25ms\"", "delay = 25")),
            "links[0].delay: 25 has no unit; write a duration with a unit, e.g. \"240ms\""
        );
        assert_eq!(
            err(&BASE.replace("to = \"b\"", "to = \"b\"\ncc = \"vegas\"")),
            "flows[0].cc: \"vegas\" is not a congestion-control algorithm, choose one of tahoe, reno, newreno, westwood, cubic, bbr, wave, etcpv0, etcpv1, wsc-tcp"
        );
        assert!(err("duration = ").starts_with("not valid TOML"));
        assert_eq!(
            err(&BASE.replace("delay = \"25ms\"", "")),
            "links[0].delay: missing (it is required)"
        );
        assert_eq!(
            err(&BASE.replace("duration = \"10s\"", "")),
            "duration: missing (it is required)"
        );
    }

    #[test]
    fn handover_errors_name_the_field() {
        let with = |h: &str| {
            BASE.replace(
                "queue = \"100pkt\"",
                &format!("queue = \"100pkt\"\nhandovers = [{h}]"),
            )
        };
        Scenario::from_toml_str(&with(
            r#"{ at = "5s", outage = "2s", rate = "8Mbit/s", delay = "240ms" }"#,
        ))
        .unwrap();
        Scenario::from_toml_str(&with(
            r#"{ at = "steady", outage = "2s", steady = { earliest = "2s" } }"#,
        ))
        .unwrap();
        assert_eq!(
            err(&with(r#"{ at = "soon", outage = "2s" }"#)),
            "links[0].handovers[0].at: \"soon\" is not a time, write e.g. \"30s\", or \"steady\""
        );
        assert_eq!(
            err(&with(r#"{ at = "10s", outage = "2s" }"#)),
            "links[0].handovers[0].at: 10s is not before the end of the run (10s)"
        );
        assert_eq!(
            err(&with(r#"{ at = "5s" }"#)),
            "links[0].handovers[0]: changes nothing: set an outage, or the new rate, delay, queue or loss"
        );
        assert_eq!(
            err(&with(
                r#"{ at = "steady", outage = "1s", steady = { flow = 3, earliest = "1s" } }"#
            )),
            "links[0].handovers[0].steady.flow: 3 is not a flow index; there are 1 flows"
        );
    }

    /// `steady = { earliest = "8s", latest = "2s" }` was accepted and the
    /// handover happened at 2 s; events at or after the end silently never
    /// happened.
    #[test]
    fn inconsistent_times_are_refused() {
        let with =
            |h: &str| BASE.replace("queue = \"100pkt\"", &format!("queue = \"100pkt\"\n{h}"));
        assert_eq!(
            err(&with(
                r#"handovers = [{ at = "steady", outage = "1s", steady = { earliest = "8s", latest = "2s" } }]"#
            )),
            "links[0].handovers[0].steady.latest: 2s is before steady.earliest (8s)"
        );
        assert_eq!(
            err(&with(r#"handovers = [{ at = "steady", outage = "1s" }]"#)),
            "links[0].handovers[0].steady.earliest: 10s is not before the end of the run (10s), so the handover could never happen (the default is 10s)"
        );
        assert_eq!(
            err(&with(r#"schedule = [{ at = "12s", rate = "1Mbit/s" }]"#)),
            "links[0].schedule[0].at: 12s is not before the end of the run (10s)"
        );
        assert_eq!(
            err(&with(r#"outages = [{ start = "10s", duration = "1s" }]"#)),
            "links[0].outages[0].start: 10s is not before the end of the run (10s)"
        );
        Scenario::from_toml_str(&with(
            r#"handovers = [{ at = "steady", outage = "1s", steady = { earliest = "2s", latest = "2s" } }]"#,
        ))
        .unwrap();
    }

    /// `delay = "1e30s"` saturated to 2^64 - 1 ns and the run went ahead;
    /// `duration = "1e20h"` was reported as a problem of `output.interval`.
    #[test]
    fn out_of_range_durations_are_refused_with_the_value_as_written() {
        assert_eq!(
            err(&BASE.replace("\"25ms\"", "\"1e30s\"")),
            "links[0].delay: \"1e30s\" is too long (at most 1000000000s, about 31.7 years)"
        );
        assert_eq!(
            err(&BASE.replace("\"10s\"", "\"1e20h\"")),
            "duration: \"1e20h\" is too long (at most 1000000000s, about 31.7 years)"
        );
        let h = r#"handovers = [{ at = "1e30s", outage = "1s" }]"#;
        assert_eq!(
            err(&BASE.replace("queue = \"100pkt\"", &format!("queue = \"100pkt\"\n{h}"))),
            "links[0].handovers[0].at: \"1e30s\" is too long (at most 1000000000s, about 31.7 years)"
        );
    }

    #[test]
    fn commands_are_for_the_emulator_only() {
        let with = |f: &str| BASE.replace("to = \"b\"", &format!("to = \"b\"\n{f}"));
        let sc = Scenario::from_toml_str(&with("cmd = \"iperf3 -c $WAVELAB_TO\"")).unwrap();
        assert_eq!(
            sc.check_simulable().unwrap_err().to_string(),
            "flows[0].cmd: a command runs only under `wavelab emulate`; remove it to simulate the flow"
        );
        assert_eq!(err(&with("cmd = \" \"")), "flows[0].cmd: is empty");
        assert_eq!(
            err(&with("receiver_cmd = \"iperf3 -s\"")),
            "flows[0].receiver_cmd: needs cmd: the built-in sender talks only to the built-in receiver"
        );
        // absent, they stay out of the normalised form (and of store keys)
        let plain = Scenario::from_toml_str(BASE).unwrap();
        assert!(!plain.to_json().contains("cmd"));
    }

    #[test]
    fn absurd_sampling_is_refused() {
        let t = BASE.replace(
            "duration = \"10s\"",
            "duration = \"10s\"\noutput = { interval = \"1ns\" }",
        );
        assert_eq!(
            err(&t),
            "output.interval: 1ns over 10s makes 10000000000 samples per flow (at most 10000000); use a longer interval"
        );
    }

    #[test]
    fn queue_limits_parse() {
        assert_eq!(parse_queue("100pkt").unwrap(), QueueLimit::Packets(100));
        assert_eq!(parse_queue("150KB").unwrap(), QueueLimit::Bytes(150_000));
        assert!(parse_queue("100").is_err());
    }
}
