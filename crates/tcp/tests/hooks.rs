//! The congestion-control trait drives the sender as each family of algorithms
//! needs: a pacing algorithm spaces segments at its rate; a timer-driven burst
//! algorithm (the shape of TCP Wave) releases data only when its timer expires,
//! in bursts of its quota, and learns what each burst sent and when it had
//! nothing to send. Toy algorithms plug in through `Cc::Custom`.

use std::sync::{Arc, Mutex};
use wavelab_tcp::cc::{AckEvent, CongestionEvent, SendGate, SentInfo};
use wavelab_tcp::wire::{Options, SackBlocks};
use wavelab_tcp::{
    Cc, CongestionControl, Duration, Flags, Instant, Rate, Segment, Sender, SeqNum, TcpConfig,
    TxKind,
};

const ISS: SeqNum = SeqNum(500);
const IRS: SeqNum = SeqNum(9000);

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

fn connect(cc: Cc, now: Instant) -> Sender {
    let mut tx = Sender::new(TcpConfig::default(), cc, ISS);
    assert_eq!(tx.poll_transmit(Instant::ZERO).unwrap().kind, TxKind::Syn);
    tx.handle_segment(
        now,
        &Segment {
            seq: IRS,
            ack: ISS + 1,
            flags: Flags::SYN.with(Flags::ACK),
            window: 65_535,
            len: 0,
            options: Options {
                mss: Some(1460),
                window_scale: Some(10),
                ..Options::default()
            },
        },
    );
    tx
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

fn data_offsets(tx: &mut Sender, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| tx.poll_transmit(now))
        .filter(|t| matches!(t.kind, TxKind::Data | TxKind::Retransmission))
        .map(|t| t.offset)
        .collect()
}

/// Paces at a fixed rate with an unlimited window.
#[derive(Debug)]
struct ConstantPacer(Rate);

impl CongestionControl for ConstantPacer {
    fn name(&self) -> &'static str {
        "pacer"
    }
    fn cwnd(&self) -> u64 {
        u64::MAX / 2
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.0)
    }
    fn on_ack(&mut self, _: Instant, _: &AckEvent) {}
    fn on_congestion(&mut self, _: Instant, _: &CongestionEvent) {}
}

#[test]
fn pacing_spaces_segments_at_the_algorithms_rate() {
    // 1500-byte packets (1460 + 40 header bytes) at 1.2 Mbit/s: one per 10 ms.
    let mut tx = connect(
        Cc::Custom(Box::new(ConstantPacer(Rate::from_bps(1_200_000)))),
        ms(50),
    );
    tx.write_unlimited();
    let mut now = ms(50);
    let mut sent = Vec::new();
    for _ in 0..20 {
        let out = data_offsets(&mut tx, now);
        assert!(
            out.len() <= 1,
            "never more than one segment per pacing slot"
        );
        sent.extend(out.iter().map(|_| now));
        let next = tx.poll_timeout().expect("the pacer asks to be woken");
        assert!(next > now);
        now = next;
        tx.handle_timeout(now);
    }
    let gaps: Vec<Duration> = sent.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.len() >= 18);
    assert!(
        gaps.iter().all(|&g| g == Duration::from_millis(10)),
        "{gaps:?}"
    );
}

#[derive(Debug, Default)]
struct BurstLog {
    rounds: Vec<(Instant, u32)>,
    app_limited: Vec<Instant>,
    sent: Vec<SentInfo>,
}

/// Releases `burst` segments every `period`, like TCP Wave's send timer.
#[derive(Debug)]
struct TimerBurst {
    next: Instant,
    period: Duration,
    burst: u32,
    quota: u32,
    log: Arc<Mutex<BurstLog>>,
}

impl CongestionControl for TimerBurst {
    fn name(&self) -> &'static str {
        "burst"
    }
    fn cwnd(&self) -> u64 {
        u64::MAX / 2
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn send_gate(&self, _now: Instant) -> SendGate {
        if self.quota > 0 {
            SendGate::Quota {
                segments: self.quota,
            }
        } else {
            SendGate::Closed
        }
    }
    fn timer(&self) -> Option<Instant> {
        Some(self.next)
    }
    fn on_timer(&mut self, now: Instant) {
        self.quota = self.burst;
        self.next = now + self.period;
    }
    fn on_packet_sent(&mut self, _now: Instant, info: &SentInfo) {
        self.quota -= 1;
        self.log.lock().unwrap().sent.push(*info);
    }
    fn on_send_round(&mut self, now: Instant, segments: u32) {
        self.log.lock().unwrap().rounds.push((now, segments));
    }
    fn on_app_limited(&mut self, now: Instant) {
        self.quota = 0;
        self.log.lock().unwrap().app_limited.push(now);
    }
    fn on_ack(&mut self, _: Instant, _: &AckEvent) {}
    fn on_congestion(&mut self, _: Instant, _: &CongestionEvent) {}
}

#[test]
fn timer_driven_bursts_go_out_only_at_timer_expiry() {
    let log = Arc::new(Mutex::new(BurstLog::default()));
    let cc = TimerBurst {
        next: ms(100),
        period: Duration::from_millis(100),
        burst: 3,
        quota: 0,
        log: log.clone(),
    };
    let mut tx = connect(Cc::Custom(Box::new(cc)), ms(40));
    tx.write_virtual(7 * 1460);
    tx.close();
    // Established, data available, but the gate is closed until the timer.
    assert!(data_offsets(&mut tx, ms(40)).is_empty());
    assert_eq!(
        tx.poll_timeout(),
        Some(ms(100)),
        "the algorithm's timer is the sender's"
    );
    tx.handle_timeout(ms(100));
    assert_eq!(data_offsets(&mut tx, ms(100)), vec![0, 1460, 2920]);
    // ACKs do not release data between expiries.
    ack(&mut tx, ms(150), 1460);
    ack(&mut tx, ms(151), 4380);
    assert!(data_offsets(&mut tx, ms(151)).is_empty());
    tx.handle_timeout(ms(200));
    assert_eq!(data_offsets(&mut tx, ms(200)), vec![4380, 5840, 7300]);
    tx.handle_timeout(ms(300));
    assert_eq!(
        data_offsets(&mut tx, ms(300)),
        vec![8760],
        "last segment, with the FIN"
    );
    let l = log.lock().unwrap();
    assert_eq!(
        l.rounds,
        vec![(ms(100), 3), (ms(200), 3), (ms(300), 1)],
        "each burst reported once with what it sent"
    );
    assert_eq!(
        l.app_limited,
        vec![ms(300)],
        "nothing left to send in the third burst"
    );
    assert_eq!(l.sent.len(), 7);
    assert!(l.sent.iter().all(|s| !s.retransmission));
}
