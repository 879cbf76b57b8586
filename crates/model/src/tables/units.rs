//! The unit of each column of a run's tables, as the Parquet files carry it
//! (`unit` in a field's metadata, as in a sweep's tables): `s` for times
//! and durations, `B` for bytes, `bit/s` for rates, `1` for probabilities;
//! none for counts, indices, codes and names.

/// The unit of column `column` of table `table` (`flows`, `links`,
/// `series`, ...), or None.
pub fn unit(table: &str, column: &str) -> Option<&'static str> {
    // the columns whose unit depends on the table
    match (table, column) {
        ("bursts", "seq") => return None, // the kernel's sequence number
        ("notifications", "seq") | ("packets", "seq") => return Some("B"),
        ("queues", "bytes") => return Some("B"),
        ("queues", "sojourn") => return Some("s"),
        ("queues", "drop_prob" | "prob_l") => return Some("1"),
        _ => {}
    }
    if column.starts_with("cc_") {
        return None; // an algorithm's own variables, of its own units
    }
    Some(match column {
        "time" | "start" | "stop" | "completion_time" | "delay" | "min_rtt" | "rtt_mean"
        | "rtt_p50" | "rtt_p95" | "rtt_p99" | "rtt_low" | "rtt_high" | "srtt" | "rtt" | "rto"
        | "queue_delay_mean" | "queue_delay_p95" | "queue_delay_p99" | "outage"
        | "disconnection" | "notify_delay" | "transfer_time" | "sent" | "old_delay"
        | "new_delay" | "link_rto" | "lateness" => "s",
        "size"
        | "bytes_sent"
        | "bytes_retransmitted"
        | "bytes_acked"
        | "bytes_delivered"
        | "cwnd"
        | "ssthresh"
        | "in_flight"
        | "outstanding"
        | "sacked"
        | "lost"
        | "sent_bytes"
        | "delivered_bytes"
        | "max_queue_bytes"
        | "len" => "B",
        "rate" | "goodput" | "pacing_rate" | "old_rate" | "new_rate" => "bit/s",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_column_and_where_needed_the_table() {
        assert_eq!(unit("flows", "goodput"), Some("bit/s"));
        assert_eq!(unit("flows", "bytes_sent"), Some("B"));
        assert_eq!(unit("flows", "retransmissions"), None);
        assert_eq!(unit("series", "srtt"), Some("s"));
        assert_eq!(unit("packets", "seq"), Some("B"));
        assert_eq!(unit("bursts", "seq"), None);
        assert_eq!(unit("series", "cc_rtt_min"), None);
    }
}
