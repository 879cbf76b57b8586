//! Against the running kernel: the program loads and registers as `wave`, a
//! socket can select it and carries data with it, its state and counters can
//! be read, and unloading unregisters it. These need root, the kernel's BTF
//! and the program built in; elsewhere they say why they are skipped (under
//! `CI=true` a missing prerequisite is a failure, not a skip). They change
//! what the kernel offers, so they run one after the other in one test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;
use wavelab_bpf::{kernel_has, Params, NAME};

/// Skips (or, under CI, fails) when the machine cannot load the program.
fn ready() -> bool {
    match wavelab_bpf::check() {
        Ok(()) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI must run the BPF tests: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            false
        }
    }
}

fn set_cc(s: &impl AsFd, name: &str) -> std::io::Result<()> {
    // SAFETY: the pointer and length describe `name`'s bytes, valid for the call.
    let rc = unsafe {
        libc::setsockopt(
            s.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn get_cc(s: &impl AsFd) -> String {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf and len describe a writable 16-byte buffer.
    let rc = unsafe {
        libc::getsockopt(
            s.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    String::from_utf8_lossy(&buf[..len as usize])
        .trim_end_matches('\0')
        .to_string()
}

#[test]
fn load_select_carry_inspect_unload() {
    if !ready() {
        return;
    }
    // a leftover registration from an interrupted run
    wavelab_bpf::unload().expect("unload");
    assert!(
        !kernel_has(NAME),
        "a \"wave\" not loaded by wavelab-bpf is registered"
    );

    let params = Params::from_json(r#"{"variant": "netdev-2017", "burst": 12}"#).unwrap();
    wavelab_bpf::load(&params).expect("load");
    assert!(
        kernel_has(NAME),
        "listed in tcp_available_congestion_control"
    );
    let st = wavelab_bpf::status().unwrap();
    assert!(st.registered && st.pinned);
    assert_eq!(st.params, Some(params), "the pinned parameters read back");
    let e = wavelab_bpf::load(&params).unwrap_err();
    assert!(e.0.contains("already registered"), "{e}");

    // a connection over loopback selects it and carries 4 MB with it
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got
    });
    let mut tx = TcpStream::connect(addr).unwrap();
    set_cc(&tx, NAME).expect("a socket selects wave");
    assert_eq!(get_cc(&tx), NAME);
    tx.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    let data: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    tx.write_all(&data).unwrap();
    let state = wavelab_bpf::socket_state(tx.as_fd())
        .unwrap()
        .expect("its Wave state");
    assert!(state.bursts >= 1, "{state:?}");
    assert_eq!(state.burst, 12);
    assert!(
        state.tx_time_us <= 200_000,
        "never above TxTime0: {state:?}"
    );
    drop(tx);
    assert!(reader.join().unwrap() == data, "the stream arrived intact");
    let c = wavelab_bpf::status().unwrap().counters.unwrap();
    assert!(c.sockets >= 1 && c.bursts >= 1 && c.trains >= 1, "{c:?}");

    // a socket that does not use it has no Wave state
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    assert_eq!(wavelab_bpf::socket_state(other.as_fd()).unwrap(), None);

    assert!(wavelab_bpf::unload().unwrap());
    assert!(!kernel_has(NAME), "gone after unload");
    let tx = TcpStream::connect(
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap(),
    )
    .unwrap();
    assert!(
        set_cc(&tx, NAME).is_err(),
        "no socket can select it any more"
    );
    assert!(
        !wavelab_bpf::unload().unwrap(),
        "a second unload has nothing to do"
    );
}
