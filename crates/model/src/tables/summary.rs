//! A run's summary as text: per flow, per link direction, per handover and
//! handoff (and the notifications, if any), the figures a reader checks
//! first. The pinned runs' snapshot tests compare it, so that a change of
//! behaviour shows what moved, not just that a digest did.

use super::{ColumnData, Results, Table};

/// A column of the summary: taken from a table's column, optionally
/// renamed and scaled (floats).
struct Pick {
    name: &'static str,
    from: &'static str,
    scale: f64,
}

const fn pick(name: &'static str) -> Pick {
    Pick {
        name,
        from: name,
        scale: 1.0,
    }
}

const fn scaled(name: &'static str, from: &'static str, scale: f64) -> Pick {
    Pick { name, from, scale }
}

const FLOWS: [Pick; 12] = [
    pick("name"),
    pick("algorithm"),
    pick("bytes_delivered"),
    scaled("goodput_mbps", "goodput", 1e-6),
    pick("retransmissions"),
    pick("fast_retransmits"),
    pick("rto_expiries"),
    pick("spurious_retransmissions"),
    pick("dupacks_received"),
    pick("out_of_order_segments"),
    scaled("min_rtt_ms", "min_rtt", 1e3),
    pick("completion_time"),
];

const LINKS: [Pick; 10] = [
    pick("link"),
    pick("direction"),
    pick("sent_packets"),
    pick("delivered_packets"),
    pick("dropped_queue"),
    pick("dropped_random"),
    pick("dropped_outage"),
    pick("dropped_aqm"),
    pick("marked"),
    pick("max_queue_packets"),
];

const HANDOVERS: [Pick; 4] = [pick("link"), pick("planned"), pick("time"), pick("outage")];

const HANDOFFS: [Pick; 8] = [
    pick("node"),
    pick("from"),
    pick("to"),
    pick("kind"),
    pick("time"),
    pick("disconnection"),
    pick("flows_moved"),
    pick("notified"),
];

const NOTIFICATIONS: [Pick; 8] = [
    pick("time"),
    pick("flow"),
    pick("kind"),
    scaled("old_mbps", "old_rate", 1e-6),
    scaled("new_mbps", "new_rate", 1e-6),
    scaled("new_delay_ms", "new_delay", 1e3),
    pick("flows"),
    pick("seq"),
];

/// The columns `picks` of `t`, floats scaled.
fn select(t: &Table, picks: &[Pick]) -> Table {
    let mut out = Table::default();
    for p in picks {
        let data = t
            .column(p.from)
            .unwrap_or_else(|| panic!("summary column {} is missing", p.from));
        let data = match data {
            ColumnData::F64(v) if p.scale != 1.0 => {
                ColumnData::F64(v.iter().map(|x| x * p.scale).collect())
            }
            other => other.clone(),
        };
        out.push(p.name, data);
    }
    out
}

impl Results {
    /// The per-flow, per-link-direction and per-handover summaries as
    /// aligned text (handoffs and notifications too when there are any):
    /// goodput in Mbit/s, minimum RTT in ms, times in seconds, floats to four
    /// decimals, `-` for "none".
    pub fn summary_text(&self) -> String {
        let mut parts = vec![
            ("flows", select(&self.flows, &FLOWS)),
            ("links", select(&self.links, &LINKS)),
            ("handovers", select(&self.handovers, &HANDOVERS)),
        ];
        if self.handoffs.rows() > 0 {
            parts.push(("handoffs", select(&self.handoffs, &HANDOFFS)));
        }
        if self.notifications.rows() > 0 {
            parts.push(("notifications", select(&self.notifications, &NOTIFICATIONS)));
        }
        if self.subflows.rows() > 0 {
            parts.push(("subflows", self.subflows.clone()));
        }
        let mut out = String::new();
        for (name, t) in parts {
            out += &format!("== {name}\n");
            out += &if t.rows() == 0 {
                "(none)\n".to_string()
            } else {
                t.to_text()
            };
        }
        out
    }
}
