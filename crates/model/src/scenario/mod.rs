//! The scenario schema: the one definition of what a scenario file may say.
//!
//! A scenario is data: links (each a duplex pair of directions with rate,
//! delay, queue, loss, a schedule of changes and outage windows), flows
//! (endpoints, algorithm, TCP parameters, start/stop/size), output settings and
//! a seed. Unknown fields are rejected; every error names the field path and
//! the bad value, e.g. `links[1].rate: "8 Mbps/s" is not a rate, write e.g.
//! "8Mbit/s"`.
//!
//! The schema is in parts: the links ([`links`]), their handovers
//! ([`handovers`]), the handoffs of multi-homed nodes ([`handoffs`]), the
//! flows ([`flows`]) and the UDP patterns ([`udp`]), link presets; the settings of a link direction are
//! the link layer's types ([`crate::link`]), re-exported here. What the
//! types cannot check, the validation passes do (`validate`).

mod flows;
mod handoffs;
mod handovers;
mod links;
mod mptcp;
mod plain;
mod preset;
#[cfg(test)]
pub(crate) mod tests;
mod udp;
mod validate;

pub use crate::link::parse_queue;
pub use crate::link::qdisc::{
    CodelSpec, DualPi2Spec, FqCodelSpec, PieSpec, QdiscSpec, RedSpec, DISCIPLINES,
};
pub use crate::link::{
    ArqOrder, ArqSpec, BackoffSpec, DelayInterpolation, Direction, Distribution, LossSpec,
    OutageProcessSpec, QueueLimit, ReportWhen, ScheduleEntry, MAX_RETRIES,
};
pub use flows::{flow_name, FlowSpec};
pub(crate) use handoffs::link_index;
pub use handoffs::{
    detached_links, handoff_order, Held, NodeHandoffKind, NodeHandoffSpec, NotifySpec, TransferSpec,
};
pub use handovers::{LinkHandoverSpec, LinkHandoverTime, SteadyRule};
pub use links::{link_name, DirectionSpec, LinkSpec, OutageSpec};
pub use mptcp::{subflow_plan, Coupling, Failover, MptcpSpec, PathManager, Scheduler, SubflowPlan};
pub use preset::{LinkPreset, WLAN_ATTEMPT_LOSS};
pub use udp::{
    PingSpec, Transport, UdpPattern, UdpSpec, MAX_UDP_PAYLOAD, UDP_OVERHEAD, VIDEO_FPS,
    VIDEO_PACKET, VOICE_INTERVAL, VOICE_PACKET,
};

use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::fmt;
use wavelab_tcp::Duration;

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
        let value: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| ScenarioError::at("", format!("not valid JSON: {e}")))?;
        Scenario::from_value(value)
    }

    /// Parses and validates a scenario written as TOML.
    ///
    /// The TOML is read into a JSON value first and the scenario is
    /// deserialized from that, as [`Scenario::from_json_str`] does: one
    /// deserializer for both formats, because the serde code generated for
    /// each (format, type) pair was most of this crate's build time.
    pub fn from_toml_str(s: &str) -> Result<Scenario, ScenarioError> {
        let value: serde_json::Value = toml::from_str(s).map_err(|e: toml::de::Error| {
            ScenarioError::at("", format!("not valid TOML: {}", e.to_string().trim()))
        })?;
        Scenario::from_value(value)
    }

    /// Deserializes and validates a scenario from a JSON value, whichever
    /// format it was written in: the one place serde meets the scenario's
    /// types, so that their deserialization is compiled once.
    fn from_value(value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        let sc: Scenario = serde_path_to_error::deserialize(value)
            .map_err(|e| locate(e, |i: &serde_json::Error| i.to_string()))?;
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
}

impl Scenario {
    /// The graph of the scenario's links: its nodes, link directions and
    /// routes.
    pub fn topology(&self) -> Topology {
        Topology::new(self.links.iter().map(|l| &l.between))
    }
}
