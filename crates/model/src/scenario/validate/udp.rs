//! The UDP pass: a flow's `transport` and `udp` table agree, the pattern
//! has the fields it needs and no other, and each is in range (its trace
//! file read: errors name the file and the line).

use crate::scenario::{
    FlowSpec, PingSpec, ScenarioError, Transport, UdpPattern, UdpSpec, MAX_UDP_PAYLOAD,
};
use crate::udp::load_udp_trace;
use wavelab_tcp::{CcConfig, Duration, TcpConfig};

/// Most packets a second a UDP flow may send.
pub const MAX_UDP_PACKET_RATE: f64 = 1e6;

/// Checks the transport of flow `f` (at path `p`, e.g. `flows[1]`).
pub(super) fn check(p: &str, f: &FlowSpec) -> Result<(), ScenarioError> {
    let at = |field: &str| format!("{p}.{field}");
    if f.ping.is_some() && f.transport != Transport::Ping {
        return Err(ScenarioError::at(at("ping"), "needs transport = \"ping\""));
    }
    if f.transport == Transport::Ping && f.udp.is_some() {
        return Err(ScenarioError::at(
            at("udp"),
            "needs transport = \"udp\" (the flow is a ping)",
        ));
    }
    let spec = match (f.transport, &f.udp) {
        (Transport::Tcp, None) => return Ok(()),
        (Transport::Ping, _) => {
            refuse_tcp_settings(p, f, "a ping flow sends echo requests")?;
            return check_ping(&at("ping"), &f.ping.clone().unwrap_or_default());
        }
        (Transport::Tcp, Some(_)) => {
            return Err(ScenarioError::at(
                at("udp"),
                "needs transport = \"udp\" (the flow is TCP)",
            ))
        }
        (Transport::Udp, None) => {
            return Err(ScenarioError::at(
                at("udp"),
                "missing: a UDP flow says what it sends, e.g. udp = { pattern = \"voice\" }",
            ))
        }
        (Transport::Udp, Some(u)) => u,
    };
    refuse_tcp_settings(p, f, "a UDP flow sends by its udp pattern")?;
    check_spec(&at("udp"), spec)
}

/// An error at the first TCP setting flow `f` (at `p`) has: `why` says what
/// the flow sends instead.
fn refuse_tcp_settings(p: &str, f: &FlowSpec, why: &str) -> Result<(), ScenarioError> {
    let tcp_only: [(&str, bool); 5] = [
        ("size", f.size.is_some()),
        ("cc", f.cc != CcConfig::default()),
        ("tcp", f.tcp != TcpConfig::default()),
        ("cmd", f.cmd.is_some()),
        ("receiver_cmd", f.receiver_cmd.is_some()),
    ];
    match tcp_only.into_iter().find(|(_, set)| *set) {
        Some((field, _)) => Err(ScenarioError::at(
            format!("{p}.{field}"),
            format!("is a TCP setting; {why}"),
        )),
        None => Ok(()),
    }
}

/// Checks a `ping` table at path `p` (e.g. `flows[1].ping`).
fn check_ping(p: &str, ping: &PingSpec) -> Result<(), ScenarioError> {
    if ping.interval.is_zero() {
        return Err(ScenarioError::at(
            format!("{p}.interval"),
            "must be above zero",
        ));
    }
    if ping.interval < Duration::from_micros(1) {
        return Err(ScenarioError::at(
            format!("{p}.interval"),
            format!(
                "{} is shorter than 1us (at most a million requests a second)",
                ping.interval
            ),
        ));
    }
    if ping.size.0 > MAX_UDP_PAYLOAD {
        return Err(ScenarioError::at(
            format!("{p}.size"),
            format!(
                "{} B is more than {MAX_UDP_PAYLOAD} B (an echo request in one 1,500-byte packet)",
                ping.size.0
            ),
        ));
    }
    Ok(())
}

/// The fields pattern `pattern` reads (beside `pattern` and
/// `playout_deadline`), each with whether it is required.
fn fields_of(pattern: UdpPattern) -> &'static [(&'static str, bool)] {
    match pattern {
        UdpPattern::Cbr => &[("rate", true), ("packet", true)],
        UdpPattern::Onoff => &[
            ("rate", true),
            ("packet", true),
            ("on", true),
            ("off", true),
            ("distribution", false),
        ],
        UdpPattern::Trace => &[("file", true)],
        UdpPattern::Voice => &[],
        UdpPattern::Video => &[("rate", true), ("fps", false), ("packet", false)],
    }
}

/// Checks a `udp` table at path `p` (e.g. `flows[1].udp`).
fn check_spec(p: &str, u: &UdpSpec) -> Result<(), ScenarioError> {
    let at = |field: &str| format!("{p}.{field}");
    let given = [
        ("rate", u.rate.is_some()),
        ("packet", u.packet.is_some()),
        ("on", u.on.is_some()),
        ("off", u.off.is_some()),
        ("distribution", u.distribution.is_some()),
        ("file", u.file.is_some()),
        ("fps", u.fps.is_some()),
    ];
    let kind = format!("pattern \"{}\"", u.pattern.name());
    super::check_fields(p, &kind, &given, fields_of(u.pattern))?;
    if let Some(r) = u.rate {
        if r.as_bps() == 0 {
            return Err(ScenarioError::at(at("rate"), "must be above zero"));
        }
    }
    if let Some(b) = u.packet {
        if !(1..=MAX_UDP_PAYLOAD).contains(&b.0) {
            return Err(ScenarioError::at(
                at("packet"),
                format!(
                    "{} B is not from 1 to {MAX_UDP_PAYLOAD} B (a UDP payload in one \
                     1,500-byte packet)",
                    b.0
                ),
            ));
        }
    }
    if let (Some(r), Some(b)) = (u.rate, u.packet) {
        let per_sec = r.as_bps() as f64 / (8.0 * b.0 as f64);
        if per_sec > MAX_UDP_PACKET_RATE {
            return Err(ScenarioError::at(
                at("rate"),
                format!(
                    "{r} in packets of {} B is {per_sec:.0} packets a second (at most \
                     {MAX_UDP_PACKET_RATE:.0})",
                    b.0
                ),
            ));
        }
    }
    for (field, d) in [
        ("on", u.on),
        ("off", u.off),
        ("playout_deadline", u.playout_deadline),
    ] {
        if d.is_some_and(|d| d.is_zero()) {
            return Err(ScenarioError::at(at(field), "must be above zero"));
        }
    }
    if let Some(fps) = u.fps {
        if !(1..=1000).contains(&fps) {
            return Err(ScenarioError::at(
                at("fps"),
                format!("{fps} is not from 1 to 1000 frames a second"),
            ));
        }
    }
    if u.pattern == UdpPattern::Video {
        let fps = u64::from(u.fps.unwrap_or(crate::scenario::VIDEO_FPS));
        let r = u.rate.expect("checked above");
        if r.as_bps() < 8 * fps {
            return Err(ScenarioError::at(
                at("rate"),
                format!("{r} at {fps} frames a second is less than one byte a frame"),
            ));
        }
        let packet = u.packet.map_or(crate::scenario::VIDEO_PACKET, |b| b.0);
        let per_sec = (r.as_bps() / (8 * fps)).div_ceil(packet) * fps;
        if per_sec as f64 > MAX_UDP_PACKET_RATE {
            return Err(ScenarioError::at(
                at("rate"),
                format!("{r} is {per_sec} packets a second (at most {MAX_UDP_PACKET_RATE:.0})"),
            ));
        }
    }
    if let Some(file) = &u.file {
        load_udp_trace(file).map_err(|e| ScenarioError::at(at("file"), e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::scenario::tests::err;
    use crate::scenario::Scenario;

    /// A scenario with one UDP flow whose extra lines are `flow`.
    fn udp(flow: &str) -> String {
        format!(
            r#"
            duration = "10s"
            [[links]]
            between = ["a", "b"]
            rate = "10Mbit/s"
            delay = "25ms"
            [[flows]]
            from = "a"
            to = "b"
            transport = "udp"
            {flow}
            "#
        )
    }

    #[test]
    fn good_udp_flows_validate_and_round_trip() {
        for flow in [
            r#"udp = { pattern = "voice", playout_deadline = "150ms" }"#,
            r#"udp = { pattern = "cbr", rate = "1Mbit/s", packet = "1200B" }"#,
            r#"udp = { pattern = "video", rate = "2Mbit/s", fps = 25 }"#,
            r#"udp = { pattern = "onoff", rate = "1Mbit/s", packet = "500B", on = "1s", off = "2s", distribution = "fixed" }"#,
        ] {
            let s = Scenario::from_toml_str(&udp(flow)).unwrap();
            let again = Scenario::from_json_str(&s.to_json()).unwrap();
            assert_eq!(again, s, "{flow}");
        }
        // a TCP flow's JSON does not grow the new fields
        let tcp = Scenario::from_toml_str(&udp("").replace("transport = \"udp\"", "")).unwrap();
        assert!(!tcp.to_json().contains("transport"));
    }

    #[test]
    fn errors_name_the_field_and_value() {
        let cases = [
            ("", "flows[0].udp: missing: a UDP flow says what it sends"),
            (
                r#"udp = { pattern = "cbr", packet = "100B" }"#,
                "flows[0].udp.rate: missing (pattern \"cbr\" needs it)",
            ),
            (
                r#"udp = { pattern = "voice", rate = "1Mbit/s" }"#,
                "flows[0].udp.rate: pattern \"voice\" does not use it",
            ),
            (
                r#"udp = { pattern = "cbr", rate = "0bit/s", packet = "100B" }"#,
                "flows[0].udp.rate: must be above zero",
            ),
            (
                r#"udp = { pattern = "cbr", rate = "1Mbit/s", packet = "9000B" }"#,
                "flows[0].udp.packet: 9000 B is not from 1 to 1472 B",
            ),
            (
                r#"udp = { pattern = "cbr", rate = "10Gbit/s", packet = "100B" }"#,
                "flows[0].udp.rate: 10Gbit/s in packets of 100 B is 12500000 packets a second",
            ),
            (
                r#"udp = { pattern = "onoff", rate = "1Mbit/s", packet = "500B", on = "0s", off = "1s" }"#,
                "flows[0].udp.on: must be above zero",
            ),
            (
                r#"udp = { pattern = "video", rate = "1Mbit/s", fps = 0 }"#,
                "flows[0].udp.fps: 0 is not from 1 to 1000 frames a second",
            ),
            (
                r#"udp = { pattern = "voice", playout_deadline = "0ms" }"#,
                "flows[0].udp.playout_deadline: must be above zero",
            ),
            (
                r#"udp = { pattern = "trace", file = "/nonexistent/udp.csv" }"#,
                "flows[0].udp.file: /nonexistent/udp.csv: cannot be read",
            ),
            (
                "size = \"1MB\"\nudp = { pattern = \"voice\" }",
                "flows[0].size: is a TCP setting; a UDP flow sends by its udp pattern",
            ),
            (
                "cc = \"cubic\"\nudp = { pattern = \"voice\" }",
                "flows[0].cc: is a TCP setting",
            ),
            (
                r#"udp = { pattern = "mp3" }"#,
                "flows[0].udp.pattern: unknown variant",
            ),
        ];
        for (flow, want) in cases {
            let e = err(&udp(flow));
            assert!(e.starts_with(want), "{flow}: {e}");
        }
        let ping = |extra: &str| udp(extra).replace("transport = \"udp\"", "transport = \"ping\"");
        let ping_cases = [
            (
                "ping = { interval = \"0s\" }",
                "flows[0].ping.interval: must be above zero",
            ),
            (
                "ping = { size = \"2000B\" }",
                "flows[0].ping.size: 2000 B is more than 1472 B",
            ),
            ("ping = { count = 3 }", "flows[0].ping.count: unknown field"),
            (
                "udp = { pattern = \"voice\" }",
                "flows[0].udp: needs transport = \"udp\" (the flow is a ping)",
            ),
            (
                "size = \"1MB\"",
                "flows[0].size: is a TCP setting; a ping flow sends echo requests",
            ),
        ];
        for (flow, want) in ping_cases {
            let e = err(&ping(flow));
            assert!(e.starts_with(want), "{flow}: {e}");
        }
        assert!(Scenario::from_toml_str(&ping("")).is_ok());
        let tcp_ping = udp("ping = { interval = \"1s\" }").replace("transport = \"udp\"", "");
        assert_eq!(err(&tcp_ping), "flows[0].ping: needs transport = \"ping\"");
        let tcp_with_udp = udp(r#"udp = { pattern = "voice" }"#).replace("transport = \"udp\"", "");
        assert_eq!(
            err(&tcp_with_udp),
            "flows[0].udp: needs transport = \"udp\" (the flow is TCP)"
        );
    }
}
