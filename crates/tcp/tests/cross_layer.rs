//! Cross-layer notifications reach the algorithm, and the sender knobs a
//! cross-layer algorithm needs (ETCP, WSC-TCP) do what they say: the
//! duplicate-ACK threshold, RTT re-initialisation, the RTO floor and timer,
//! an immediate retransmission of the first unacknowledged segment. A toy
//! algorithm (a fixed window) records what it is told and asks for what the
//! test scripts.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use wavelab_tcp::cc::{
    AckEvent, CongestionEvent, CongestionKind, HandoffNotice, HandoffStyle, LinkReport,
    Notification, PathInfo, SenderRequest,
};
use wavelab_tcp::wire::{Options, SackBlocks};
use wavelab_tcp::{
    CaState, Cc, CongestionControl, Duration, Flags, Instant, Rate, Segment, Sender, SeqNum,
    TcpConfig, TxKind,
};

const ISS: SeqNum = SeqNum(4_000_000_000); // wraps during the test
const IRS: SeqNum = SeqNum(9000);
const MSS: u64 = 1000;

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

/// What the toy algorithm heard, and the requests it will make at the next
/// notification or path change.
#[derive(Debug, Default)]
struct Script {
    notifications: Vec<(Instant, Notification)>,
    paths: Vec<PathInfo>,
    on_next: Vec<SenderRequest>,
}

/// A fixed window of `cwnd` bytes (one segment after a timeout); at a
/// handoff outside RTO recovery, the new link's BDP shared by the flows on
/// it (the shape of ETCPv1's rule, MobiWac 2009 Figure 1).
#[derive(Debug)]
struct Toy {
    cwnd: u64,
    in_loss: bool,
    script: Arc<Mutex<Script>>,
    requests: VecDeque<SenderRequest>,
}

impl Toy {
    fn fire(&mut self) {
        let mut s = self.script.lock().unwrap();
        self.requests.extend(s.on_next.drain(..));
    }
}

impl CongestionControl for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn on_ack(&mut self, _: Instant, _: &AckEvent) {}
    fn on_congestion(&mut self, _: Instant, e: &CongestionEvent) {
        if matches!(e.kind, CongestionKind::Rto { .. }) {
            self.cwnd = MSS;
        }
    }
    fn poll_request(&mut self) -> Option<SenderRequest> {
        self.requests.pop_front()
    }
    fn on_notification(&mut self, now: Instant, n: &Notification) {
        self.script.lock().unwrap().notifications.push((now, *n));
        if let (Notification::Handoff(h), false) = (n, self.in_loss) {
            // a BDP / N rule, as ETCPv1's: the new link's rate times twice
            // its delay, shared by the flows on it
            let (rate, delay) = (h.new.rate.unwrap(), h.new.delay.unwrap());
            let bdp = rate.as_bps() * 2 * delay.as_nanos() / 8 / 1_000_000_000;
            self.cwnd = (bdp / h.flows as u64).max(2 * MSS);
        }
        self.fire();
    }
    fn on_state(&mut self, _: Instant, state: CaState) {
        self.in_loss = state == CaState::Loss;
    }
    fn on_path_change(&mut self, _: Instant, path: &PathInfo) {
        self.script.lock().unwrap().paths.push(*path);
        self.fire();
    }
}

/// A sender with the toy algorithm (window `cwnd` bytes), SACK as given,
/// connected at 100 ms, with `segments` segments of data to send.
fn sender(cwnd: u64, sack: bool, segments: u64) -> (Sender, Arc<Mutex<Script>>) {
    let script = Arc::new(Mutex::new(Script::default()));
    let toy = Toy {
        cwnd,
        in_loss: false,
        script: script.clone(),
        requests: VecDeque::new(),
    };
    let cfg = TcpConfig {
        mss: MSS as u32,
        sack,
        ..TcpConfig::default()
    };
    let mut tx = Sender::new(cfg, Cc::Custom(Box::new(toy)), ISS);
    tx.write_virtual(segments * MSS);
    assert_eq!(tx.poll_transmit(ms(0)).unwrap().kind, TxKind::Syn);
    tx.handle_segment(
        ms(100),
        &Segment {
            seq: IRS,
            ack: ISS + 1,
            flags: Flags::SYN.with(Flags::ACK),
            window: 65_535,
            len: 0,
            options: Options {
                mss: Some(MSS as u16),
                window_scale: Some(7),
                sack_permitted: sack,
                ..Options::default()
            },
        },
    );
    (tx, script)
}

fn ack(tx: &mut Sender, now: Instant, offset: u64) {
    tx.handle_segment(
        now,
        &Segment {
            seq: IRS + 1,
            ack: SeqNum::from_offset(ISS + 1, offset),
            flags: Flags::ACK,
            window: 65_535,
            len: 0,
            options: Options {
                sack: SackBlocks::default(),
                ..Options::default()
            },
        },
    );
}

/// Data segments sent now: (offset, retransmission).
fn sent(tx: &mut Sender, now: Instant) -> Vec<(u64, bool)> {
    std::iter::from_fn(|| tx.poll_transmit(now))
        .filter(|t| matches!(t.kind, TxKind::Data | TxKind::Retransmission))
        .map(|t| (t.offset, t.kind == TxKind::Retransmission))
        .collect()
}

fn handoff(flows: u32) -> Notification {
    Notification::Handoff(HandoffNotice {
        style: HandoffStyle::BreakBeforeMake {
            disconnection: Duration::from_secs(1),
        },
        old: PathInfo {
            rate: Some(Rate::from_mbps(54)),
            delay: Some(Duration::from_millis(2)),
        },
        new: PathInfo {
            rate: Some(Rate::from_mbps(2)),
            delay: Some(Duration::from_millis(50)),
        },
        flows,
    })
}

#[test]
fn a_notification_reaches_the_algorithm_which_sets_its_window() {
    let (mut tx, script) = sender(20 * MSS, true, 100);
    assert_eq!(sent(&mut tx, ms(100)).len(), 20);
    tx.handle_notification(ms(150), &handoff(2));
    let seen = script.lock().unwrap().notifications.clone();
    assert_eq!(seen, [(ms(150), handoff(2))]);
    // 2 Mbit/s x 100 ms = 25,000 bytes, shared by two flows
    assert_eq!(tx.snapshot().cwnd, 12_500);
    ack(&mut tx, ms(200), 10 * MSS);
    // 10 segments out, 12.5 kB of window: two more
    assert_eq!(sent(&mut tx, ms(200)).len(), 2);
}

#[test]
fn a_link_report_carries_its_stream_offset() {
    let (mut tx, script) = sender(20 * MSS, true, 100);
    sent(&mut tx, ms(100));
    ack(&mut tx, ms(200), 5 * MSS);
    let report = |offset| LinkReport {
        seq: SeqNum::from_offset(ISS + 1, 7 * MSS),
        offset,
        retries: 3,
        link_rto: Duration::from_millis(500),
    };
    // the driver knows the wire's sequence number only
    tx.handle_notification(ms(210), &Notification::LinkReport(report(0)));
    let seen = script.lock().unwrap().notifications.clone();
    assert_eq!(seen, [(ms(210), Notification::LinkReport(report(7 * MSS)))]);
}

/// Without SACK, three duplicate ACKs start a fast retransmit; with the
/// threshold raised to 6 they do not, the sixth does; `None` restores 3.
#[test]
fn the_duplicate_threshold_can_be_raised_and_restored() {
    let dupacks = |tx: &mut Sender, from: u64, n: u64| {
        for i in 0..n {
            ack(tx, ms(from + i), 2 * MSS);
        }
    };
    let (mut tx, script) = sender(20 * MSS, false, 200);
    sent(&mut tx, ms(100));
    script.lock().unwrap().on_next = vec![SenderRequest::DupThresh(Some(6))];
    tx.handle_notification(ms(150), &handoff(1));
    assert_eq!(tx.dupthresh(), 6);
    ack(&mut tx, ms(200), 2 * MSS);
    sent(&mut tx, ms(200));
    dupacks(&mut tx, 201, 5);
    assert_eq!(tx.stats().fast_retransmits, 0, "five are not enough");
    assert!(sent(&mut tx, ms(206)).iter().all(|s| !s.1));
    dupacks(&mut tx, 206, 1);
    assert_eq!(tx.stats().fast_retransmits, 1, "the sixth is");
    assert_eq!(sent(&mut tx, ms(207))[0], (2 * MSS, true));
    script.lock().unwrap().on_next = vec![SenderRequest::DupThresh(None)];
    tx.handle_notification(ms(300), &handoff(1));
    assert_eq!(tx.dupthresh(), 3);
    // a threshold of 0 would never start a recovery's count: at least 1
    script.lock().unwrap().on_next = vec![SenderRequest::DupThresh(Some(0))];
    tx.handle_notification(ms(310), &handoff(1));
    assert_eq!(tx.dupthresh(), 1);
}

/// RTT re-initialisation: SRTT forgotten, RTO back to the initial 1 s, the
/// next sample taken as a first one; the floor and the timer follow the
/// requests for them.
#[test]
fn rtt_variables_can_be_reinitialised_and_the_rto_floor_moved() {
    let (mut tx, script) = sender(4 * MSS, true, 100);
    sent(&mut tx, ms(100));
    ack(&mut tx, ms(400), MSS); // a 300 ms sample
    sent(&mut tx, ms(400));
    assert!(tx.rtt().srtt().is_some());
    script.lock().unwrap().on_next = vec![SenderRequest::ResetRtt];
    tx.handle_notification(ms(450), &handoff(1));
    assert_eq!(tx.rtt().srtt(), None);
    assert_eq!(tx.rtt().rto(), Duration::from_secs(1));
    ack(&mut tx, ms(460), 2 * MSS); // sent at 100 ms: 360 ms
    assert_eq!(tx.rtt().srtt(), Some(Duration::from_millis(360)));
    assert_eq!(tx.rtt().rttvar(), Duration::from_millis(180));
    // RTO 360 + 4 x 180 = 1080 ms; with a 5 s floor, 5 s, and the running
    // timer re-armed from now
    sent(&mut tx, ms(460));
    let before = tx.poll_timeout().unwrap();
    assert_eq!(before, ms(460) + Duration::from_millis(1080));
    script.lock().unwrap().on_next = vec![
        SenderRequest::MinRto(Duration::from_secs(5)),
        SenderRequest::RestartRtoTimer,
    ];
    tx.handle_path_change(ms(500), &PathInfo::default());
    assert_eq!(script.lock().unwrap().paths.len(), 1);
    assert_eq!(tx.poll_timeout(), Some(ms(5500)));
}

/// In RTO recovery after a disconnection, the timer's retransmission was
/// lost: a notification makes the sender retransmit the first
/// unacknowledged segment at once instead of waiting for the backed-off
/// timer (ETCP, MobiWac 2009 Figure 2). Outside recovery the same request
/// retransmits it ahead of the window.
#[test]
fn the_first_unacknowledged_segment_can_be_retransmitted_at_once() {
    let (mut tx, script) = sender(10 * MSS, true, 100);
    sent(&mut tx, ms(100));
    ack(&mut tx, ms(300), 2 * MSS);
    assert_eq!(sent(&mut tx, ms(300)).len(), 2);
    // the path goes dark: the timer fires, retransmits the head, backs off
    let rto = tx.poll_timeout().unwrap();
    tx.handle_timeout(rto);
    assert_eq!(sent(&mut tx, rto), [(2 * MSS, true)]);
    let backed_off = tx.poll_timeout().unwrap();
    assert!(backed_off - rto >= Duration::from_millis(1_000));
    // the notification comes long before the next expiry
    let now = rto + Duration::from_millis(100);
    script.lock().unwrap().on_next = vec![SenderRequest::RetransmitFirstUnacked];
    tx.handle_notification(now, &handoff(1));
    assert_eq!(sent(&mut tx, now), [(2 * MSS, true)]);
    assert_eq!(tx.stats().retransmissions, 2);
    assert_eq!(tx.stats().rto_expiries, 1, "no further timeout");
    // its ACK ends the wait
    ack(&mut tx, now + Duration::from_millis(110), 3 * MSS);
    assert_eq!(tx.snapshot().bytes_acked, 3 * MSS);

    // in the open state: the head goes out again although the window (two
    // segments after this handoff) is full
    let (mut tx, script) = sender(4 * MSS, true, 100);
    assert_eq!(sent(&mut tx, ms(100)).len(), 4);
    script.lock().unwrap().on_next = vec![SenderRequest::RetransmitFirstUnacked];
    tx.handle_notification(ms(120), &handoff(100));
    assert_eq!(tx.snapshot().cwnd, 2 * MSS);
    assert_eq!(sent(&mut tx, ms(120)), [(0, true)]);
    assert_eq!(sent(&mut tx, ms(121)), [], "and nothing more");
}
