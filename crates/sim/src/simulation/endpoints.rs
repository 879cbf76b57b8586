//! Driving the endpoints: flow starts and stops, delivering packets to
//! the sender and the receiver, their timers, and putting what they send
//! into the network. A UDP flow's endpoints are its source
//! ([`UdpSource`], woken at each send time) and its flow statistics, which
//! read each datagram's send time on arrival.
//!
//! After every call into an endpoint the simulation drains its
//! transmissions and reads `poll_timeout()`; a wake-up is scheduled only
//! when the deadline moved earlier, with a generation number so that stale
//! wake-ups are skipped when popped. A wake-up that fires early (the
//! deadline moved later) costs one no-op `handle_timeout` call and is then
//! rescheduled.

use crate::engine::Event;
use crate::notices::Delivered;
use crate::packet::Packet;
use crate::routes::Delivery;
use crate::simulation::Simulation;
use wavelab_model::capture::TapPoint;
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::histogram::Histogram;
use wavelab_model::scenario::UDP_OVERHEAD;
use wavelab_model::tables::{event, kind_code, PacketEvent, NO_KIND};
use wavelab_model::topology::DirId;
use wavelab_model::udp::UdpSource;
use wavelab_tcp::cc::Notification;
use wavelab_tcp::{Instant, Receiver, Segment, Sender, Transmit, TxKind};

/// An endpoint's pending wake-up.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Wake {
    pub scheduled: Option<Instant>,
    pub gen: u32,
}

/// A flow's endpoints and routes.
#[derive(Clone, Debug)]
pub(crate) struct Flow {
    pub name: String,
    pub algorithm: &'static str,
    pub from: String,
    pub to: String,
    pub sender: Sender,
    pub receiver: Receiver,
    /// Per side (data, ACKs): the routes it may take, and the one in use.
    pub routes: [Vec<Vec<DirId>>; 2],
    pub route: [usize; 2],
    pub start: Instant,
    pub stop: Option<Instant>,
    pub size: Option<u64>,
    pub started: bool,
    /// Its packets are logged.
    pub log: bool,
    pub wake: [Wake; 2],
    /// Its session is in its host's history (it completed).
    pub recorded: bool,
    /// A handoff's transfer measurement on it: the cumulative ACK point
    /// (payload bytes) that completes it, and the handoff.
    pub transfer: Option<(u64, usize)>,
    /// Every RTT sample the sender took (RFC 6298 measurements).
    pub rtts: Histogram,
    /// Its data packets at the network (the recorder counts their drops).
    pub net: FlowStats,
    /// A UDP or ping flow's sender (its TCP endpoints are then never used).
    pub udp: Option<Box<UdpSource>>,
    /// A ping flow: its receiver answers each request, and the answers'
    /// round-trip times go into `rtts`.
    pub echo: bool,
    /// The smallest round-trip time of a ping flow's answers.
    pub min_echo: Option<wavelab_tcp::Duration>,
    /// A Multipath TCP subflow: its connection and subflow number.
    pub conn: Option<(u32, u32)>,
}

impl Flow {
    /// The route its data takes now.
    pub fn data_route(&self) -> &[DirId] {
        &self.routes[0][self.route[0]]
    }

    /// The direction of link `link` its routes cross now: the one its data
    /// crosses, else the one its ACKs cross.
    pub fn crossing(&self, link: usize) -> Option<DirId> {
        (0..2).find_map(|side| {
            self.routes[side][self.route[side]]
                .iter()
                .copied()
                .find(|&d| d as usize / 2 == link)
        })
    }
}

/// Endpoint sides (index into `Flow::wake`; endpoint id = 2 * flow + side).
pub(crate) const SENDER: usize = 0;
pub(crate) const RECEIVER: usize = 1;

impl Simulation {
    pub(crate) fn on_flow_start(&mut self, f: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        flow.started = true;
        if flow.udp.is_some() {
            self.udp_send(f);
            return;
        }
        // the host's past sessions on this path (best-start), before the SYN
        let past = self.histories.get(&(flow.from.clone(), flow.to.clone()));
        flow.sender
            .set_path_history(now, past.map_or(&[], |v| v.as_slice()));
        if let Some((c, _)) = flow.conn {
            // its connection maps data to it
            return self.mptcp_step(c as usize);
        }
        match flow.size {
            Some(n) => {
                flow.sender.write_virtual(n);
                flow.sender.close();
            }
            None => flow.sender.write_unlimited(),
        }
        self.drain(f, SENDER);
    }

    /// Hands the packet `d` to its endpoint, then lets the endpoint send.
    pub(crate) fn deliver(&mut self, d: Delivery) {
        let p = self.net.delivered(d);
        let f = p.flow as usize;
        let now = self.now;
        if self.flows[f].log {
            let e = PacketEvent {
                time: now.as_secs_f64(),
                flow: p.flow,
                event: if p.to_receiver {
                    event::DELIVER
                } else {
                    event::ACK
                },
                seq: p.offset,
                len: p.seg.len,
                is_ack: !p.to_receiver,
                kind: kind_code(p.kind),
                link: -1,
                cause: 255,
            };
            self.rec.row(e);
        }
        let flow = &mut self.flows[f];
        let to_receiver = p.to_receiver;
        if flow.udp.is_some() {
            // a datagram: the receiver reads its send time (one-way delay,
            // jitter, lateness); a ping's receiver answers it with the
            // request's send time, which the sender reads as it arrives
            let request = *p;
            let answer = to_receiver && flow.echo;
            if to_receiver {
                flow.net.on_receive(request.sent, now, request.size);
            } else {
                let rtt = now - request.sent;
                flow.rtts.record(rtt);
                flow.min_echo = Some(flow.min_echo.map_or(rtt, |m| m.min(rtt)));
            }
            self.net.release(d);
            if answer {
                let mut reply = Packet {
                    to_receiver: false,
                    hop: 0,
                    step: 0,
                    n: 0,
                    arrival: now,
                    ..request
                };
                let (net, mut ctx) = self.net_ctx();
                net.inject(&mut ctx, &mut reply);
            }
            return;
        }
        if to_receiver {
            if matches!(p.kind, TxKind::Data | TxKind::Retransmission) {
                flow.net.on_receive(p.sent, now, p.size);
            }
            flow.receiver.handle_segment_ecn(now, &p.seg, None, p.ecn);
        } else {
            self.rec.capture(TapPoint::SenderIn, p);
            let samples = flow.sender.rtt().sample_count();
            flow.sender.handle_segment(now, &p.seg);
            if flow.sender.rtt().sample_count() > samples {
                if let Some(r) = flow.sender.rtt().latest() {
                    flow.rtts.record(r);
                }
            }
            if !flow.recorded && flow.sender.stats().completed_at.is_some() {
                flow.recorded = true;
                if let Some(r) = flow.sender.session_record() {
                    let path = (flow.from.clone(), flow.to.clone());
                    self.histories.entry(path).or_default().push(r);
                }
            }
        }
        // the packet is read where it waited; it leaves before anything else
        // enters the network
        self.net.release(d);
        match self.flows[f].conn {
            // the connection maps data before the sender sends (which
            // drains every subflow sender)
            Some((c, _)) if !to_receiver => self.mptcp_step(c as usize),
            conn => {
                self.drain(f, if to_receiver { RECEIVER } else { SENDER });
                if let Some((c, _)) = conn {
                    self.mptcp_step(c as usize);
                }
            }
        }
        if !to_receiver {
            self.check_transfer(f);
        }
    }

    /// Notification `n` of flow `flow` reaches its sender.
    pub(crate) fn on_notify(&mut self, flow: u32, n: u64) {
        let mut notice = self.notices.take(flow, n);
        let f = flow as usize;
        let now = self.now;
        if let Notification::LinkReport(r) | Notification::LinkDrop(r) = &mut notice.msg {
            r.offset = self.flows[f].sender.offset_of(r.seq);
        }
        self.flows[f].sender.handle_notification(now, &notice.msg);
        if let (Some((c, _)), crate::notices::Source::Handoff { index, .. }) =
            (self.flows[f].conn, notice.source)
        {
            let plan = &self.handoffs[index].plan;
            let (from, to) = (plan.from, plan.to);
            self.mptcp_notice(c as usize, from, to);
        }
        if self.flows[f].log {
            let seq = match notice.msg {
                Notification::LinkReport(r) | Notification::LinkDrop(r) => r.offset,
                Notification::Handoff(_) => self.flows[f].sender.bytes_acked(),
            };
            self.rec.row(PacketEvent {
                time: now.as_secs_f64(),
                flow,
                event: event::NOTIFY,
                seq,
                len: 0,
                is_ack: false,
                kind: NO_KIND,
                link: notice.source.link() as i64,
                cause: 255,
            });
        }
        self.notices.delivered.push(Delivered {
            time: now,
            flow,
            notice,
        });
        self.drain(f, SENDER);
        if self.sc.output.notification_samples {
            let fl = &self.flows[f];
            self.series.record(now, flow, &fl.sender, &fl.receiver);
        }
    }

    pub(crate) fn on_wake(&mut self, ep: u32, gen: u32) {
        let f = (ep / 2) as usize;
        let side = (ep % 2) as usize;
        let w = &mut self.flows[f].wake[side];
        if w.gen != gen {
            return; // superseded
        }
        w.scheduled = None;
        let now = self.now;
        if self.flows[f].udp.is_some() {
            self.udp_send(f);
            return;
        }
        if side == SENDER {
            self.flows[f].sender.handle_timeout(now);
        } else {
            self.flows[f].receiver.handle_timeout(now);
        }
        match (self.flows[f].conn, side) {
            (Some((c, _)), SENDER) => self.mptcp_step(c as usize),
            _ => self.drain(f, side),
        }
    }

    /// Sends everything endpoint `side` of flow `f` has to send, then schedules
    /// its next wake-up.
    pub(crate) fn drain(&mut self, f: usize, side: usize) {
        let now = self.now;
        // each segment goes into the network as it is polled (the endpoint
        // does not see the network, so the order is the same as polling all
        // first)
        loop {
            let flow = &mut self.flows[f];
            let t = if side == SENDER {
                flow.sender.poll_transmit(now)
            } else {
                flow.receiver.poll_transmit(now)
            };
            let Some(t) = t else { break };
            self.emit(f, side == SENDER, t);
        }
        let flow = &self.flows[f];
        let next = if side == SENDER {
            flow.sender.poll_timeout()
        } else {
            flow.receiver.poll_timeout()
        };
        self.reschedule(f, side, next);
    }

    fn reschedule(&mut self, f: usize, side: usize, next: Option<Instant>) {
        let Some(t) = next else { return };
        let t = t.max(self.now);
        let w = &mut self.flows[f].wake[side];
        if w.scheduled.is_none_or(|s| t < s) {
            w.gen = w.gen.wrapping_add(1);
            w.scheduled = Some(t);
            self.q.push(
                t,
                Event::Wake {
                    ep: (2 * f + side) as u32,
                    gen: w.gen,
                },
            );
        }
    }

    /// Sends every packet UDP flow `f`'s source has due now, each carrying
    /// its sequence number (as its offset) and its send time, then
    /// schedules the next.
    pub(crate) fn udp_send(&mut self, f: usize) {
        let now = self.now;
        loop {
            let Some(src) = self.flows[f].udp.as_mut() else {
                return;
            };
            let Some((seq, payload)) = src.poll(now) else {
                break;
            };
            let t = Transmit {
                segment: Segment {
                    len: payload,
                    ..Segment::default()
                },
                kind: TxKind::Data,
                offset: seq,
                ecn: Default::default(),
            };
            self.emit(f, true, t);
        }
        let next = self.flows[f].udp.as_ref().and_then(|s| s.next_send());
        self.reschedule(f, SENDER, next);
    }

    fn emit(&mut self, f: usize, from_sender: bool, t: Transmit) {
        if self.flows[f].log
            && from_sender
            && matches!(t.kind, TxKind::Data | TxKind::Retransmission)
        {
            self.rec.row(PacketEvent {
                time: self.now.as_secs_f64(),
                flow: f as u32,
                event: if t.kind == TxKind::Data {
                    event::SEND
                } else {
                    event::RETRANSMIT
                },
                seq: t.offset,
                len: t.segment.len,
                is_ack: false,
                kind: kind_code(t.kind),
                link: -1,
                cause: 255,
            });
        }
        let mut p = Packet {
            flow: f as u32,
            to_receiver: from_sender,
            hop: 0,
            step: 0,
            n: 0,
            size: if self.flows[f].udp.is_some() {
                t.segment.len + UDP_OVERHEAD
            } else {
                t.segment.ip_len() as u32
            },
            arrival: self.now,
            sent: self.now,
            kind: t.kind,
            offset: t.offset,
            seg: t.segment,
            ecn: t.ecn,
        };
        if from_sender {
            if matches!(p.kind, TxKind::Data | TxKind::Retransmission) {
                self.flows[f].net.on_send(p.size);
            }
            self.rec.capture(TapPoint::SenderOut, &p);
        }
        let (net, mut ctx) = self.net_ctx();
        net.inject(&mut ctx, &mut p);
    }
}
