//! The queue disciplines as a scenario writes them: a bare name
//! (`qdisc = "codel"`, every parameter at its default) or a table tagged by
//! `discipline` (`qdisc = { discipline = "pie", target = "20ms" }`).
//! Defaults are the RFCs'; each field's comment names the section it comes
//! from, or says that the choice is ours where the RFC leaves one.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use wavelab_tcp::units::ByteSize;
use wavelab_tcp::Duration;

/// A link direction's queue discipline and its parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum QdiscSpec {
    /// First in, first out, the arrival dropped when the queue is full (the
    /// default, and the only one the clock-free [`crate::link::Link`] runs).
    #[default]
    DropTail,
    /// Random Early Detection (Floyd and Jacobson 1993), with the gentle
    /// variant (Floyd 2000).
    Red(RedSpec),
    /// CoDel (RFC 8289).
    Codel(CodelSpec),
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodelSpec),
    /// PIE (RFC 8033).
    Pie(PieSpec),
    /// The DualQ Coupled AQM with PI2 (RFC 9332).
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Spec),
}

/// The names a scenario may use, in the order the documentation lists them.
pub const DISCIPLINES: &[&str] = &["drop_tail", "red", "codel", "fq_codel", "pie", "dualpi2"];

impl QdiscSpec {
    /// The discipline's name.
    pub fn name(&self) -> &'static str {
        match self {
            QdiscSpec::DropTail => "drop_tail",
            QdiscSpec::Red(_) => "red",
            QdiscSpec::Codel(_) => "codel",
            QdiscSpec::FqCodel(_) => "fq_codel",
            QdiscSpec::Pie(_) => "pie",
            QdiscSpec::DualPi2(_) => "dualpi2",
        }
    }

    /// True for drop-tail (the default, kept out of the normalised scenario).
    pub fn is_drop_tail(&self) -> bool {
        matches!(self, QdiscSpec::DropTail)
    }

    /// The discipline called `name` with `params` (a JSON object).
    fn from_parts(name: &str, params: serde_json::Value) -> Result<Self, String> {
        fn parse<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, String> {
            serde_path_to_error::deserialize(v).map_err(|e| {
                let path = e.path().to_string();
                if path == "." {
                    e.inner().to_string()
                } else {
                    format!("{path}: {}", e.inner())
                }
            })
        }
        let empty = params.as_object().is_none_or(|m| m.is_empty());
        Ok(match name {
            "drop_tail" | "droptail" | "fifo" => {
                if !empty {
                    return Err(
                        "drop_tail has no parameters (its limit is the link's `queue`)".into(),
                    );
                }
                QdiscSpec::DropTail
            }
            "red" => QdiscSpec::Red(parse(params)?),
            "codel" => QdiscSpec::Codel(parse(params)?),
            "fq_codel" | "fq-codel" | "fqcodel" => QdiscSpec::FqCodel(parse(params)?),
            "pie" => QdiscSpec::Pie(parse(params)?),
            "dualpi2" | "dual_pi2" | "dualq" => QdiscSpec::DualPi2(parse(params)?),
            _ => {
                return Err(format!(
                    "\"{name}\" is not a queue discipline, choose one of {}",
                    DISCIPLINES.join(", ")
                ))
            }
        })
    }

    /// Checks the parameters; the message starts with the parameter's name.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            QdiscSpec::DropTail => Ok(()),
            QdiscSpec::Red(s) => s.validate(),
            QdiscSpec::Codel(s) => s.validate(),
            QdiscSpec::FqCodel(s) => s.validate(),
            QdiscSpec::Pie(s) => s.validate(),
            QdiscSpec::DualPi2(s) => s.validate(),
        }
    }
}

impl<'de> Deserialize<'de> for QdiscSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::String(name) => {
                QdiscSpec::from_parts(&name, serde_json::Value::Object(Default::default()))
                    .map_err(de::Error::custom)
            }
            serde_json::Value::Object(mut map) => {
                let name = match map.remove("discipline") {
                    Some(serde_json::Value::String(s)) => s,
                    Some(other) => {
                        return Err(de::Error::custom(format!(
                            "discipline: {other} is not a queue discipline, choose one of {}",
                            DISCIPLINES.join(", ")
                        )))
                    }
                    None => {
                        return Err(de::Error::custom(format!(
                            "missing field `discipline` (one of {})",
                            DISCIPLINES.join(", ")
                        )))
                    }
                };
                QdiscSpec::from_parts(&name, serde_json::Value::Object(map))
                    .map_err(de::Error::custom)
            }
            other => Err(de::Error::custom(format!(
                "{other} is not a queue discipline: write a name such as \"codel\" or a table \
                 with `discipline`"
            ))),
        }
    }
}

fn check_prob(name: &str, p: f64, open_zero: bool) -> Result<(), String> {
    let ok = p.is_finite() && p <= 1.0 && if open_zero { p > 0.0 } else { p >= 0.0 };
    if ok {
        Ok(())
    } else {
        let low = if open_zero { "above 0" } else { "at least 0" };
        Err(format!(
            "{name}: {p} is out of range; it must be {low} and at most 1"
        ))
    }
}

fn check_positive(name: &str, d: Duration) -> Result<(), String> {
    if d.is_zero() {
        Err(format!("{name}: must be longer than 0"))
    } else {
        Ok(())
    }
}

/// RED's parameters (Floyd and Jacobson, IEEE/ACM ToN 1(4), 1993,
/// section 4 and Figure 2; the defaults follow Floyd's "RED: Discussions
/// of Setting Parameters", 1997).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedSpec {
    /// Average queue (packets) below which nothing is dropped (5).
    pub min_th: f64,
    /// Average queue (packets) at which the drop probability reaches
    /// `max_p` (15, three times `min_th`).
    pub max_th: f64,
    /// Drop probability at `max_th` (0.1).
    pub max_p: f64,
    /// Weight of the newest queue length in the average, w_q (0.002).
    pub weight: f64,
    /// Floyd's gentle variant: between `max_th` and twice it the probability
    /// rises linearly from `max_p` to 1 instead of jumping to 1 (true).
    pub gentle: bool,
    /// Set CE on ECN-capable packets instead of dropping them in the
    /// probabilistic region (RFC 3168 section 5); the forced region (the
    /// average above `max_th`, or twice it when gentle) drops (true).
    pub ecn: bool,
    /// The typical packet whose transmission time s converts an idle period
    /// into the m empty-queue arrivals the average decays by (1500B).
    pub mean_packet: ByteSize,
    /// Step marking, the queue DCTCP assumes (RFC 8257 section 3.1): an
    /// arrival that finds more than `min_th` packets queued (the
    /// instantaneous queue, not the average) is marked CE if it is
    /// ECN-capable and dropped otherwise; below that nothing happens.
    /// `max_th`, `max_p`, `weight` and `gentle` are then unused (false).
    pub step: bool,
}

impl Default for RedSpec {
    fn default() -> Self {
        RedSpec {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle: true,
            ecn: true,
            mean_packet: ByteSize(1500),
            step: false,
        }
    }
}

impl RedSpec {
    fn validate(&self) -> Result<(), String> {
        if !(self.min_th.is_finite() && self.min_th >= 0.0) {
            return Err(format!(
                "min_th: {} must be at least 0 packets",
                self.min_th
            ));
        }
        let ordered = self.max_th.is_finite() && self.max_th > self.min_th;
        if !self.step && !ordered {
            return Err(format!(
                "max_th: {} must be above min_th ({})",
                self.max_th, self.min_th
            ));
        }
        check_prob("max_p", self.max_p, true)?;
        check_prob("weight", self.weight, true)?;
        if self.mean_packet.0 == 0 {
            return Err("mean_packet: must be larger than 0 bytes".into());
        }
        Ok(())
    }
}

/// CoDel's parameters (RFC 8289 sections 4.2, 4.3 and 5.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodelSpec {
    /// The acceptable standing queue delay, TARGET (5ms, section 4.3).
    pub target: Duration,
    /// The window the sojourn time must stay above `target` for, INTERVAL
    /// (100ms, section 4.2).
    pub interval: Duration,
    /// `maxpacket`: a queue holding at most this many bytes after a dequeue
    /// is never above target (section 5.3 says the interface MTU: 1500B).
    pub mtu: ByteSize,
    /// Set CE on ECN-capable packets in place of a drop (true; RFC 7567
    /// section 4.2.1 asks an AQM to use ECN).
    pub ecn: bool,
}

impl Default for CodelSpec {
    fn default() -> Self {
        CodelSpec {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu: ByteSize(1500),
            ecn: true,
        }
    }
}

impl CodelSpec {
    fn validate(&self) -> Result<(), String> {
        check_positive("target", self.target)?;
        check_positive("interval", self.interval)?;
        if self.target >= self.interval {
            return Err(format!(
                "target: {} must be shorter than interval ({})",
                self.target, self.interval
            ));
        }
        Ok(())
    }
}

/// Whose backlog the CoDel of one FQ-CoDel queue compares with `mtu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backlog {
    /// The queue's own (RFC 8290 section 4.2: each queue is a CoDel).
    #[default]
    Queue,
    /// The whole discipline's, as Linux's fq_codel passes CoDel.
    Total,
}

/// FQ-CoDel's parameters (RFC 8290 section 5.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FqCodelSpec {
    /// CoDel's target (5ms).
    pub target: Duration,
    /// CoDel's interval (100ms).
    pub interval: Duration,
    /// Bytes a queue may send per round of the deficit round robin (1514B,
    /// an Ethernet frame).
    pub quantum: ByteSize,
    /// Number of queues the flows hash into (1024).
    pub flows: u32,
    /// CoDel's `maxpacket` (1500B).
    pub mtu: ByteSize,
    /// Set CE on ECN-capable packets in place of a drop (true, section
    /// 5.2.6).
    pub ecn: bool,
    /// Packets dropped from the fattest queue's head when the buffer
    /// overflows (1, section 4.1; Linux drops up to 64, half that queue).
    pub drop_batch: u32,
    /// The backlog each queue's CoDel reads ("queue"; Linux: "total").
    pub backlog: Backlog,
}

impl Default for FqCodelSpec {
    fn default() -> Self {
        FqCodelSpec {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            quantum: ByteSize(1514),
            flows: 1024,
            mtu: ByteSize(1500),
            ecn: true,
            drop_batch: 1,
            backlog: Backlog::Queue,
        }
    }
}

impl FqCodelSpec {
    fn validate(&self) -> Result<(), String> {
        CodelSpec {
            target: self.target,
            interval: self.interval,
            mtu: self.mtu,
            ecn: self.ecn,
        }
        .validate()?;
        if self.quantum.0 < 64 || self.quantum.0 > 1 << 20 {
            return Err(format!(
                "quantum: {} must be between 64B and 1MiB",
                self.quantum.0
            ));
        }
        if !(1..=65_536).contains(&self.flows) {
            return Err(format!("flows: {} must be between 1 and 65536", self.flows));
        }
        if self.drop_batch == 0 {
            return Err("drop_batch: must be at least 1".into());
        }
        Ok(())
    }
}

/// Which set of rules a discipline follows where Linux's qdisc departs
/// from its RFC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The RFC's.
    #[default]
    Rfc,
    /// Linux's (`net/sched/sch_pie.c`).
    Linux,
}

/// PIE's parameters (RFC 8033 sections 4 and 5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PieSpec {
    /// QDELAY_REF, the target queueing delay (15ms, section 4.2).
    pub target: Duration,
    /// T_UPDATE, how often the drop probability is recomputed (15ms).
    pub t_update: Duration,
    /// The gain on the distance from the target, in Hz (0.125).
    pub alpha: f64,
    /// The gain on the delay's trend, in Hz (1.25).
    pub beta: f64,
    /// MAX_BURST, the burst allowance (150ms, section 4.4).
    pub max_burst: Duration,
    /// MEAN_PKTSIZE: no early drop while the queue holds at most two such
    /// packets (1500B, section 4.1).
    pub mean_packet: ByteSize,
    /// Mark ECN-capable packets instead of dropping them while the drop
    /// probability is below `mark_threshold` (true, section 5.1).
    pub ecn: bool,
    /// mark_ecnth (0.1, section 5.1).
    pub mark_threshold: f64,
    /// Derandomisation of the drops (section 5.4; false: the basic scheme of
    /// section 4 draws each one).
    pub derandomize: bool,
    /// Cap Drop Adjustment: once the probability is 10 % or more it rises by
    /// at most 2 % per update (true, section 5.5).
    pub cap_drop_adjustment: bool,
    /// "rfc" (default) or "linux": Linux's sch_pie adds 2 % per update while
    /// the delay exceeds 250 ms, decays by 1/64 instead of 2 %, always
    /// derandomises and tests the current rather than the previous delay
    /// against half the target.
    pub profile: Profile,
}

impl Default for PieSpec {
    fn default() -> Self {
        PieSpec {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            mean_packet: ByteSize(1500),
            ecn: true,
            mark_threshold: 0.1,
            derandomize: false,
            cap_drop_adjustment: true,
            profile: Profile::Rfc,
        }
    }
}

impl PieSpec {
    fn validate(&self) -> Result<(), String> {
        check_positive("target", self.target)?;
        check_positive("t_update", self.t_update)?;
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(0.0..=100.0).contains(&v) {
                return Err(format!(
                    "{name}: {v} is out of range; it must be between 0 and 100 Hz"
                ));
            }
        }
        check_prob("mark_threshold", self.mark_threshold, false)?;
        Ok(())
    }
}

/// How DualPI2 turns a probability into marks and drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Draw {
    /// RFC 9332 Appendix A's `recur()`: a per-queue running sum, so a
    /// probability p marks exactly every (1/p)-th packet (deterministic).
    #[default]
    Recur,
    /// An independent random draw per packet (Linux's dualpi2).
    Random,
}

/// Which queueing delay DualPI2's PI controller reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PiDelay {
    /// The sojourn of the Classic queue's head (RFC 9332 Appendix A).
    #[default]
    Classic,
    /// The larger of the two heads' sojourns (Linux's dualpi2).
    Max,
}

/// DualPI2's parameters (RFC 9332 Appendix A, Figure 2's defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2Spec {
    /// The Classic queue's delay target (15ms).
    pub target: Duration,
    /// The worst-case RTT the PI gains are tuned for, RTT_max (100ms).
    pub rtt_max: Duration,
    /// Tupdate (default min(target, RTT_max / 3)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_update: Option<Duration>,
    /// The integral gain in Hz (default 0.1 Tupdate / RTT_max^2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// The proportional gain in Hz (default 0.3 / RTT_max).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// The coupling factor k: p_CL = k p', p_C = p'^2 (2, section 2.1).
    pub k: f64,
    /// Where the L queue's native marking ramp starts, minTh (800us).
    pub min_th: Duration,
    /// The ramp's width: it reaches probability 1 at min_th + range
    /// (400us).
    pub range: Duration,
    /// The L queue is not marked by its native AQM while it holds at most
    /// this many packets after a dequeue, Th_len (1).
    pub th_len: u32,
    /// The Classic queue's share of the link when both queues are
    /// backlogged (the weighted round robin is our choice of scheduler,
    /// Linux's, with its weight: 0.1).
    pub classic_weight: f64,
    /// How probabilities become marks and drops ("recur" or "random").
    pub draw: Draw,
    /// The delay the PI controller reads ("classic" or "max").
    pub pi_delay: PiDelay,
    /// The largest packet, for the scheduler's initial credit (1500B).
    pub mtu: ByteSize,
}

impl Default for DualPi2Spec {
    fn default() -> Self {
        DualPi2Spec {
            target: Duration::from_millis(15),
            rtt_max: Duration::from_millis(100),
            t_update: None,
            alpha: None,
            beta: None,
            k: 2.0,
            min_th: Duration::from_micros(800),
            range: Duration::from_micros(400),
            th_len: 1,
            classic_weight: 0.1,
            draw: Draw::Recur,
            pi_delay: PiDelay::Classic,
            mtu: ByteSize(1500),
        }
    }
}

impl DualPi2Spec {
    /// Tupdate as given or derived (Appendix A: min(target, RTT_max / 3)).
    pub fn t_update(&self) -> Duration {
        self.t_update.unwrap_or(self.target.min(self.rtt_max / 3))
    }

    /// The integral gain alpha in Hz, as given or derived.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or_else(|| {
            let rtt = self.rtt_max.as_secs_f64();
            0.1 * self.t_update().as_secs_f64() / (rtt * rtt)
        })
    }

    /// The proportional gain beta in Hz, as given or derived.
    pub fn beta(&self) -> f64 {
        self.beta
            .unwrap_or_else(|| 0.3 / self.rtt_max.as_secs_f64())
    }

    fn validate(&self) -> Result<(), String> {
        check_positive("target", self.target)?;
        check_positive("rtt_max", self.rtt_max)?;
        check_positive("t_update", self.t_update())?;
        check_positive("range", self.range)?;
        for (name, v) in [("alpha", self.alpha()), ("beta", self.beta())] {
            if !(0.0..=1000.0).contains(&v) {
                return Err(format!(
                    "{name}: {v} is out of range; it must be between 0 and 1000 Hz"
                ));
            }
        }
        if !(self.k.is_finite() && self.k >= 1.0 && self.k <= 64.0) {
            return Err(format!(
                "k: {} is out of range; it must be between 1 and 64 (RFC 9332: 2)",
                self.k
            ));
        }
        if !(self.classic_weight.is_finite()
            && self.classic_weight > 0.0
            && self.classic_weight < 1.0)
        {
            return Err(format!(
                "classic_weight: {} must be above 0 and below 1",
                self.classic_weight
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_or_a_table() {
        let q: QdiscSpec = serde_json::from_str("\"codel\"").unwrap();
        assert_eq!(q, QdiscSpec::Codel(CodelSpec::default()));
        let q: QdiscSpec =
            serde_json::from_str(r#"{"discipline": "pie", "target": "20ms"}"#).unwrap();
        let QdiscSpec::Pie(p) = q else { panic!() };
        assert_eq!(p.target, Duration::from_millis(20));
        assert_eq!(p.t_update, Duration::from_millis(15));
        let e = serde_json::from_str::<QdiscSpec>("\"wred\"").unwrap_err();
        assert!(
            e.to_string().contains("\"wred\" is not a queue discipline"),
            "{e}"
        );
        let e = serde_json::from_str::<QdiscSpec>(r#"{"discipline": "codel", "targte": "1ms"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `targte`"), "{e}");
        let e = serde_json::from_str::<QdiscSpec>(r#"{"discipline": "codel", "target": 5}"#)
            .unwrap_err();
        assert!(e.to_string().contains("target: 5 has no unit"), "{e}");
    }

    #[test]
    fn serialised_form_reads_back() {
        for name in DISCIPLINES {
            let q: QdiscSpec = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            let text = serde_json::to_string(&q).unwrap();
            let back: QdiscSpec = serde_json::from_str(&text).unwrap();
            assert_eq!(back, q, "{text}");
            assert_eq!(q.name(), *name);
            q.validate().unwrap();
        }
    }

    /// RFC 9332 Appendix A's derived constants with RTT_max = 100 ms and a
    /// 15 ms target: Tupdate 15 ms, alpha 0.15 Hz, beta 3 Hz.
    #[test]
    fn dualpi2_derives_its_gains() {
        let s = DualPi2Spec::default();
        assert_eq!(s.t_update(), Duration::from_millis(15));
        assert!((s.alpha() - 0.15).abs() < 1e-12);
        assert!((s.beta() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let e = QdiscSpec::Red(RedSpec {
            max_th: 2.0,
            ..RedSpec::default()
        })
        .validate()
        .unwrap_err();
        assert!(e.starts_with("max_th"), "{e}");
        let e = QdiscSpec::Codel(CodelSpec {
            target: Duration::from_millis(200),
            ..CodelSpec::default()
        })
        .validate()
        .unwrap_err();
        assert!(e.starts_with("target"), "{e}");
        let e = QdiscSpec::DualPi2(DualPi2Spec {
            k: 0.5,
            ..DualPi2Spec::default()
        })
        .validate()
        .unwrap_err();
        assert!(e.starts_with("k:"), "{e}");
    }
}
