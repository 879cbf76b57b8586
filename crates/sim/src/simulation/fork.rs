//! Forking a simulation at an instant, and changes that act only after it.
//!
//! A study whose runs differ only in what happens after some instant (a
//! node handoff at one of many instants) re-simulates the same past once
//! per run. A fork copies the whole state of a simulation (event queue,
//! link directions, endpoints with their congestion controls, random
//! streams, tables so far) at the instant it reached; the copy continues
//! independently. A change that acts only after that instant
//! ([`Simulation::set_handoff_at`]) then gives the copy exactly the run a
//! fresh simulation of the changed scenario gives: the state up to now is
//! the same in both, because nothing before now depended on the change.
//!
//! That last condition is what the checks here keep. A direction in virtual
//! time plans each packet's departure when it admits it, with the outage
//! windows it knows; a handoff's windows on its access links must therefore
//! be known at every admission, so [`Simulation::new_forkable`] runs the
//! links that break-before-make handoffs touch in reference mode
//! (bit-identical tables to virtual time, `crates/sim/tests/engines.rs`;
//! only the engine's own figures, its event count and peak packets in
//! flight, differ), where a window acts only when the clock reaches it. A
//! make-before-break handoff only switches routes, so its links stay in
//! virtual time.

use super::Simulation;
use crate::engine::Event;
use wavelab_model::compile::{
    at as instant_of, compile_links, compile_routes, expand_switches, ChangeKind,
};
use wavelab_model::scenario::{Scenario, ScenarioError};
use wavelab_tcp::Duration;

impl Simulation {
    /// The simulation of `sc` with every link a break-before-make node
    /// handoff touches in reference mode, so that [`Simulation::set_handoff_at`] can move its
    /// handoffs on a fork. Its results are bit-identical to
    /// [`Simulation::new`]'s (its event count and peak packets are those of
    /// reference mode).
    pub fn new_forkable(sc: Scenario) -> Result<Self, ScenarioError> {
        Self::build_with(sc, false, true)
    }

    /// A copy of the simulation at the instant it reached, continuing
    /// independently: running both to the end gives the same results. The
    /// copy has no packet captures (they stay with the original). The error
    /// names a flow whose congestion control cannot be copied (a user
    /// algorithm without [`wavelab_tcp::CongestionControl::clone_box`]).
    pub fn fork(&self) -> Result<Simulation, String> {
        for f in &self.flows {
            if !f.sender.can_clone() {
                return Err(format!(
                    "flow {} runs congestion control \"{}\", which cannot be copied (it gives \
                     no clone_box), so the simulation cannot be forked",
                    f.name, f.algorithm
                ));
            }
        }
        Ok(self.clone())
    }

    /// Moves node handoff `index` (its place in the scenario's `handoffs`)
    /// to `at`: the run continues as a fresh run of the scenario with that
    /// handoff at `at` would. Both the handoff's old instant and `at` must
    /// be after now, and the links whose outage windows move must run in
    /// reference mode ([`Simulation::new_forkable`]); the error says which
    /// condition failed.
    pub fn set_handoff_at(&mut self, index: usize, at: Duration) -> Result<(), String> {
        let field = format!("handoffs[{index}].at");
        let Some(spec) = self.sc.handoffs.get(index) else {
            return Err(format!(
                "{field}: the scenario has {} handoffs",
                self.sc.handoffs.len()
            ));
        };
        let (old, new) = (instant_of(spec.at), instant_of(at));
        let now = self.now.as_secs_f64();
        if old <= self.now || new <= self.now {
            return Err(format!(
                "{field}: a fork at {now} s can move a handoff from and to instants after it \
                 only ({} s to {} s)",
                old.as_secs_f64(),
                new.as_secs_f64()
            ));
        }
        let mut sc = self.sc.clone();
        sc.handoffs[index].at = at;
        sc.validate().map_err(|e| format!("{field}: {e}"))?;
        let before = compile_links(&self.sc, &self.plans()).map_err(|e| format!("{field}: {e}"))?;
        let (_, plans) = compile_routes(&sc, &self.topo);
        let plans = expand_switches(plans, &sc);
        let after = compile_links(&sc, &plans).map_err(|e| format!("{field}: {e}"))?;
        let same_plans = plans.len() == self.handoffs.len()
            && plans.iter().zip(&self.handoffs).all(|(p, h)| {
                p.from == h.plan.from && p.to == h.plan.to && p.switches == h.plan.switches
            });
        let same_changes = after.changes.len() == self.changes.len()
            && after
                .changes
                .iter()
                .zip(&self.changes)
                .all(|(a, b)| match (&a.what, &b.what) {
                    (ChangeKind::NodeHandoff(x), ChangeKind::NodeHandoff(y)) => x == y,
                    (ChangeKind::Link { link: x, .. }, ChangeKind::Link { link: y, .. }) => {
                        x == y && a.at == b.at
                    }
                    _ => false,
                });
        if !same_plans || !same_changes {
            return Err(format!(
                "{field}: moving the handoff to {} s changes the order of the scenario's \
                 changes and handoffs; a fork cannot do that",
                new.as_secs_f64()
            ));
        }
        // the windows that move, all after now (both instants are)
        let moved: Vec<usize> = (0..after.dirs.len())
            .filter(|&d| after.dirs[d].outages.windows() != before.dirs[d].outages.windows())
            .collect();
        for &d in &moved {
            if !self.net.set_outages(d, after.dirs[d].outages.clone()) {
                return Err(format!(
                    "{field}: links[{}] runs in virtual time, so its outage windows cannot move; \
                     build the simulation with Simulation::new_forkable",
                    d / 2
                ));
            }
        }
        for (i, (a, b)) in after.changes.iter().zip(&self.changes).enumerate() {
            if a.at == b.at {
                continue;
            }
            if b.at <= self.end {
                self.q.remove(b.at, Event::Change(i as u32));
            }
            if a.at <= self.end {
                self.q.push(a.at, Event::Change(i as u32));
            }
        }
        for (h, p) in self.handoffs.iter_mut().zip(plans) {
            h.plan = p;
        }
        self.changes = after.changes;
        self.sc = sc;
        Ok(())
    }

    /// The node handoffs' plans, as compiled.
    fn plans(&self) -> Vec<wavelab_model::compile::NodeHandoffPlan> {
        self.handoffs.iter().map(|h| h.plan.clone()).collect()
    }
}
