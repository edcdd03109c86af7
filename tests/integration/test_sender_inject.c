/*
 * Forged segments from the peer's side during a transfer (RFC 5961): a
 * blind RST (a random sequence number), an RST inside the window but not
 * at RCV.NXT, a SYN, and an ACK far older than SND.UNA, each built from a
 * segment of the live connection sniffed on the receiver's veth and sent
 * from there (test_inject_util.h).  The engine's sender must finish with
 * every byte verified and count each forgery where it belongs; the kernel's
 * own TCP sender gets the same frames in the same test as the reference,
 * and survives them too.
 */
#include "test_sender_util.h"
#include "test_inject_util.h"

static int inj_port;
static uint64_t inj_rng = 5961;

/* 600 ms apart: more than the 500 ms both stacks leave between two challenge ACKs of a connection. */
#define INJ_GAP_US 600000

/*
 * The sniffed segment of the moment (fresh timestamps: PAWS would drop an
 * old one) with seq, ack, flags.  False when the connection went quiet:
 * the transfer's own result says why.
 */
static bool forge(const struct inj_sock *s, uint32_t dseq, bool random_seq, uint32_t dack, uint8_t flags)
{
	struct inj_frame base, f;
	uint32_t seq;

	if (!inj_sniff(s, (uint16_t)inj_port, 2000, &base)) {
		cr_log_warn("port %d: no segment to forge from, the connection is over", inj_port);
		return false;
	}
	seq = random_seq ? (uint32_t)gso_test_rand(&inj_rng) : inj_seq(&base) + dseq;
	f = inj_tcp(&base, seq, dack ? inj_ack(&base) - dack : 0, flags);
	inj_send(s, &f);
	usleep(INJ_GAP_US);
	return true;
}

static void forge_5961(struct bt_proc *sp)
{
	struct inj_sock s;

	(void)sp;
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	s = inj_open(IF_B);
	/* The handshake is long over and data flows; seq is the sender's RCV.NXT (the receiver sends nothing). */
	usleep(300000);
	/* A blind RST: a random number well outside any window. */
	if (forge(&s, 0x40000000u + (uint32_t)(gso_test_rand(&inj_rng) % 0x10000000u), false, 0, 0x04 /* RST */) &&
	    /* An RST in the window, not at RCV.NXT. */
	    forge(&s, 1 + (uint32_t)(gso_test_rand(&inj_rng) % 1000), false, 0, 0x04) &&
	    forge(&s, 0, true, 0, 0x02 /* SYN */))
		/* An ACK 1 GB behind SND.UNA: older than any window. */
		forge(&s, 0, false, 0x40000000u, 0x10 /* ACK */);
	close(s.fd);
}

/* A TcpExt counter of side a's namespace (nstat, absolute, history untouched). */
static double tcp_ext(const char *name)
{
	const char *out = bt_path("nstat");
	char line[256];
	double v = -1;
	FILE *fp;

	cr_assert_eq(nsbed_sh(&tb, 0, "nstat -asz %s > %s", name, out), 0);
	fp = fopen(out, "r");
	cr_assert_not_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		char key[96];
		double n;

		if (sscanf(line, "%95s %lf", key, &n) == 2 && !strcmp(key, name))
			v = n;
	}
	fclose(fp);
	cr_assert_geq(v, 0, "nstat has no %s", name);
	return v;
}

Test(sender_inject, rfc5961_forgeries, .fini = fini, .timeout = 120)
{
	/* 96 MB at 200 Mbit/s: 4 s, the forgeries from 0.3 s to about 2.7 s. */
	struct run eng = { .mode = "software", .bytes = "96M", .port = 7480, .during = forge_5961,
			   .extra = { "--rate", "200M" } };
	struct run ker = { .mode = "kernel", .bytes = "96M", .port = 7481, .during = forge_5961,
			   .extra = { "--rate", "200M" } };
	double chal0, syn0;

	bed();
	inj_port = eng.port;
	transfer(&eng, NULL);
	expect_verified(&eng, 96u << 20);
	cr_log_info("engine: rst ignored %g, rst challenged %g, syn challenged %g, old acks %g, challenge acks %g"
		    " (%g held back)", bt_num(eng.sj, "rx_rst_ignored"), bt_num(eng.sj, "rx_rst_challenged"),
		    bt_num(eng.sj, "rx_syn_challenged"), bt_num(eng.sj, "rx_old_acks"),
		    bt_num(eng.sj, "challenge_acks"), bt_num(eng.sj, "challenge_limited"));
	cr_log_info("engine: %g ACKs, %g frames with a partial checksum, %g with a bad one", bt_num(eng.sj, "acks"),
		    bt_num(eng.sj, "rx_csum_partial"), bt_num(eng.sj, "rx_bad_csum"));
	cr_assert_geq(bt_num(eng.sj, "rx_rst_ignored"), 1, "the blind RST: %s", eng.sj);
	cr_assert_geq(bt_num(eng.sj, "rx_rst_challenged"), 1, "the in-window RST: %s", eng.sj);
	cr_assert_geq(bt_num(eng.sj, "rx_syn_challenged"), 1, "the SYN: %s", eng.sj);
	cr_assert_geq(bt_num(eng.sj, "rx_old_acks"), 1, "the old ACK: %s", eng.sj);
	cr_assert_geq(bt_num(eng.sj, "challenge_acks"), 3, "%s", eng.sj);
	bt_fini();

	/* The reference: Linux's sender, paced to the same rate (SO_MAX_PACING_RATE), gets the same four frames. */
	chal0 = tcp_ext("TcpExtTCPChallengeACK");
	syn0 = tcp_ext("TcpExtTCPSYNChallenge");
	inj_port = ker.port;
	transfer(&ker, NULL);
	cr_assert_eq(ker.sender_exit, 0, "kernel sender exit %d: %s", ker.sender_exit, ker.sj);
	cr_assert_eq(ker.receiver_exit, 0, "%s", ker.rj);
	cr_assert_str_eq(bt_str(ker.sj, "status"), "ok", "%s", ker.sj);
	cr_assert_str_eq(bt_str(ker.rj, "status"), "ok", "%s", ker.rj);
	cr_assert_eq(bt_num(ker.rj, "bytes"), 96u << 20, "%s", ker.rj);
	cr_assert_eq(bt_num(ker.rj, "bytes_verified"), 96u << 20, "%s", ker.rj);
	cr_log_info("kernel: %g challenge ACKs, %g SYN challenges", tcp_ext("TcpExtTCPChallengeACK") - chal0,
		    tcp_ext("TcpExtTCPSYNChallenge") - syn0);
	cr_assert_geq(tcp_ext("TcpExtTCPChallengeACK") - chal0, 3);
	cr_assert_geq(tcp_ext("TcpExtTCPSYNChallenge") - syn0, 1);
}

/*
 * Junk the kernel would discard, each an RST at exactly RCV.NXT (so that
 * any of them taken for the peer's would end the transfer): bad IPv4
 * header and bad TCP checksums (steered: user space must drop them), a
 * foreign VLAN, a foreign destination MAC, a cut IPv4 header, and the
 * issue's one frame with all of it (passed to the kernel by the program).
 */
static void forge_junk(struct bt_proc *sp)
{
	static const uint8_t nobody[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x99 };
	struct inj_sock s;
	struct inj_frame base, f;

	(void)sp;
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	s = inj_open(IF_B);
	usleep(300000);
	for (int k = 0; k < 6; k++) {
		if (!inj_sniff(&s, (uint16_t)inj_port, 2000, &base)) {
			cr_log_warn("port %d: no segment to forge from, the connection is over", inj_port);
			break;
		}
		f = inj_tcp(&base, inj_seq(&base), inj_ack(&base), 0x14 /* RST|ACK */);
		switch (k) {
		case 0: inj_bad_ip_csum(&f); break;
		case 1: inj_bad_tcp_csum(&f); break;
		case 2: inj_vlan(&f, ETH_P_8021Q, 999); break;
		case 3: inj_dst_mac(&f, nobody); break;
		case 4: f.len = f.l3 + 12; break; /* padded to 60 bytes on the wire: the IP length then overruns */
		default:
			inj_bad_ip_csum(&f);
			inj_bad_tcp_csum(&f);
			inj_vlan(&f, ETH_P_8021Q, 999);
			inj_dst_mac(&f, nobody);
			break;
		}
		inj_send(&s, &f);
		usleep(50000);
	}
	close(s.fd);
}

Test(sender_inject, junk_frames, .fini = fini, .timeout = 90)
{
	struct run r = { .mode = "software", .bytes = "48M", .port = 7482, .during = forge_junk,
			 .extra = { "--rate", "200M" } };

	bed();
	inj_port = r.port;
	transfer(&r, NULL);
	expect_verified(&r, 48u << 20);
	cr_log_info("steering: %g seen, %g steered, %g other MAC, %g VLAN, %g bad header; %g bad checksums dropped, "
		    "%g partial accepted", bt_num(r.sj, "steer_seen"), bt_num(r.sj, "steer_steered"),
		    bt_num(r.sj, "steer_other_mac"), bt_num(r.sj, "steer_vlan"), bt_num(r.sj, "steer_bad_hdr"),
		    bt_num(r.sj, "rx_bad_csum"), bt_num(r.sj, "rx_csum_partial"));
	/* The program passed the foreign VLAN, the foreign MAC (twice), the cut header to the kernel... */
	cr_assert_geq(bt_num(r.sj, "steer_vlan"), 1, "%s", r.sj);
	cr_assert_geq(bt_num(r.sj, "steer_other_mac"), 2, "%s", r.sj);
	cr_assert_geq(bt_num(r.sj, "steer_bad_hdr"), 1, "%s", r.sj);
	/* ...and steered the two bad checksums, which user space dropped: only those two reached it. */
	cr_assert_eq(bt_num(r.sj, "rx_bad_csum"), 2, "%s", r.sj);
	cr_assert_eq(bt_num(r.sj, "rx_rst_challenged") + bt_num(r.sj, "rx_rst_ignored"), 0, "%s", r.sj);
}
