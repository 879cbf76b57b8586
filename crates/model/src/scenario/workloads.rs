//! Workloads of short transfers (`[[workloads]]`): TCP transfers from one
//! node to another that arrive by a process (Poisson with a rate, or the
//! times of a file) with sizes from a distribution (fixed, exponential,
//! Pareto, or an empirical CDF from a file). Each transfer is a TCP
//! connection of its own that opens at its arrival, sends its size and
//! closes; its completion time and slowdown are the `transfers` table's.
//! What the draws are is [`crate::workload`]'s.

use serde::{Deserialize, Serialize};
use wavelab_tcp::units::ByteSize;
use wavelab_tcp::{CcConfig, Duration, TcpConfig};

/// One workload: where its transfers go, how they arrive, how large they
/// are, and the TCP of their connections.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a workload such as { from = \"server\", to = \"client\", arrivals = { process = \"poisson\", rate = 10 }, sizes = { distribution = \"fixed\", size = \"100kB\" } }"
)]
pub struct WorkloadSpec {
    /// Name (default `workload<i>`); transfer `k` is the flow `<name>/<k>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Node of the senders.
    pub from: String,
    /// Node of the receivers.
    pub to: String,
    /// When transfers arrive.
    pub arrivals: ArrivalSpec,
    /// How large they are (optional when the arrivals file gives every
    /// transfer's size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizeSpec>,
    /// Congestion control of every transfer (default NewReno).
    #[serde(default)]
    pub cc: CcConfig,
    /// TCP parameters of both endpoints of every transfer.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// When arrivals begin (default 0 s).
    #[serde(default)]
    pub start: Duration,
    /// When arrivals end (default: the end of the run); transfers that
    /// arrived before run on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Explicit node path (default: the shortest path by hops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
}

/// How transfers arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalProcess {
    /// A Poisson process of `rate` transfers a second: exponential gaps.
    Poisson,
    /// The times (and optionally sizes) of the CSV file `file`.
    File,
}

/// The `arrivals` table of a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an arrivals table such as { process = \"poisson\", rate = 10 }"
)]
pub struct ArrivalSpec {
    /// The process.
    pub process: ArrivalProcess,
    /// Mean transfers a second (`poisson`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The CSV file of arrival times, one transfer a line: `time` or
    /// `time,size` (`file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// How transfer sizes are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeDistribution {
    /// Every transfer is `size` bytes.
    Fixed,
    /// Exponential with mean `mean`.
    Exponential,
    /// Pareto with mean `mean` and shape `shape` (above 1).
    Pareto,
    /// The piecewise-linear CDF of the CSV file `file` (`size,cdf` lines).
    Empirical,
}

impl SizeDistribution {
    /// The distribution's name as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            SizeDistribution::Fixed => "fixed",
            SizeDistribution::Exponential => "exponential",
            SizeDistribution::Pareto => "pareto",
            SizeDistribution::Empirical => "empirical",
        }
    }
}

/// The `sizes` table of a workload. Which fields a distribution needs and
/// which it refuses is checked by the validation (each error names the
/// field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a sizes table such as { distribution = \"pareto\", mean = \"50kB\", shape = 1.2 }"
)]
pub struct SizeSpec {
    /// The distribution.
    pub distribution: SizeDistribution,
    /// Every transfer's size (`fixed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<ByteSize>,
    /// The mean size (`exponential`, `pareto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<ByteSize>,
    /// The Pareto shape alpha, above 1 (`pareto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// The CSV file of the CDF (`empirical`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The name of workload `i` (its `name` or `workload<i>`).
pub fn workload_name(w: &WorkloadSpec, i: usize) -> String {
    w.name.clone().unwrap_or_else(|| format!("workload{i}"))
}
