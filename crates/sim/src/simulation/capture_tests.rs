//! Packet captures of simulated runs: what the files hold, that capturing
//! changes nothing, and that both engine modes write the same bytes.

#![cfg(test)]
mod tests {
    use crate::Simulation;
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};
    use wavelab_model::capture::*;
    use wavelab_model::Scenario;
    use wavelab_tcp::Instant;
    use wavelab_tcp::Segment;

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A writer that fails once `room` bytes are written (a full disk).
    struct Full {
        room: usize,
    }
    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if b.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.room -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    const LOSSY: &str = r#"
        duration = "4s"
        seed = 3
        [[links]]
        name = "access"
        between = ["s", "r"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        name = "bottleneck"
        between = ["r", "d"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "30pkt"
        loss = { model = "bernoulli", p = 0.01 }
        [[flows]]
        name = "bulk"
        from = "s"
        to = "d"
        log_packets = true
        tcp = { timestamps = true }
    "#;

    struct Record {
        nanos: u64,
        data: Vec<u8>,
        orig: u32,
    }

    fn records(file: &[u8]) -> Vec<Record> {
        assert_eq!(&file[0..4], &PCAP_MAGIC_NANOS.to_le_bytes());
        assert_eq!(&file[20..24], &LINKTYPE_RAW.to_le_bytes());
        let mut out = Vec::new();
        let mut i = 24;
        let le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        while i < file.len() {
            let h = &file[i..i + 16];
            let incl = le(&h[8..12]) as usize;
            out.push(Record {
                nanos: le(&h[0..4]) as u64 * 1_000_000_000 + le(&h[4..8]) as u64,
                data: file[i + 16..i + 16 + incl].to_vec(),
                orig: le(&h[12..16]),
            });
            i += 16 + incl;
        }
        assert_eq!(i, file.len(), "no partial record");
        out
    }

    fn capture(text: &str, targets: &[&str]) -> (crate::Results, Vec<Vec<u8>>) {
        let mut sim = Simulation::new(Scenario::from_toml_str(text).unwrap()).unwrap();
        let bufs: Vec<Shared> = targets.iter().map(|_| Shared::default()).collect();
        for (t, b) in targets.iter().zip(&bufs) {
            sim.add_capture(t, Box::new(b.clone())).unwrap();
        }
        sim.run();
        for (_, r) in sim.finish_captures() {
            r.unwrap();
        }
        let files = bufs.iter().map(|b| b.0.lock().unwrap().clone()).collect();
        (sim.results(), files)
    }

    /// A long run written in one go holds only a stretch of its records in
    /// memory (the engine writes what the clock has passed as it goes), and
    /// writes the same bytes as a run paused every five seconds.
    #[test]
    fn a_long_capture_is_written_as_it_goes() {
        let text = LOSSY.replace("duration = \"4s\"", "duration = \"200s\"");
        let sc = || Scenario::from_toml_str(&text).unwrap();
        let mut sim = Simulation::new(sc()).unwrap();
        let buf = Shared::default();
        sim.add_capture("bulk", Box::new(buf.clone())).unwrap();
        sim.run();
        let most = sim.rec.captures[0].most_pending();
        sim.finish_captures();
        let one_go = buf.0.lock().unwrap().clone();
        let n = records(&one_go).len();
        assert!(n > 60_000, "{n} records");
        assert!(most < n / 4, "{most} of {n} records pending at once");

        let mut sim = Simulation::new(sc()).unwrap();
        let buf = Shared::default();
        sim.add_capture("bulk", Box::new(buf.clone())).unwrap();
        for s in 1..=40 {
            sim.run_until(Instant::from_nanos(s * 5_000_000_000));
        }
        sim.finish_captures();
        assert!(*buf.0.lock().unwrap() == one_go, "identical bytes");
    }

    #[test]
    fn headers_are_valid_ipv4_and_tcp() {
        let (_, files) = capture(LOSSY, &["bulk"]);
        let recs = records(&files[0]);
        assert!(recs.len() > 1000, "{} records", recs.len());
        let mut last = 0;
        let (mut data, mut sacks, mut timestamps) = (0, 0, 0);
        for r in &recs {
            assert!(r.nanos >= last, "time never runs backwards");
            last = r.nanos;
            let ip = &r.data[..20];
            assert_eq!(ip[0], 0x45);
            assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as u32, r.orig);
            assert_eq!(ipv4_checksum(ip), 0, "a valid header sums to zero");
            let src: [u8; 4] = ip[12..16].try_into().unwrap();
            let dst: [u8; 4] = ip[16..20].try_into().unwrap();
            let tcp = &r.data[20..];
            let (sport, dport, seg, hlen) = Segment::decode(tcp).unwrap();
            assert_eq!(hlen, tcp.len(), "the payload is not captured");
            let payload = r.orig as usize - 20 - hlen;
            // the checksum verifies over the header and a zero payload
            let mut whole = tcp.to_vec();
            whole.resize(tcp.len() + payload, 0);
            assert_eq!(wavelab_tcp::wire::tcp_checksum_ipv4(src, dst, &whole), 0);
            if src == node_address(0) {
                assert_eq!((sport, dport, dst), (10_000, 5001, node_address(2)));
                assert_eq!(ip[8], 64, "leaves the sender with TTL 64");
                data += (payload > 0) as usize;
            } else {
                assert_eq!((sport, dport), (5001, 10_000));
                assert_eq!(ip[8], 63, "one router on the way back");
                sacks += (!seg.options.sack.is_empty()) as usize;
            }
            timestamps += seg.options.timestamps.is_some() as usize;
        }
        assert!(
            data > 500 && sacks > 10,
            "{data} data segments, {sacks} with SACK"
        );
        assert_eq!(timestamps, recs.len(), "timestamps on every segment");
    }

    #[test]
    fn a_flow_tap_sees_every_segment_the_sender_sends_and_receives() {
        let (r, files) = capture(LOSSY, &["flow:bulk"]);
        let recs = records(&files[0]);
        let log = &r.packets;
        let events = log.labels("event");
        let count = |e: u8| {
            let name = wavelab_model::tables::event::NAMES[e as usize];
            events.iter().filter(|&&l| l == name).count()
        };
        // data segments in the capture: every send and retransmission in the log
        let with_payload = recs
            .iter()
            .filter(|r| r.data[12..16] == node_address(0) && r.orig as usize > r.data.len())
            .count();
        assert_eq!(
            with_payload,
            count(wavelab_model::tables::event::SEND)
                + count(wavelab_model::tables::event::RETRANSMIT)
        );
        let to_sender = recs
            .iter()
            .filter(|r| r.data[16..20] == node_address(0))
            .count();
        assert_eq!(to_sender, count(wavelab_model::tables::event::ACK));
    }

    #[test]
    fn a_link_tap_sees_what_each_direction_serialised() {
        let (r, files) = capture(
            LOSSY,
            &[
                "link:bottleneck:forward",
                "link:bottleneck",
                "link:0:reverse",
            ],
        );
        let sent = r.links.u64s("sent_packets");
        let n = |f: &Vec<u8>| records(f).len() as u64;
        assert_eq!(n(&files[0]), sent[2]);
        assert_eq!(n(&files[1]), sent[2] + sent[3]);
        assert_eq!(n(&files[2]), sent[1]);
        // the loss model's victims were on the wire: more than what arrived
        assert!(sent[2] > r.links.u64s("delivered_packets")[2]);
    }

    /// RFC 3168 section 5: the two low bits of the TOS byte carry the ECN
    /// field. With ECN negotiated, the sender's data leaves ECT(0) and its
    /// SYN and the receiver's ACKs Not-ECT; on the bottleneck, after CoDel,
    /// as many data packets carry CE as the link counts marks.
    #[test]
    fn the_ecn_field_is_in_the_ip_header() {
        const ECN: &str = r#"
            duration = "6s"
            [[links]]
            name = "bottleneck"
            between = ["s", "d"]
            rate = "10Mbit/s"
            delay = "20ms"
            queue = "1000pkt"
            qdisc = "codel"
            [[flows]]
            name = "bulk"
            from = "s"
            to = "d"
            cc = "cubic"
            tcp = { sack = true, ecn = true }
        "#;
        let (r, files) = capture(ECN, &["flow:bulk", "link:bottleneck:forward"]);
        let ecn = |rec: &Record| rec.data[1] & 0b11;
        let is_data = |rec: &Record| rec.orig > 52 + 20; // more than headers
        let flow = records(&files[0]);
        let from_sender: Vec<&Record> = flow
            .iter()
            .filter(|x| x.data[12..16] == flow[0].data[12..16])
            .collect();
        assert_eq!(ecn(from_sender[0]), 0b00, "the SYN is Not-ECT");
        let data: Vec<u8> = from_sender
            .iter()
            .filter(|x| is_data(x))
            .map(|x| ecn(x))
            .collect();
        assert!(data.len() > 1_000);
        assert!(
            data.iter().all(|&e| e == 0b10),
            "the sender's data is ECT(0)"
        );
        let acks = flow
            .iter()
            .filter(|x| x.data[12..16] != flow[0].data[12..16]);
        assert!(acks.map(ecn).all(|e| e == 0), "ACKs are Not-ECT");
        let link = records(&files[1]);
        let ce = link.iter().filter(|x| ecn(x) == 0b11).count() as u64;
        let marked = r.links.u64s("marked")[0];
        assert!(marked > 0, "CoDel marked the standing queue");
        assert_eq!(ce, marked, "every mark is in the capture");
    }

    #[test]
    fn capturing_changes_nothing() {
        let (with, _) = capture(LOSSY, &["bulk", "link:bottleneck"]);
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        sim.run();
        let without = sim.results();
        for (a, b) in [
            (&with.series, &without.series),
            (&with.flows, &without.flows),
            (&with.links, &without.links),
            (&with.queues, &without.queues),
            (&with.packets, &without.packets),
        ] {
            // Debug prints every float exactly (and NaN equal to NaN)
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        assert_eq!(with.run, without.run);
    }

    #[test]
    fn both_engine_modes_write_the_same_files() {
        let targets = ["bulk", "link:bottleneck", "link:access:reverse"];
        let (_, virtual_time) = capture(LOSSY, &targets);
        let sc = Scenario::from_toml_str(LOSSY).unwrap();
        let mut sim = Simulation::new_reference(sc).unwrap();
        let bufs: Vec<Shared> = targets.iter().map(|_| Shared::default()).collect();
        for (t, b) in targets.iter().zip(&bufs) {
            sim.add_capture(t, Box::new(b.clone())).unwrap();
        }
        // pauses flush what the clock has reached, nothing later
        for ms in [1_234, 5_000, 7_777] {
            sim.run_until(Instant::from_nanos(ms * 1_000_000));
        }
        sim.run();
        sim.finish_captures();
        for (v, r) in virtual_time.iter().zip(&bufs) {
            assert!(records(v).len() > 300, "{} records", records(v).len());
            let r = r.0.lock().unwrap();
            let (a, b) = (records(v), records(&r));
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (x.nanos, &x.data, x.orig) == (y.nanos, &y.data, y.orig),
                    "record {i}: {} {:?} vs {} {:?}",
                    x.nanos,
                    x.data,
                    y.nanos,
                    y.data
                );
            }
            assert_eq!(a.len(), b.len());
            assert!(*v == *r, "identical bytes");
        }
    }

    #[test]
    fn bad_targets_name_what_exists() {
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        let e = |t: &str| {
            Capture::new(
                sim.scenario(),
                &[["bulk", "s", "d"]],
                t,
                Box::new(io::sink()),
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            e("nope"),
            "--pcap \"nope\": no flow or link is called \"nope\" (flows: bulk; links: access, bottleneck); write flow:NAME, link:NAME or link:NAME:forward"
        );
        assert!(e("flow:3").contains("no flow is called \"3\""));
        assert!(e("link:bottleneck:sideways").contains("\"sideways\" is not a direction"));
        assert!(sim.add_capture("link:1", Box::new(io::sink())).is_ok());
    }

    #[test]
    fn a_full_disk_is_reported_at_finish_and_stops_writing() {
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        sim.add_capture("bulk", Box::new(Full { room: 5000 }))
            .unwrap();
        sim.run();
        let done = sim.finish_captures();
        let err = done[0].1.as_ref().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    }
}
