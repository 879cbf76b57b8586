//! The simulation: the event loop over the network, the endpoints and the
//! handovers. Everything `impl Simulation` is in this folder:
//!
//! * `compile`: building a simulation from a scenario (the model's
//!   compiled links, changes and routes, each direction in the model it
//!   runs in, the flows and their endpoints, the first events);
//! * `endpoints`: driving the TCP senders and receivers;
//! * `handovers`: scheduled changes, link handovers (at a time or at
//!   `"steady"`) and node handoffs (route switches, notices, transfer
//!   measurements);
//! * `results`: the engine's state read into the model's tables
//!   ([`wavelab_model::tables`]).
//!
//! This module holds the state and dispatches the events; what is recorded
//! as it runs is [`crate::recorder`]'s.

#[cfg(test)]
mod capture_tests;
mod compile;
pub(crate) mod endpoints;
mod fork;
pub(crate) mod handovers;
pub(crate) mod mptcp;
mod results;

use self::endpoints::{Flow, SENDER};
use self::handovers::{LinkHandover, NodeHandoff};
use crate::engine::{Event, EventQueue};
use crate::notices::{Notice, Notices, Source};
use crate::recorder::Recorder;
use crate::routes::{Ctx, Network};
use std::collections::BTreeMap;
use std::io::{self, Write};
use wavelab_model::capture::{Capture, CaptureError, CaptureStats};
use wavelab_model::compile::Change;
use wavelab_model::link::{ArqSpec, ReportWhen};
use wavelab_model::scenario::Scenario;
use wavelab_model::tables::series::{QueueSeries, Series};
use wavelab_model::topology::{DirId, Topology};
use wavelab_tcp::cc::{Notification, SessionRecord};
use wavelab_tcp::{Duration, Instant, Receiver, Sender};

/// A simulation in progress. Cloning it (see [`Simulation::fork`]) copies
/// its whole state at this instant.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(crate) sc: Scenario,
    pub(crate) now: Instant,
    pub(crate) end: Instant,
    pub(crate) interval: Duration,
    pub(crate) q: EventQueue,
    pub(crate) net: Network,
    pub(crate) topo: Topology,
    pub(crate) flows: Vec<Flow>,
    pub(crate) changes: Vec<Change>,
    pub(crate) handovers: Vec<LinkHandover>,
    /// The handoffs, in the order they happen.
    pub(crate) handoffs: Vec<NodeHandoff>,
    pub(crate) series: Series,
    pub(crate) queues: QueueSeries,
    /// The packet log and the captures, and the event being processed.
    pub(crate) rec: Recorder,
    /// Cross-layer notifications in flight and delivered.
    pub(crate) notices: Notices,
    pub(crate) samples: u64,
    /// The event count at which the network is next synced even if nothing
    /// reads its counters, and the events between two such syncs
    /// ([`sync_period`]).
    pub(crate) next_sync: u64,
    pub(crate) sync_every: u64,
    /// The packet log's row limit ([`wavelab_model::limits::MAX_LOG_ROWS`]).
    pub(crate) log_limit: usize,
    /// The notifications table's row limit
    /// ([`wavelab_model::limits::MAX_NOTIFICATIONS`]).
    pub(crate) notice_limit: usize,
    /// Asked at each unrequested sync: true stops [`Simulation::run_until`]
    /// where it is ([`Simulation::set_interrupt_check`]).
    pub(crate) interrupt: Option<fn() -> bool>,
    /// Why the run stopped before its end, if it did.
    pub(crate) stopped: Option<String>,
    /// Each sending host's record of its past sessions, per (sender node,
    /// receiver node) path, oldest first: what an algorithm that keeps one
    /// (WSC-TCP's best-start) left when its flow completed, offered to the
    /// next flow on the same path when it starts.
    pub(crate) histories: BTreeMap<(String, String), Vec<SessionRecord>>,
    /// The Multipath TCP connections (their subflows are flows).
    pub(crate) mptcp: Vec<mptcp::MptcpConn>,
}

/// Events between two syncs of the network that nothing asked for, at
/// least: a virtual-time direction keeps every packet it admitted until a
/// sync finds the clock past it, so without them (queue sampling off, or a
/// long sampling interval) its memory would grow with the run. A sync only
/// moves the counters to the clock and forgets what is behind it, so when it
/// happens changes no result. Packet captures write out what is before the
/// clock at the same points (else they would hold a whole `run()`'s records
/// until its end).
const SYNC_EVERY: u64 = 1 << 10;

/// Events between two unrequested syncs with `dirs` link directions: at
/// least [`SYNC_EVERY`], and 16 per direction so that a sync, which visits
/// every direction, stays a small share of the work.
pub(crate) fn sync_period(dirs: usize) -> u64 {
    SYNC_EVERY.max(16 * dirs as u64)
}

impl Simulation {
    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
    /// Simulated time reached.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// Simulated time at which the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }
    /// True once the run reached its end.
    pub fn is_done(&self) -> bool {
        self.now >= self.end
    }
    /// The sender of flow `i` (after replicas are expanded).
    pub fn sender(&self, i: usize) -> &Sender {
        &self.flows[i].sender
    }
    /// The receiver of flow `i`.
    pub fn receiver(&self, i: usize) -> &Receiver {
        &self.flows[i].receiver
    }
    /// Number of flows (after replicas are expanded).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// Packet transmissions on links so far.
    pub fn packet_hops(&self) -> u64 {
        self.net.hops()
    }

    /// Runs every event up to `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Instant) {
        let mut until = t.min(self.end);
        while let Some((when, ev, key)) = self.q.pop_until(until) {
            debug_assert!(when >= self.now, "time never runs backwards");
            self.now = when;
            self.rec.begin(key);
            self.handle(ev, key);
            if self.end < until {
                // a handoff's transfer measurement ended the run
                until = self.end;
                break;
            }
            if self.q.processed() >= self.next_sync {
                self.periodic_sync();
                if self.rec.log.len() >= self.log_limit {
                    self.stop_for_the_log();
                    until = self.now;
                    break;
                }
                if self.notices.delivered.len() >= self.notice_limit {
                    self.stop_for_the_notices();
                    until = self.now;
                    break;
                }
                if self.interrupt.is_some_and(|interrupted| interrupted()) {
                    // the run stays as it is, to be continued or read
                    until = self.now;
                    break;
                }
            }
        }
        self.now = self.now.max(until);
        self.net.sync(self.now);
        for c in &mut self.rec.captures {
            c.flush(self.now);
        }
    }

    /// The sync nothing asked for, every [`sync_period`] events: the
    /// network forgets what the clock has passed, the captures write it out.
    #[cold]
    #[inline(never)]
    fn periodic_sync(&mut self) {
        self.net.sync(self.now);
        self.rec.count_drops(self.now);
        for c in &mut self.rec.captures {
            c.flush_before(self.now);
        }
        self.next_sync = self.q.processed() + self.sync_every;
    }

    /// Ends the run now: the packet log reached its limit. The results so
    /// far stay readable; [`Simulation::stopped`] says why.
    #[cold]
    fn stop_for_the_log(&mut self) {
        let logging: Vec<String> = (self.sc.flows.iter().enumerate())
            .filter(|(_, f)| f.log_packets)
            .map(|(i, f)| format!("flows[{i}] ({})", f.name.as_deref().unwrap_or("unnamed")))
            .collect();
        self.stopped = Some(format!(
            "log_packets: the packet log reached {} rows (at most {}) at {:.3} s, so the run \
             stopped there; the results up to then are kept. Log fewer flows ({} log packets) \
             or run a shorter time",
            self.rec.log.len(),
            self.log_limit,
            self.now.as_secs_f64(),
            logging.join(", "),
        ));
        self.end = self.now;
    }

    /// Ends the run now: the notifications reached their limit (link-layer
    /// reports of retried or given-up frames, which the scenario cannot
    /// count beforehand). The results so far stay readable.
    #[cold]
    fn stop_for_the_notices(&mut self) {
        let reporting: Vec<String> = (self.sc.links.iter().enumerate())
            .flat_map(|(i, l)| {
                let on =
                    |a: &Option<ArqSpec>| a.as_ref().is_some_and(|a| a.report != ReportWhen::None);
                let mut fields = Vec::new();
                if on(&l.arq) {
                    fields.push(format!("links[{i}].arq.report"));
                }
                for (side, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                    if on(&d.arq) {
                        fields.push(format!("links[{i}].{side}.arq.report"));
                    }
                }
                fields
            })
            .collect();
        self.stopped = Some(format!(
            "{}: the cross-layer notifications reached {} (at most {}) at {:.3} s, so the run \
             stopped there; the results up to then are kept. Report fewer frames or run a \
             shorter time",
            if reporting.is_empty() {
                "notifications".to_string()
            } else {
                reporting.join(", ")
            },
            self.notices.delivered.len(),
            self.notice_limit,
            self.now.as_secs_f64(),
        ));
        self.end = self.now;
    }

    /// Makes [`Simulation::run_until`] ask `interrupted` every few thousand
    /// events (at each unrequested sync, so a run without it pays nothing
    /// per event) and return where it is when it says true: a driver whose
    /// congestion controls run in an interpreter stops a run that way when
    /// its user interrupts it. The run is not ended: it can go on, or its
    /// results be read.
    pub fn set_interrupt_check(&mut self, interrupted: fn() -> bool) {
        self.interrupt = Some(interrupted);
    }

    /// Why the run stopped before the end of the scenario (the packet log
    /// reached [`wavelab_model::limits::MAX_LOG_ROWS`], or the notifications
    /// [`wavelab_model::limits::MAX_NOTIFICATIONS`]), if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// Lowers the packet log's row limit (for tests: the real one takes
    /// millions of packets to reach).
    #[doc(hidden)]
    pub fn set_log_limit(&mut self, rows: usize) {
        self.log_limit = rows;
    }

    /// Lowers the notifications table's row limit (for tests).
    #[doc(hidden)]
    pub fn set_notice_limit(&mut self, rows: usize) {
        self.notice_limit = rows;
    }

    /// Makes the unrequested syncs come every `events` events (at least
    /// one) instead of every [`SYNC_EVERY`] or more. For tests: when a sync
    /// happens must change no result, and a short period puts syncs between
    /// simultaneous events.
    #[doc(hidden)]
    pub fn set_sync_period(&mut self, events: u64) {
        self.sync_every = events.max(1);
        self.next_sync = self.q.processed() + self.sync_every;
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    fn handle(&mut self, ev: Event, key: u128) {
        match ev {
            Event::TxDone { dir, .. } => {
                let (net, mut ctx) = self.net_ctx();
                net.on_tx_done(&mut ctx, key, dir);
                self.schedule_reports();
            }
            Event::Arrive { dir, .. } => {
                let (net, mut ctx) = self.net_ctx();
                let delivery = net.on_arrive(&mut ctx, dir);
                self.schedule_reports();
                if let Some(d) = delivery {
                    self.deliver(d);
                }
            }
            Event::Wake { ep, gen } => self.on_wake(ep, gen),
            Event::FlowStart(f) => self.on_flow_start(f as usize),
            Event::FlowStop(f) => {
                let f = f as usize;
                if self.flows[f].udp.is_some() {
                    // its source sends nothing at or after its stop time
                    return;
                }
                if let Some((c, _)) = self.flows[f].conn {
                    return self.mptcp_stop(c as usize);
                }
                self.flows[f].sender.finish_now();
                self.drain(f, SENDER);
            }
            Event::Change(i) => self.on_change(i as usize),
            Event::Notify { flow, n } => self.on_notify(flow, n),
            Event::Sample(_) => self.on_sample(),
        }
    }

    /// The network and the context of the event being processed.
    pub(crate) fn net_ctx(&mut self) -> (&mut Network, Ctx<'_, Recorder>) {
        (
            &mut self.net,
            Ctx::new(&mut self.q, self.now, &mut self.rec),
        )
    }

    // ----- sampling ----------------------------------------------------------

    fn on_sample(&mut self) {
        self.check_steady_handovers();
        let now = self.now;
        for (i, f) in self.flows.iter().enumerate() {
            if f.started && f.udp.is_none() {
                self.series.record(now, i as u32, &f.sender, &f.receiver);
            }
        }
        if self.sc.output.queues {
            self.net.sync(now);
            for (i, d) in self.net.dirs.iter_mut().enumerate() {
                let (packets, bytes) = d.queued();
                let state = d.qdisc_state(now);
                self.queues
                    .record(now, i as u32, packets, bytes, d.counters(), state.as_ref());
            }
        }
        let next = now + self.interval;
        if next <= self.end {
            self.samples += 1;
            self.q.push(next, Event::Sample(self.samples));
        }
    }

    // ----- notifications -----------------------------------------------------

    /// Schedules the link-layer reports the network made (ARQ directions
    /// with `report` set: a `LinkReport` per delivered data frame, a
    /// `LinkDrop` per frame given up), each to reach its flow's sender.
    #[inline]
    fn schedule_reports(&mut self) {
        let Some(reports) = self.net.take_reports() else {
            return;
        };
        for r in reports {
            if self.flows[r.flow as usize].udp.is_some() {
                // a UDP sender has no use for a link layer's reports
                continue;
            }
            let msg = if r.dropped {
                Notification::LinkDrop(r.report)
            } else {
                Notification::LinkReport(r.report)
            };
            let notice = Notice {
                sent: self.now,
                msg,
                source: Source::Link(r.dir),
            };
            self.notices
                .schedule(&mut self.q, r.flow as usize, r.at, notice);
        }
    }

    /// Schedules a cross-layer notification `msg` from link direction `dir`
    /// (an index of the `links` table's `dir` column) to reach flow
    /// `flow`'s sender at `at` (not before now), as a link layer's report or
    /// any other driver's message would: it is delivered, logged and tabled
    /// as the handoffs' own. Errors name what is out of range.
    pub fn schedule_notification(
        &mut self,
        flow: usize,
        dir: usize,
        at: Instant,
        msg: Notification,
    ) -> Result<(), String> {
        if flow >= self.flows.len() {
            return Err(format!("flow {flow}: there are {} flows", self.flows.len()));
        }
        if dir >= self.net.dirs.len() {
            return Err(format!(
                "link direction {dir}: there are {}",
                self.net.dirs.len()
            ));
        }
        if at < self.now {
            return Err(format!(
                "{} s is before now ({} s)",
                at.as_secs_f64(),
                self.now.as_secs_f64()
            ));
        }
        let notice = Notice {
            sent: self.now,
            msg,
            source: Source::Link(dir as DirId),
        };
        self.notices.schedule(&mut self.q, flow, at, notice);
        Ok(())
    }

    // ----- captures ----------------------------------------------------------

    /// Starts capturing `target` (see [`Capture::new`]) into `out` from the
    /// current simulated time on. Capturing never changes the run.
    pub fn add_capture(
        &mut self,
        target: &str,
        out: Box<dyn Write + Send>,
    ) -> Result<(), CaptureError> {
        let flows: Vec<[&str; 3]> = self
            .flows
            .iter()
            .map(|f| [f.name.as_str(), f.from.as_str(), f.to.as_str()])
            .collect();
        let c = Capture::new(&self.sc, &flows, target, out)?;
        self.rec.captures.push(c);
        Ok(())
    }

    /// Flushes every capture; one result per capture, in the order they were
    /// added. Captures stay attached (a later `run_until` appends to them).
    pub fn finish_captures(&mut self) -> Vec<(String, io::Result<CaptureStats>)> {
        let now = self.now;
        self.rec
            .captures
            .iter_mut()
            .map(|c| {
                c.flush(now);
                (c.label().to_string(), c.finish())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DCNET path (8 Mbit/s, 240 ms, 100 packets) for `secs` seconds,
    /// with queue sampling on or off.
    fn dcnet(secs: u32, queues: bool) -> Scenario {
        let toml = format!(
            r#"
            name = "sync-bound"
            duration = "{secs}s"
            [output]
            interval = "{secs}s"
            queues = {queues}
            [[links]]
            between = ["s", "r1"]
            rate = "100Mbit/s"
            delay = "1ms"
            [[links]]
            between = ["r1", "r2"]
            rate = "8Mbit/s"
            delay = "240ms"
            queue = "100pkt"
            [[links]]
            between = ["r2", "d"]
            rate = "100Mbit/s"
            delay = "1ms"
            [[flows]]
            from = "s"
            to = "d"
            cc = "newreno"
            "#
        );
        Scenario::from_toml_str(&toml).expect("valid scenario")
    }

    /// With nothing reading the link counters during the run (queue
    /// sampling off, one sample at the end), the directions still forget
    /// the packets behind the clock, so their memory does not grow with the
    /// run; and the results are those of a run that samples its queues.
    #[test]
    fn fifos_stay_bounded_without_queue_sampling() {
        let mut sim = Simulation::new(dcnet(150, false)).expect("builds");
        sim.run();
        let quiet = sim.results();
        assert!(
            quiet.run.packet_hops > 400_000,
            "hops {}",
            quiet.run.packet_hops
        );
        // far fewer than the ~130,000 packets each data direction carried
        for cap in sim.net.fifo_capacities() {
            assert!(cap <= 1 << 16, "a fifo grew to {cap} entries");
        }
        let mut sampled = Simulation::new(dcnet(150, true)).expect("builds");
        sampled.run();
        let sampled = sampled.results();
        // (digests: the tables hold NaNs)
        for (a, b) in [
            (&quiet.links, &sampled.links),
            (&quiet.flows, &sampled.flows),
            (&quiet.series, &sampled.series),
        ] {
            assert_eq!(a.digest(), b.digest());
        }
    }
}
