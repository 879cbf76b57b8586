//! Link-layer ARQ under TCP: out-of-order ARQ produces
//! duplicate ACKs without any loss, in-order ARQ none; the link-layer
//! reports reach the sender with the retries each frame needed; both engine
//! modes agree; on/off outage processes put their windows on the link.

use crate::common;

use wavelab_sim::Scenario;

/// A sender on a wired 100 Mbit/s link, then a 10 Mbit/s, 10 ms WLAN hop
/// with per-attempt loss 0.2 and link-layer ARQ `arq` on its data direction
/// (a queue too large to overflow); one NewReno flow for 20 s.
fn wlan(arq: &str) -> String {
    format!(
        r#"
        duration = "20s"
        [[links]]
        between = ["s", "ap"]
        rate = "100Mbit/s"
        delay = "5ms"
        [[links]]
        name = "wlan"
        between = ["ap", "m"]
        rate = "10Mbit/s"
        delay = "10ms"
        queue = "100000pkt"
        forward = {{ loss = {{ model = "bernoulli", p = 0.2 }}, arq = {arq} }}
        [[flows]]
        from = "s"
        to = "m"
        cc = "newreno"
        tcp = {{ sack = true }}
        "#
    )
}

fn counter(r: &wavelab_sim::Results, name: &str, dir: usize) -> u64 {
    r.links.u64s(name)[dir]
}

#[test]
fn out_of_order_arq_gives_duplicate_acks_without_loss() {
    // the application stops at 19 s, so that the DSACK of every
    // retransmission is back before the run ends at 20 s
    let arq = |order: &str| {
        common::run(
            &wlan(&format!(
                "{{ retries = 15, retry_delay = \"10ms\", order = \"{order}\" }}"
            ))
            .replace("cc = \"newreno\"", "cc = \"newreno\"\nstop = \"19s\""),
        )
    };
    for (order, dupacks) in [("in-order", false), ("out-of-order", true)] {
        let r = arq(order);
        // the WLAN's data direction is direction 2
        let dropped: u64 = [
            "dropped_queue",
            "dropped_random",
            "dropped_outage",
            "dropped_aqm",
        ]
        .iter()
        .map(|c| r.links.u64s(c).iter().sum::<u64>())
        .sum();
        assert_eq!(dropped, 0, "{order}: nothing is lost");
        // about a quarter of the frames retried (0.2 / 0.8 per frame)
        let retries = counter(&r, "arq_retries", 2) as f64;
        let share = retries / counter(&r, "delivered_packets", 2) as f64;
        assert!(
            (share - 0.25).abs() < 0.03,
            "{order}: {share} retries per frame"
        );
        assert_eq!(counter(&r, "arq_residual", 2), 0);
        let got = r.flows.u64s("dupacks_received")[0];
        assert_eq!(got > 0, dupacks, "{order}: {got} duplicate ACKs");
        let rtx = r.flows.u64s("retransmissions")[0];
        if dupacks {
            // fast retransmits the reordering set off, every one spurious:
            // the network lost nothing
            assert!(rtx > 0, "{order}");
            assert_eq!(r.flows.u64s("spurious_retransmissions")[0], rtx);
        } else {
            assert_eq!(rtx, 0, "{order}");
        }
    }
}

/// With `report = "all"`, every data frame delivered over the WLAN produces
/// one report, which reaches the sender `report_delay` later with the
/// retries that frame needed; the retries add up to the link's counter.
#[test]
fn reports_reach_the_sender_with_the_retries_used() {
    let text =
        wlan("{ retries = 7, retry_delay = \"1ms\", report = \"all\", report_delay = \"15ms\" }");
    // a 10 MB transfer: every report is delivered before the end
    let text = text.replace("cc = \"newreno\"", "cc = \"newreno\"\nsize = \"10MB\"");
    let r = common::run(&text);
    let n = &r.notifications;
    let kinds: &[String] = n.col("kind");
    assert!(kinds.iter().all(|k| k == "link-report"));
    let delivered = counter(&r, "delivered_packets", 2);
    assert_eq!(n.rows() as u64, delivered, "one report per delivered frame");
    let retries: u64 = n.col::<u32>("retries").iter().map(|&x| x as u64).sum();
    let residual = counter(&r, "arq_residual", 2);
    assert_eq!(retries + 7 * residual, counter(&r, "arq_retries", 2));
    let (time, sent) = (n.f64s("time"), n.f64s("sent"));
    assert!(time
        .iter()
        .zip(sent)
        .all(|(t, s)| (t - s - 0.015).abs() < 1e-9));
    // the link's RTO: 1 ms of wait plus a 1500-byte frame at 10 Mbit/s
    // (the handshake's small frames take less)
    let rto = n.f64s("link_rto");
    let full = rto.iter().filter(|&&x| (x - 0.0022).abs() < 1e-9).count();
    assert!(full + 3 >= n.rows(), "{:?}", &rto[..3]);
    // some frames needed retries, and about 20 % of the first attempts failed
    let retried = n.col::<u32>("retries").iter().filter(|&&x| x > 0).count();
    let share = retried as f64 / n.rows() as f64;
    assert!((share - 0.2).abs() < 0.02, "{share}");
    // "retried" reports only those
    let only = common::run(&text.replace("report = \"all\"", "report = \"retried\""));
    assert_eq!(only.notifications.rows(), retried);
}

/// A frame given up after its retry limit reaches the sender as a
/// link-layer drop, with the retries it took (the limit); delivered ones as
/// reports.
#[test]
fn frames_given_up_reach_the_sender_as_link_drops() {
    let text = wlan("{ retries = 2, report = \"all\" }")
        .replace("p = 0.2", "p = 0.5")
        .replace("cc = \"newreno\"", "cc = \"newreno\"\nsize = \"2MB\"");
    let r = common::run(&text);
    let n = &r.notifications;
    let kinds: &[String] = n.col("kind");
    let retries: &[u32] = n.col("retries");
    let drops: Vec<u32> = (0..n.rows())
        .filter(|&i| kinds[i] == "link-drop")
        .map(|i| retries[i])
        .collect();
    let residual = counter(&r, "arq_residual", 2);
    // 0.5^3 of the frames sent (timeouts keep the flow slow: dozens)
    assert!(residual > 20, "{residual}");
    assert_eq!(drops.len() as u64, residual);
    assert!(drops.iter().all(|&k| k == 2));
    let reports = kinds.iter().filter(|k| *k == "link-report").count() as u64;
    assert_eq!(reports, counter(&r, "delivered_packets", 2));
}

#[test]
fn both_engine_modes_agree_with_arq_and_outage_processes() {
    let text = wlan(
        "{ retries = 4, retry_delay = \"2ms\", order = \"out-of-order\", report = \"retried\" }",
    )
    .replace(
        "queue = \"100000pkt\"",
        "queue = \"50pkt\"\noutage_process = { up = \"5s\", down = \"1s\" }",
    );
    let (a, b) = common::run_both(&text);
    assert_eq!(a.digest(), b.digest());
    assert!(a.links.u64s("dropped_outage").iter().sum::<u64>() > 0);
    assert!(a.notifications.rows() > 0);
}

/// An outage process with fixed times puts its windows where they belong:
/// a 2 s outage every 6 s from 1 s (up 4 s, down 2 s): [5, 7), [11, 13),
/// [17, 19); a flow over it times out in each.
#[test]
fn a_fixed_outage_process_darkens_the_link_on_schedule() {
    let text = wlan("{ retries = 7 }").replace(
        "queue = \"100000pkt\"",
        "queue = \"100pkt\"\noutage_process = { up = \"4s\", down = \"2s\", distribution = \"fixed\", start = \"1s\" }",
    );
    let r = common::run(&text);
    assert!(r.flows.u64s("rto_expiries")[0] >= 3);
    let time = r.series.f64s("time");
    let delivered = r.series.u64s("bytes_delivered");
    let at = |t: f64| delivered[time.iter().position(|&x| (x - t).abs() < 1e-9).unwrap()];
    // nothing is delivered from shortly after an outage starts to its end
    for (s, e) in [(5.0, 7.0), (11.0, 13.0), (17.0, 19.0)] {
        assert_eq!(at(s + 0.1), at(e), "outage {s}-{e}");
        assert!(at(s) > at(s - 1.0), "delivering before {s}");
    }
}

#[test]
fn bad_arq_and_outage_process_fields_are_named() {
    let err = |text: &str| Scenario::from_toml_str(text).unwrap_err().to_string();
    let e = err(&wlan("{ retries = 5000 }"));
    assert!(
        e.contains("links[1].forward.arq.retries: 5000 is more than 1000"),
        "{e}"
    );
    let e = err(&wlan("{ backoff = { cw_min = 64, cw_max = 15 } }"));
    assert!(
        e.contains("links[1].forward.arq.backoff.cw_min: 64 is above cw_max (15)"),
        "{e}"
    );
    let e = err(&wlan("{ order = \"sideways\" }"));
    assert!(e.contains("sideways"), "{e}");
    let e = err(&wlan("{ retries = 7 }").replace(
        "queue = \"100000pkt\"",
        "outage_process = { up = \"0s\", down = \"1s\" }",
    ));
    assert!(
        e.contains("links[1].outage_process.up: 0s is below 1ms"),
        "{e}"
    );
    // the clock-free model has no ARQ: said, not ignored
    let sc = Scenario::from_toml_str(&wlan("{ retries = 7 }")).unwrap();
    let e = wavelab_sim::link_models(&sc).unwrap_err().to_string();
    assert!(e.starts_with("links[1].forward.arq: "), "{e}");
}
