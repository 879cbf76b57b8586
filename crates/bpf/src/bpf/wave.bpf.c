// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * TCP Wave as a BPF struct_ops congestion control for stock Linux (5.13+).
 *
 * Dual-licensed MIT OR GPL-2.0: the kernel loads a struct_ops congestion
 * control only if its license is GPL-compatible ("Dual MIT/GPL" below); the
 * rest of wavelab is MIT OR Apache-2.0. Written from the description of TCP
 * Wave in wavelab's docs (docs/algorithms/wave.md) and the sans-IO
 * implementation in crates/tcp/src/cc/wave/; no code was taken from the
 * TCP Wave Linux module or from the kernel.
 *
 * How the kernel's hooks carry Wave:
 *   - the socket's pacing timer is the send timer: sk_pacing_status is set
 *     to NEEDED (internal pacing, no fq qdisc needed) and the pacing rate to
 *     BURST x MSS / TxTime, so that after each paced transmission of one
 *     BURST-segment GSO packet the stack waits TxTime;
 *   - min_tso_segs is called at every transmit opportunity: when a burst is
 *     due it opens the window for one burst (cwnd = in flight + burst) and
 *     records the burst; it returns BURST, so the burst leaves as one GSO
 *     packet;
 *   - cong_control sees every ACK with the rate sample's Karn-valid RTT: it
 *     matches ACKs to bursts by sequence, times each ACK train, keeps the
 *     minimum, average and largest RTT, updates TxTime (tracking and
 *     adjustment modes) and the pacing rate, and pins cwnd at what is in
 *     flight plus what the open burst may still send, so ACKs release nothing
 *     by themselves;
 *   - set_state: fast retransmission (one segment outside the bursts, one
 *     segment less in the next burst) and RTO recovery (BURST0 and TxTime0).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* The running kernel's version, filled in by libbpf at load time. */
extern __u32 LINUX_KERNEL_VERSION __kconfig;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Parameters, set by the loader before loading. */
const volatile __u32 burst0 = 10;	     /* BURST0, segments */
const volatile __u32 min_burst = 3;	     /* smallest burst */
const volatile __u32 tx_time0_us = 500000;   /* TxTime0 */
const volatile __u32 min_tx_time_us = 1000;  /* smallest TxTime */
const volatile __u32 beta_us = 350000;	     /* DeltaRTT threshold of adjustment mode */
const volatile __u32 dispersion_scaling = 1; /* span x n/(n-1) */
const volatile __u32 dispersion_filter = 0;  /* 0 mean, 1 RTT-weighted, 2 latest */
const volatile __u32 first_release = 0;	     /* stability from the dispersion, min to 0 */

#define NB 32		/* bursts tracked per socket (a ring) */
#define NB_MASK (NB - 1)
#define TRAIN_STEPS 8	/* bursts one ACK may close */
#define RTT_UNKNOWN 0xffffffffu
#define USEC 1000ull
/* tcp_input.c's ACK flags (not in BTF): data, window update, data acked,
 * SYN acked; an ACK with none of them is a duplicate */
#define FLAG_NOT_DUP (0x01 | 0x02 | 0x04 | 0x10)

struct burst {
	__u64 sent_ns;
	__u64 first_ack_ns;
	__u64 last_ack_ns;
	__u32 start;	/* sequence number of its first byte */
	__u32 end;	/* first byte after it (set when the next burst opens) */
	__u32 segs;	/* segments it may send */
	__u32 segs_out0; /* tp->segs_out when it opened */
	__u32 acks;	/* ACKs inside it */
	__u32 rtt_us;	/* its Karn-valid RTT sample, 0 for none */
	__u8 has_first;
	__u8 cut;
	__u8 pad[2];
	__u32 tx_time_us; /* the TxTime it opened with: the next is due that much later */
};

/* One socket's state. Its first 64 bytes are read by the loader
 * (crates/bpf-maps/src/socket.rs, WaveSocket), and its ring of bursts by
 * the emulator (WaveSocket::recent_bursts): keep them in step. */
struct wave {
	__u64 next_burst_ns;
	__u32 tx_time_us;
	__u32 burst;
	__u32 fr_reduction;
	__u32 fr_mark;	   /* total_retrans at the fast retransmission; 0: none */
	__u32 min_rtt_us;  /* RTT_UNKNOWN when forgotten */
	__u32 avg_rtt_us;  /* 0: none yet */
	__u32 max_rtt_us;
	__u32 dispersion_us; /* 0: none yet */
	__u32 prev_una;
	__u32 stability;
	__u32 mode;	   /* 0 tracking, 1 adjustment */
	__u32 head;	   /* bursts opened (ring write index) */
	__u32 tail;	   /* bursts whose train closed (ring read index) */
	__u32 pad;
	struct burst b[NB];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wave);
} wave_sk SEC(".maps");

/* Counters over every socket, for `wavelab bpf status`. */
struct counters {
	__u64 sockets;
	__u64 bursts;
	__u64 trains;
	__u64 adjustments;
	__u64 fast_retransmits;
	__u64 rtos;
	__u64 last_tx_time_us;
	__u64 last_dispersion_us;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counters);
} wave_counters SEC(".maps");

static __always_inline struct counters *counters(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&wave_counters, &zero);
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline __u32 in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline int before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline struct wave *state(struct sock *sk, int create)
{
	return bpf_sk_storage_get(&wave_sk, sk, 0,
				  create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
}

/* Bytes per second that leave one burst per TxTime. */
static __always_inline void set_pacing(struct sock *sk, struct wave *w)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 bytes = (__u64)w->burst * tp->mss_cache;
	__u32 tx = w->tx_time_us ? w->tx_time_us : 1;

	sk->sk_pacing_rate = bytes * 1000000ull / tx;
}

/* Segments the open burst may still send. */
static __always_inline __u32 quota_left(const struct tcp_sock *tp, struct wave *w)
{
	struct burst *b;
	__u32 sent;

	if (w->head == 0)
		return 0;
	b = &w->b[(w->head - 1) & NB_MASK];
	sent = tp->segs_out - b->segs_out0;
	return sent >= b->segs ? 0 : b->segs - sent;
}

/* cwnd = in flight + what the open burst may still send (+1 for a fast
 * retransmission outside the bursts): ACKs release nothing by themselves.
 * tcp_cwnd_test lets at most half the window out at once ("at least two GSO
 * packets in flight"), so while a burst is open the window is at least twice
 * what it may still send: the quota then leaves as one GSO packet. */
static __always_inline void pin_cwnd(struct sock *sk, struct wave *w)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 quota = quota_left(tp, w);
	__u32 cwnd = in_flight(tp) + quota;

	if (quota && cwnd < 2 * quota)
		cwnd = 2 * quota;
	/*
	 * One more while a retransmission is pending: the fast retransmission
	 * (until the kernel's retransmission counter moves), or segments marked
	 * lost and not yet retransmitted. The pacing timer's handler reaches the
	 * retransmission queue only when the window exceeds what is in flight
	 * (tcp_tsq_write()); without the one, a burst due in loss recovery sent
	 * new data and the holes waited for the next RTO. Between bursts the
	 * extra segment cannot leave: the pacing check, which comes first in
	 * both send loops, holds everything until the next burst is due.
	 */
	if ((w->fr_mark && tp->total_retrans == w->fr_mark) || tp->lost_out > tp->retrans_out)
		cwnd += 1;
	tp->snd_cwnd = cwnd;
}

static __always_inline void open_burst(struct sock *sk, struct wave *w, __u64 now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct counters *c = counters();
	struct burst *b;
	__u32 size = w->burst > w->fr_reduction ? w->burst - w->fr_reduction : 0;

	if (size < min_burst)
		size = min_burst;
	w->fr_reduction = 0;
	if (w->head)
		w->b[(w->head - 1) & NB_MASK].end = tp->snd_nxt;
	if (w->head - w->tail >= NB)
		w->tail = w->head - NB + 1; /* forget the oldest train */
	b = &w->b[w->head & NB_MASK];
	b->first_ack_ns = 0;
	b->last_ack_ns = 0;
	b->acks = 0;
	b->rtt_us = 0;
	b->has_first = 0;
	b->cut = 0;
	b->sent_ns = now;
	b->start = tp->snd_nxt;
	b->end = tp->snd_nxt;
	b->segs = size;
	b->segs_out0 = tp->segs_out;
	b->tx_time_us = w->tx_time_us;
	w->head++;
	w->next_burst_ns = now + (__u64)w->tx_time_us * USEC;
	if (c) {
		__sync_fetch_and_add(&c->bursts, 1);
		c->last_tx_time_us = w->tx_time_us;
	}
}

/* avg <- a avg + min with a = (first - min) / first (the first average is
 * the minimum; no sample: unchanged). */
static __always_inline void end_train_avg(struct wave *w, __u32 first)
{
	__u64 a, m, f;

	if (w->min_rtt_us == RTT_UNKNOWN)
		return;
	if (!w->avg_rtt_us) {
		w->avg_rtt_us = w->min_rtt_us;
		return;
	}
	if (!first || first < w->min_rtt_us)
		return;
	a = w->avg_rtt_us;
	m = w->min_rtt_us;
	f = first;
	w->avg_rtt_us = (__u32)((f - m) * a / f + m);
}

static __always_inline __u32 delta_rtt(const struct wave *w)
{
	if (w->min_rtt_us == RTT_UNKNOWN || !w->avg_rtt_us || w->avg_rtt_us < w->min_rtt_us)
		return 0;
	return w->avg_rtt_us - w->min_rtt_us;
}

static __always_inline void fold_dispersion(struct wave *w, __u32 sample)
{
	__u32 p = w->dispersion_us;

	if (!p || dispersion_filter == 2) {
		w->dispersion_us = sample;
	} else if (dispersion_filter == 0) {
		w->dispersion_us = (__u32)(((__u64)p + sample) / 2);
	} else if (sample > p) {
		__u64 beta = beta_us ? beta_us : 1;
		__u64 alpha = delta_rtt(w);

		if (alpha > beta)
			alpha = beta;
		w->dispersion_us = (__u32)(((beta - alpha) * p + alpha * sample) / beta);
	} else {
		w->dispersion_us = sample;
	}
}

/* A closed train: the module's end-of-round update (docs/algorithms/wave.md). */
static __always_inline void on_train(struct sock *sk, struct wave *w, struct burst *b,
				     int cumulative)
{
	struct counters *c = counters();
	__u32 span_us, sample = 0, delta;

	if (c)
		__sync_fetch_and_add(&c->trains, 1);
	end_train_avg(w, b->rtt_us);
	/* the dispersion sample: not from a train cut by a loss, a burst shorter
	 * than BURST, or one above the average RTT */
	if (!b->cut && !cumulative && b->segs >= w->burst && b->acks >= 2) {
		span_us = (__u32)((b->last_ack_ns - b->first_ack_ns) / USEC);
		sample = dispersion_scaling ? span_us * b->acks / (b->acks - 1) : span_us;
		if (sample && (!w->avg_rtt_us || sample <= w->avg_rtt_us))
			fold_dispersion(w, sample);
	}
	if (w->stability) {
		w->stability--;
		return;
	}
	delta = delta_rtt(w);
	if (delta > beta_us) {
		__u32 div = first_release ? w->dispersion_us : w->tx_time_us;

		w->stability = (__u8)(div ? w->avg_rtt_us / div : 0);
		w->min_rtt_us = first_release ? 0 : RTT_UNKNOWN;
		if (w->max_rtt_us)
			w->avg_rtt_us = w->max_rtt_us;
		w->tx_time_us = tx_time0_us;
		w->mode = 1;
		if (c)
			__sync_fetch_and_add(&c->adjustments, 1);
	} else if (w->dispersion_us) {
		__u32 tx = w->dispersion_us + delta / 2;

		if (tx < min_tx_time_us)
			tx = min_tx_time_us;
		if (tx > tx_time0_us)
			tx = tx_time0_us;
		w->tx_time_us = tx;
		w->mode = 0;
	}
	if (c) {
		c->last_tx_time_us = w->tx_time_us;
		c->last_dispersion_us = w->dispersion_us;
	}
}

SEC("struct_ops")
void BPF_PROG(wave_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct counters *c = counters();
	struct wave *w = state(sk, 1);

	if (!w)
		return;
	/* a new storage is zeroed */
	w->burst = burst0;
	w->tx_time_us = tx_time0_us;
	w->min_rtt_us = RTT_UNKNOWN;
	w->prev_una = tp->snd_una;
	sk->sk_pacing_status = SK_PACING_NEEDED;
	set_pacing(sk, w);
	tp->snd_ssthresh = 0x7fffffff;
	tp->snd_cwnd = burst0;
	if (c)
		__sync_fetch_and_add(&c->sockets, 1);
}

/* True on kernels whose tcp_write_xmit() grows the first unsent skb to the
 * window's quota from the skbs behind it (tcp_grow_skb(), Linux 6.10). */
static __always_inline int grows_skb(void)
{
	return LINUX_KERNEL_VERSION >= KERNEL_VERSION(6, 10, 0);
}

/*
 * The pacing rate for the transmission about to happen. The stack waits
 * len / rate after sending len bytes (less a credit of up to half that when
 * the send was late, tcp_update_skb_after_send), and a pacing-timer wakeup is
 * the only transmit opportunity without an ACK. So: while the open burst needs
 * more than the first unsent skb holds, a rate that brings the next skb a few
 * microseconds later (and calls us again); for the skb that ends the burst, a
 * rate whose wait, credit included, ends exactly when the next burst is due.
 *
 * What one transmission sends depends on the kernel. Up to Linux 6.9 it is at
 * most the first unsent skb. From 6.10 ("tcp: try to send bigger TSO
 * packets", tcp_grow_skb() in tcp_write_xmit(), read in v6.18's
 * tcp_output.c) the stack first pulls data from the skbs behind it until the
 * skb holds the window's quota, so one transmission sends the whole burst
 * whenever the application has written it (write_seq - snd_nxt bytes are
 * unsent), however the bytes are split into skbs. Taking the first skb's
 * length there, as for the older kernels, chose the short "next piece"
 * rate for a skb that then left as the whole burst: the pacing timer fired
 * a few microseconds later with nothing due, and the next burst waited for
 * the next ACK (15-41 % of bursts one ACK interval late on 6.18).
 */
static __always_inline void pace_next(struct sock *sk, struct wave *w, __u32 quota, __u64 now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *head = sk->sk_write_queue.next;
	__u64 part = (__u64)quota * tp->mss_cache, hlen = 0, gap, credit, len_ns;

	if (grows_skb())
		hlen = tp->write_seq - tp->snd_nxt;
	else if (head && (void *)head != (void *)&sk->sk_write_queue)
		hlen = head->len;

	if (!hlen)
		return;
	if (hlen < part) {
		sk->sk_pacing_rate = hlen * 1000000000ull / (2 * USEC);
		return;
	}
	gap = w->next_burst_ns > now ? w->next_burst_ns - now : USEC;
	credit = now > tp->tcp_wstamp_ns ? now - tp->tcp_wstamp_ns : 0;
	len_ns = credit <= gap ? gap + credit : 2 * gap;
	sk->sk_pacing_rate = part * 1000000000ull / len_ns;
}

SEC("struct_ops")
__u32 BPF_PROG(wave_min_tso_segs, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct wave *w = state(sk, 0);
	__u64 now = bpf_ktime_get_ns();
	__u32 quota;

	if (!w)
		return burst0;
	/* a little early is on time (the pacing timer's own slack) */
	if (now + 20 * USEC >= w->next_burst_ns)
		open_burst(sk, w, now);
	pin_cwnd(sk, w);
	quota = quota_left(tp, w);
	if (quota)
		pace_next(sk, w, quota, now);
	return w->burst;
}

SEC("struct_ops")
void BPF_PROG(wave_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct wave *w = state(sk, 0);
	__u64 now = bpf_ktime_get_ns();
	__u32 una, nxt, acked, i;
	int cumulative, karn, sampled = 0;

	if (!w)
		return;
	una = tp->snd_una;
	nxt = tp->snd_nxt;
	acked = una - w->prev_una;
	if (before(una, w->prev_una))
		acked = 0;
	w->prev_una = una;
	if (!acked) {
		/* a duplicate ACK (no data, no window update: the kernel's
		 * FLAG_NOT_DUP) cuts the oldest open train */
		if (!(flag & FLAG_NOT_DUP) && w->tail != w->head)
			w->b[w->tail & NB_MASK].cut = 1;
		pin_cwnd(sk, w);
		return;
	}
	cumulative = acked > 2 * tp->mss_cache;
	karn = rs->rtt_us > 0;
	for (i = 0; i < TRAIN_STEPS; i++) {
		struct burst *b;
		__u32 end;

		if (w->tail == w->head)
			break;
		b = &w->b[w->tail & NB_MASK];
		end = (w->tail + 1 == w->head) ? nxt : b->end;
		if (!before(b->start, una))
			break;
		if (!b->has_first) {
			b->has_first = 1;
			b->first_ack_ns = now;
			if (!sampled) {
				sampled = 1;
				if (karn && !cumulative) {
					__u32 r = (__u32)((now - b->sent_ns) / USEC);

					if (!r)
						r = 1;
					b->rtt_us = r;
					/* a forgotten minimum is RTT_UNKNOWN: the
					 * next sample becomes it */
					if (r < w->min_rtt_us)
						w->min_rtt_us = r;
					if (r > w->max_rtt_us)
						w->max_rtt_us = r;
				}
			}
		}
		if (!before(end, una)) {
			b->last_ack_ns = now;
			b->acks++;
		}
		if (before(una, end)) {
			if (cumulative)
				b->cut = 1;
			break;
		}
		/* the train closed; the newest burst is closed only once fully sent */
		if (w->tail + 1 == w->head && quota_left(tp, w))
			break;
		w->tail++;
		on_train(sk, w, b, cumulative);
		cumulative = 1; /* one statistics update per ACK */
	}
	if (w->fr_mark && tp->total_retrans != w->fr_mark)
		w->fr_mark = 0;
	pin_cwnd(sk, w);
}

SEC("struct_ops")
void BPF_PROG(wave_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct counters *c = counters();
	struct wave *w = state(sk, 0);

	if (!w)
		return;
	if (new_state == TCP_CA_Recovery) {
		/* fast retransmission: the lost segment at once, outside the
		 * bursts; one segment less in the next burst */
		w->fr_reduction += 1;
		w->fr_mark = tp->total_retrans;
		if (!w->fr_mark)
			w->fr_mark = 0xffffffffu;
		if (c)
			__sync_fetch_and_add(&c->fast_retransmits, 1);
	} else if (new_state == TCP_CA_Loss) {
		/* RTO recovery (DCNET 2016, section 2.2) */
		w->burst = burst0;
		w->tx_time_us = tx_time0_us;
		w->fr_reduction = 0;
		w->fr_mark = 0;
		w->next_burst_ns = 0;
		set_pacing(sk, w);
		if (c)
			__sync_fetch_and_add(&c->rtos, 1);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(wave_ssthresh, struct sock *sk)
{
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops")
__u32 BPF_PROG(wave_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

/* The send buffer the stack sizes from the window (2 x cwnd by default):
 * Wave's window is what is in flight, so ask for more, or an application
 * could not keep a whole burst queued. */
SEC("struct_ops")
__u32 BPF_PROG(wave_sndbuf_expand, struct sock *sk)
{
	return 4;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops wave = {
	.init = (void *)wave_init,
	.min_tso_segs = (void *)wave_min_tso_segs,
	.cong_control = (void *)wave_cong_control,
	.set_state = (void *)wave_set_state,
	.ssthresh = (void *)wave_ssthresh,
	.undo_cwnd = (void *)wave_undo_cwnd,
	.sndbuf_expand = (void *)wave_sndbuf_expand,
	.name = "wave",
};
