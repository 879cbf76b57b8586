//! The built-in sender and receiver: kernel TCP connections across the
//! emulated path, one thread per endpoint, no external program.
//!
//! The sender's socket is made in its node's namespace with the flow's
//! congestion control (`TCP_CONGESTION`), MSS (`TCP_MAXSEG`) and RTO cap
//! (`TCP_RTO_MAX_MS`, Linux 6.15+), bound to the flow's source port (the
//! ports of the simulator's captures) and connected at the flow's start; it
//! writes zeros until its size is sent, its stop time, or the end of the run,
//! then shuts down its side (FIN) and notes when the FIN is acknowledged
//! (the completion time). The receiver's listener accepts every flow of its
//! node and port, tells them apart by source port, and reads everything. A
//! flow may instead run a command (`cmd`) in its node's namespace, in a PID
//! namespace of its own that dies with the emulator.

use crate::clock::Clock;
use crate::datagrams::{self, Echoes};
use crate::netns::{Namespace, SetupError};
use crate::plan::FlowPlan;
use crate::tcpinfo::{TcpInfo, TCP_CLOSE, TCP_FIN_WAIT2, TCP_TIME_WAIT};
use nix::sys::socket::{
    bind, connect, setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType, SockaddrIn,
};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;
use wavelab_tcp::Instant;

/// `TCP_RTO_MAX_MS` (Linux 6.15).
const TCP_RTO_MAX_MS: i32 = 44;
/// `TCP_WINDOW_CLAMP`.
const TCP_WINDOW_CLAMP: i32 = 10;
/// How often blocked socket calls look at the stop flag.
pub(crate) const TICK: StdDuration = StdDuration::from_millis(20);

/// What the sampler and the results see of a flow.
#[derive(Debug, Default)]
pub struct FlowState {
    /// The sender's socket, once made.
    pub sender: OnceLock<TcpStream>,
    /// The receiver's connection, once accepted.
    pub receiver: OnceLock<TcpStream>,
    /// When the sender's FIN was acknowledged (ns), or `u64::MAX`.
    pub completed_at: AtomicU64,
    /// What went wrong, if anything (a refused option, a connection that
    /// never opened, a command that failed to start).
    pub errors: Mutex<Vec<String>>,
    /// Notes: options the kernel refused that only change fidelity.
    pub notes: Mutex<Vec<String>>,
    /// A ping flow's answers.
    pub echoes: Mutex<Echoes>,
}

impl FlowState {
    fn new() -> Self {
        FlowState {
            completed_at: AtomicU64::new(u64::MAX),
            ..FlowState::default()
        }
    }

    pub(crate) fn error(&self, e: String) {
        self.errors.lock().expect("not poisoned").push(e);
    }

    /// The sender's TCP_INFO, if it has a socket.
    pub fn sender_info(&self) -> Option<TcpInfo> {
        self.sender
            .get()
            .and_then(|s| TcpInfo::read(s.as_fd()).ok())
    }

    /// The receiver's TCP_INFO, if it has a connection.
    pub fn receiver_info(&self) -> Option<TcpInfo> {
        self.receiver
            .get()
            .and_then(|s| TcpInfo::read(s.as_fd()).ok())
    }
}

/// The threads and processes of the flows.
#[derive(Default)]
pub struct Flows {
    /// Each flow's state.
    pub state: Vec<Arc<FlowState>>,
    threads: Vec<JoinHandle<()>>,
}

fn sockaddr(a: [u8; 4], port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(a.into(), port)
}

impl Flows {
    /// Starts a receiver listener for each (node, port) that flows go to,
    /// and a sender (or a command) for each flow, waiting for its start.
    /// `addresses` and `namespaces` are by node (the plan's order).
    pub fn start(
        flows: &[FlowPlan],
        namespaces: &[Namespace],
        addresses: &[[u8; 4]],
        clock: Clock,
        end: Instant,
        stop: Arc<AtomicBool>,
        logs: Option<PathBuf>,
    ) -> Result<Flows, SetupError> {
        let mut out = Flows {
            state: flows.iter().map(|_| Arc::new(FlowState::new())).collect(),
            threads: Vec::new(),
        };
        // one listener per (node, port) that built-in flows go to
        let mut listeners: Vec<((usize, u16), Vec<usize>)> = Vec::new();
        for (i, f) in (flows.iter().enumerate())
            .filter(|(_, f)| f.cmd.is_none() && f.datagrams.is_none() && f.subflow_of.is_none())
        {
            match listeners.iter_mut().find(|(k, _)| *k == (f.to, f.dport)) {
                Some((_, v)) => v.push(i),
                None => listeners.push(((f.to, f.dport), vec![i])),
            }
        }
        for ((node, port), members) in listeners {
            let addr = sockaddr(addresses[node], port);
            let multipath = members.iter().any(|&i| flows[i].mptcp.is_some());
            let listener = namespaces[node].run(move || {
                if multipath {
                    // on every address: the other end joins the announced ones
                    crate::mptcp::listener(SocketAddrV4::new([0, 0, 0, 0].into(), port))
                } else {
                    TcpListener::bind(addr)
                }
                .map_err(|e| SetupError::io(format!("listening on {addr}"), e))
            })?;
            listener
                .set_nonblocking(true)
                .map_err(|e| SetupError::io("a listener", e))?;
            let by_port: Vec<(u16, usize, u64, Arc<FlowState>)> = members
                .iter()
                .map(|&i| {
                    (
                        flows[i].sport,
                        i,
                        flows[i].tcp.rcv_window.0,
                        out.state[i].clone(),
                    )
                })
                .collect();
            let stop = stop.clone();
            out.threads.push(spawn("receiver", move || {
                accept_loop(listener, by_port, &stop)
            })?);
        }
        out.threads.extend(datagrams::start_receivers(
            flows, namespaces, addresses, &stop,
        )?);
        for (i, f) in flows.iter().enumerate() {
            if f.subflow_of.is_some() {
                continue; // an MPTCP subflow: the kernel opens it
            }
            if let Some(d) = &f.datagrams {
                out.threads.extend(datagrams::start_sender(
                    f,
                    d,
                    &namespaces[f.from],
                    (addresses[f.from], addresses[f.to]),
                    clock,
                    end,
                    out.state[i].clone(),
                    stop.clone(),
                )?);
                continue;
            }
            let ns = namespaces[f.from].clone();
            let state = out.state[i].clone();
            let stop = stop.clone();
            let f2 = f.clone();
            let (from, to) = (addresses[f.from], addresses[f.to]);
            if let Some(cmd) = &f.receiver_cmd {
                let rns = namespaces[f.to].clone();
                let env = command_env(f, from, to, i);
                let (cmd, log) = (cmd.clone(), log_file(&logs, &f.name, "receiver"));
                let (state, stop) = (state.clone(), stop.clone());
                out.threads.push(spawn("receiver-cmd", move || {
                    run_command(
                        &rns,
                        &cmd,
                        env,
                        log,
                        Instant::ZERO,
                        end,
                        clock,
                        &state,
                        &stop,
                    )
                })?);
            }
            match &f.cmd {
                Some(cmd) => {
                    let env = command_env(f, from, to, i);
                    let (cmd, log) = (cmd.clone(), log_file(&logs, &f.name, "cmd"));
                    let start = Instant::ZERO + f.start;
                    out.threads.push(spawn("cmd", move || {
                        run_command(&ns, &cmd, env, log, start, end, clock, &state, &stop)
                    })?);
                }
                None => out.threads.push(spawn("sender", move || {
                    if let Err(e) = ns.enter() {
                        state.error(format!("entering the namespace of {}: {e}", ns.label));
                        return;
                    }
                    send(&f2, from, to, clock, end, &state, &stop);
                })?),
            }
        }
        Ok(out)
    }

    /// Waits for every thread (after the stop flag is set).
    pub fn join(&mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

pub(crate) fn spawn(
    what: &str,
    f: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, SetupError> {
    std::thread::Builder::new()
        .name(format!("flow-{what}"))
        .spawn(f)
        .map_err(|e| SetupError::io(format!("spawning a {what} thread"), e))
}

/// Accepts the connections of the flows in `by_port` (source port, flow,
/// receive window, state) until the stop flag is set; a thread reads each.
fn accept_loop(
    listener: TcpListener,
    by_port: Vec<(u16, usize, u64, Arc<FlowState>)>,
    stop: &Arc<AtomicBool>,
) {
    let mut readers = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((conn, peer)) => {
                let Some((_, _, window, state)) = by_port.iter().find(|(p, ..)| *p == peer.port())
                else {
                    continue; // not one of ours: dropped
                };
                let clamp = (*window).min(i32::MAX as u64) as i32;
                let _ = crate::sys::setsockopt_int(
                    conn.as_fd(),
                    libc::IPPROTO_TCP,
                    TCP_WINDOW_CLAMP,
                    clamp,
                );
                let _ = conn.set_read_timeout(Some(TICK));
                // the reader wakes per 64 KB (or at the FIN), not per segment:
                // at high rates a wake-up per packet costs the thread that
                // releases them more than the packet itself
                let _ = crate::sys::setsockopt_int(
                    conn.as_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVLOWAT,
                    64 << 10,
                );
                let reader = match conn.try_clone() {
                    Ok(r) => r,
                    Err(e) => {
                        state.error(format!("receiver: {e}"));
                        continue;
                    }
                };
                let _ = state.receiver.set(conn);
                let stop = stop.clone();
                readers.push(std::thread::spawn(move || read_all(reader, &stop)));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK / 4),
            Err(_) => std::thread::sleep(TICK),
        }
    }
    for r in readers {
        let _ = r.join();
    }
}

/// Reads and discards until the peer closes or the run stops.
fn read_all(mut conn: TcpStream, stop: &AtomicBool) {
    let mut buf = vec![0u8; 1 << 18];
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
}

/// The built-in sender of flow `f` (on a thread inside its namespace).
fn send(
    f: &FlowPlan,
    from: [u8; 4],
    to: [u8; 4],
    clock: Clock,
    end: Instant,
    state: &FlowState,
    stop: &AtomicBool,
) {
    let start = Instant::ZERO + f.start;
    while clock.now() < start {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let left = start.saturating_since(clock.now()).as_nanos();
        std::thread::sleep(StdDuration::from_nanos(left).min(TICK));
    }
    let sock = match open(f, from, state) {
        Ok(s) => s,
        Err(e) => return state.error(e),
    };
    let target = SockaddrIn::from(sockaddr(to, f.dport));
    // a non-blocking connect, so that the stop flag is seen during SYN retries
    match connect(sock.as_raw_fd(), &target) {
        Ok(()) => {}
        Err(nix::errno::Errno::EINPROGRESS) => {}
        Err(e) => return state.error(format!("connecting to {target}: {e}")),
    }
    let stream = TcpStream::from(sock);
    loop {
        if stop.load(Ordering::Relaxed) || clock.now() >= end {
            let _ = state.sender.set(stream);
            return;
        }
        match stream.peer_addr() {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::NotConnected => {
                if let Ok(Some(e)) = stream.take_error() {
                    return state.error(format!("connecting to {target}: {e}"));
                }
                std::thread::sleep(StdDuration::from_micros(200));
            }
            Err(e) => return state.error(format!("connecting to {target}: {e}")),
        }
    }
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(TICK));
    let stop_at = f.stop.map(|s| Instant::ZERO + s).unwrap_or(end);
    let mut left = f.size.unwrap_or(u64::MAX);
    let chunk = vec![0u8; 1 << 16];
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => return state.error(format!("sender: {e}")),
    };
    let _ = state.sender.set(stream);
    while left > 0 && clock.now() < stop_at && !stop.load(Ordering::Relaxed) {
        let n = left.min(chunk.len() as u64) as usize;
        match writer.write(&chunk[..n]) {
            Ok(k) => left -= k as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return state.error(format!("sending: {e}")),
        }
    }
    if stop.load(Ordering::Relaxed) || clock.now() >= end {
        return; // the run ended with data still to send
    }
    let _ = writer.flush();
    let _ = writer.shutdown(Shutdown::Write);
    // the completion: when the FIN is acknowledged
    while !stop.load(Ordering::Relaxed) && clock.now() < end {
        match TcpInfo::read(writer.as_fd()) {
            Ok(i) if matches!(i.state, TCP_FIN_WAIT2 | TCP_TIME_WAIT | TCP_CLOSE) => {
                state
                    .completed_at
                    .store(clock.now().as_nanos(), Ordering::Relaxed);
                return;
            }
            Ok(_) => std::thread::sleep(StdDuration::from_micros(500)),
            Err(_) => return,
        }
    }
}

/// The sender's socket, with the flow's options, bound to its port.
fn open(f: &FlowPlan, from: [u8; 4], state: &FlowState) -> Result<OwnedFd, String> {
    let sock = if f.mptcp.is_some() {
        crate::mptcp::socket(libc::SOCK_NONBLOCK).map_err(|e| format!("an MPTCP socket: {e}"))?
    } else {
        socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
            None,
        )
        .map_err(|e| format!("socket: {e}"))?
    };
    let cc = f.cc.clone().unwrap_or_default();
    setsockopt(
        &sock,
        sockopt::TcpCongestion,
        &std::ffi::OsString::from(&cc),
    )
    .map_err(|e| format!("the kernel refused congestion control \"{cc}\": {e}"))?;
    setsockopt(&sock, sockopt::ReuseAddr, &true).map_err(|e| format!("SO_REUSEADDR: {e}"))?;
    match setsockopt(&sock, sockopt::TcpMaxSeg, &f.tcp.mss) {
        Ok(()) => {}
        // an MPTCP socket does not take it (Linux 6.x): the MTU sets the MSS
        Err(e) if f.mptcp.is_some() => state.notes.lock().expect("not poisoned").push(format!(
            "tcp.mss: an MPTCP socket refuses TCP_MAXSEG ({e}); the subflows' MSS follows the devices' MTU"
        )),
        Err(e) => return Err(format!("TCP_MAXSEG {}: {e}", f.tcp.mss)),
    }
    let max_rto = f.tcp.max_rto.as_millis().min(i32::MAX as u64) as i32;
    if let Err(e) =
        crate::sys::setsockopt_int(sock.as_fd(), libc::IPPROTO_TCP, TCP_RTO_MAX_MS, max_rto)
    {
        state.notes.lock().expect("not poisoned").push(format!(
            "tcp.max_rto: TCP_RTO_MAX_MS {max_rto} refused ({e}; Linux 6.15 or later has it): the kernel's 120 s cap applies"
        ));
    }
    let local = SockaddrIn::from(sockaddr(from, f.sport));
    bind(sock.as_raw_fd(), &local).map_err(|e| format!("binding {local}: {e}"))?;
    Ok(sock)
}

/// The environment a command sees.
fn command_env(f: &FlowPlan, from: [u8; 4], to: [u8; 4], i: usize) -> Vec<(String, String)> {
    let ip = |a: [u8; 4]| std::net::Ipv4Addr::from(a).to_string();
    vec![
        ("WAVELAB_FLOW".into(), f.name.clone()),
        ("WAVELAB_FLOW_INDEX".into(), i.to_string()),
        ("WAVELAB_FROM".into(), ip(from)),
        ("WAVELAB_TO".into(), ip(to)),
        ("WAVELAB_SPORT".into(), f.sport.to_string()),
        ("WAVELAB_PORT".into(), f.dport.to_string()),
        ("WAVELAB_CC".into(), f.cc.clone().unwrap_or_default()),
        (crate::MARKER.into(), std::process::id().to_string()),
    ]
}

fn log_file(dir: &Option<PathBuf>, flow: &str, what: &str) -> Option<PathBuf> {
    let safe: String = flow
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.as_ref().map(|d| d.join(format!("{what}-{safe}.log")))
}

/// Runs `cmd` with `sh -c` in `ns` from `start` until it exits or the run
/// ends, in a PID namespace of its own (`unshare --pid --fork
/// --kill-child`): when the emulator dies, its child `unshare` gets SIGKILL
/// (`PR_SET_PDEATHSIG`), which kills the command's PID 1 and so every
/// process the command started.
#[allow(clippy::too_many_arguments)]
fn run_command(
    ns: &Namespace,
    cmd: &str,
    env: Vec<(String, String)>,
    log: Option<PathBuf>,
    start: Instant,
    end: Instant,
    clock: Clock,
    state: &FlowState,
    stop: &AtomicBool,
) {
    if let Err(e) = ns.enter() {
        return state.error(format!("entering the namespace of {}: {e}", ns.label));
    }
    while clock.now() < start {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(TICK.min(StdDuration::from_nanos(
            start.saturating_since(clock.now()).as_nanos(),
        )));
    }
    let (stdout, stderr) = match &log {
        Some(p) => match File::create(p).and_then(|f| Ok((f.try_clone()?, f))) {
            Ok((a, b)) => (Stdio::from(a), Stdio::from(b)),
            Err(e) => return state.error(format!("{}: {e}", p.display())),
        },
        None => (Stdio::null(), Stdio::null()),
    };
    let mut c = Command::new("unshare");
    c.args(["--pid", "--fork", "--kill-child=SIGKILL", "sh", "-c", cmd])
        .envs(env)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    crate::sys::kill_with_parent(&mut c);
    let mut child: Child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return state.error(format!("running `{cmd}`: {e}")),
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    state.error(format!("`{cmd}` exited with {status}"));
                }
                return;
            }
            Ok(None) => {}
            Err(e) => return state.error(format!("`{cmd}`: {e}")),
        }
        if stop.load(Ordering::Relaxed) || clock.now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(TICK);
    }
}
