//! Packet schedulers: which subflow carries the next data (RFC 8684 leaves
//! the choice to the implementation, section 3.3.8 only fixes what a
//! backup subflow is).
//!
//! * [`Scheduler::LowestRtt`]: the subflow with the smallest smoothed RTT
//!   among those with room in their congestion window, as Linux's default
//!   scheduler does (net/mptcp/protocol.c, `mptcp_subflow_get_send`, read
//!   to confirm the rule).
//! * [`Scheduler::RoundRobin`]: one MSS to each subflow with room in turn.
//! * [`Scheduler::Redundant`]: every subflow carries all the data, each as
//!   fast as its window lets it.
//!
//! Backup semantics (RFC 8684 section 3.3.8, the B flag): a backup subflow
//! is offered data only when no regular subflow can carry data at all
//! (none is established and alive), not when the regular ones' windows are
//! merely full; that is Linux's rule too.

use serde::{Deserialize, Serialize};

/// A packet scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Lowest smoothed RTT first among the subflows with window space.
    #[default]
    LowestRtt,
    /// One MSS per subflow with window space, in turn.
    RoundRobin,
    /// All data on every subflow.
    Redundant,
}

impl Scheduler {
    /// Every scheduler's name, as scenarios spell it.
    pub const NAMES: [&'static str; 3] = ["lowest-rtt", "round-robin", "redundant"];
}

/// A subflow as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Its index in the connection.
    pub index: usize,
    /// Its smoothed RTT in seconds (`f64::INFINITY` before a sample).
    pub srtt: f64,
}

/// The subflow [`Scheduler::LowestRtt`] or [`Scheduler::RoundRobin`]
/// picks among `candidates` (those with window space, backup rule
/// applied), `next` being the round-robin turn; the first of equal RTTs.
pub fn pick(s: Scheduler, candidates: &[Candidate], next: usize) -> Option<usize> {
    match s {
        Scheduler::LowestRtt | Scheduler::Redundant => candidates
            .iter()
            .fold(None::<&Candidate>, |best, c| match best {
                Some(b) if b.srtt <= c.srtt => Some(b),
                _ => Some(c),
            })
            .map(|c| c.index),
        Scheduler::RoundRobin => candidates
            .iter()
            .find(|c| c.index >= next)
            .or(candidates.first())
            .map(|c| c.index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(index: usize, srtt: f64) -> Candidate {
        Candidate { index, srtt }
    }

    #[test]
    fn lowest_rtt_takes_the_fastest_with_room() {
        let cs = [c(0, 0.050), c(1, 0.020), c(2, 0.020)];
        assert_eq!(pick(Scheduler::LowestRtt, &cs, 0), Some(1));
        assert_eq!(pick(Scheduler::LowestRtt, &cs[..1], 0), Some(0));
        assert_eq!(pick(Scheduler::LowestRtt, &[], 0), None);
    }

    #[test]
    fn round_robin_takes_turns_and_wraps() {
        let cs = [c(0, 0.05), c(2, 0.01)];
        assert_eq!(pick(Scheduler::RoundRobin, &cs, 0), Some(0));
        assert_eq!(pick(Scheduler::RoundRobin, &cs, 1), Some(2));
        assert_eq!(pick(Scheduler::RoundRobin, &cs, 3), Some(0));
    }

    #[test]
    fn names_parse() {
        for n in Scheduler::NAMES {
            let s: Scheduler = serde_json::from_str(&format!("\"{n}\"")).unwrap();
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{n}\""));
        }
    }
}
