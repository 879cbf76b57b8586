//! Validation: what the types cannot check (ranges, references between
//! fields, routes), in passes that each name the field and the value of the
//! first problem they find. The passes run in this order, and the first
//! error wins:
//!
//! 1. the run: `duration` and `output.interval` above zero;
//! 2. the resources it asks for ([`limits`], bounds of [`crate::limits`]);
//! 3. the names ([`names`], rules of [`crate::names`]);
//! 4. each link in file order ([`links`]): its ends and name, its settings,
//!    schedule, handovers ([`handovers`]), ARQ, traces ([`traces`]), LEO
//!    model ([`leo`]), outage process and outage windows;
//! 5. each flow ([`flows`]): its nodes, TCP and congestion-control
//!    settings, times, commands and routes, and a UDP flow's pattern
//!    ([`udp`]);
//! 6. each workload of short transfers ([`workloads`]);
//! 7. the handoffs of multi-homed nodes ([`handoffs`]);
//! 8. the link-layer reports the links can make ([`limits::check_reports`]).

mod flows;
mod handoffs;
mod handovers;
mod leo;
mod limits;
mod links;
mod names;
mod traces;
mod udp;
mod workloads;

use super::{Scenario, ScenarioError};
use wavelab_tcp::Duration;

impl Scenario {
    /// Checks what the types cannot: ranges, references between fields, routes.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration.is_zero() {
            return Err(ScenarioError::at("duration", "must be above zero"));
        }
        if self.output.interval.is_zero() {
            return Err(ScenarioError::at("output.interval", "must be above zero"));
        }
        limits::check(self)?;
        names::check(self)?;
        if self.links.is_empty() {
            return Err(ScenarioError::at("links", "at least one link is needed"));
        }
        if self.flows.is_empty() && self.workloads.is_empty() {
            return Err(ScenarioError::at(
                "flows",
                "at least one flow (or workload) is needed",
            ));
        }
        links::check(self)?;
        let topo = self.topology();
        flows::check(self, &topo)?;
        workloads::check(self, &topo)?;
        handoffs::check(self, &topo)?;
        limits::check_reports(self)
    }

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

/// Checks the fields of a table at `p` whose kind (e.g. `pattern "cbr"`)
/// reads `reads` (each field and whether it is required): `given` says
/// which fields are set. A required field not set is missing, a field set
/// that the kind does not read is an error, each naming the field.
pub(super) fn check_fields(
    p: &str,
    kind: &str,
    given: &[(&str, bool)],
    reads: &[(&str, bool)],
) -> Result<(), ScenarioError> {
    for &(field, set) in given {
        match reads.iter().find(|(f, _)| *f == field) {
            Some((_, true)) if !set => {
                return Err(ScenarioError::at(
                    format!("{p}.{field}"),
                    format!("missing ({kind} needs it)"),
                ))
            }
            None if set => {
                return Err(ScenarioError::at(
                    format!("{p}.{field}"),
                    format!("{kind} does not use it"),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// An error at `path` unless `t` is before the end of the run of `sc` (an
/// event at or after it would silently never happen).
fn check_before_end(sc: &Scenario, path: &str, t: Duration) -> Result<(), ScenarioError> {
    if t >= sc.duration {
        return Err(ScenarioError::at(
            path,
            format!("{t} is not before the end of the run ({})", sc.duration),
        ));
    }
    Ok(())
}
