/*
 * pcap input/output for the tools: Ethernet captures only, timestamps kept
 * at the precision of the input file, and output whose every write and
 * final close are checked.
 */
#ifndef GSO_TOOL_PCAP_H
#define GSO_TOOL_PCAP_H

#include <stdint.h>
#include <stdio.h>
#include <pcap/pcap.h>

/* Snap length written into output files: larger than any 64 KiB IP datagram plus L2. */
#define TOOL_PCAP_SNAPLEN 262144

/*
 * Open a capture file ("-" = stdin) for reading, with timestamps at the
 * file's own precision (micro- or nanoseconds).  Refuses link types other
 * than Ethernet.  Returns NULL with a message in errbuf (PCAP_ERRBUF_SIZE).
 */
pcap_t *tool_pcap_open_in(const char *path, char *errbuf);

/*
 * An output capture file.  libpcap's pcap_dump() returns nothing and its
 * pcap_dump_close() drops the result of fclose(), so the file is written
 * through a stream of our own that keeps the first error of any write and
 * of the final close(); nothing is written after a failed write.
 */
struct tool_pcap_out {
	pcap_t *dead;
	pcap_dumper_t *d;
	FILE *f;
	int fd;
	int err;        /* first failed write or close: positive errno; 0: none */
	uint64_t bytes; /* bytes the file accepted */
};

/*
 * Open `path` ("-" = stdout, which must be open for writing) for Ethernet
 * frames with timestamps of `precision` (PCAP_TSTAMP_PRECISION_MICRO/NANO,
 * as pcap_get_tstamp_precision reports for the input).  With `in` (the
 * capture being read, or NULL), an output that is the same file (same
 * device and inode: the same name, a hard or symbolic link, stdout
 * redirected to it) is refused before anything is truncated or written.
 * The stream points at `o`: it stays where it is until tool_pcap_out_close.
 * Returns 0, or -errno with a message in errbuf (PCAP_ERRBUF_SIZE).
 */
int tool_pcap_out_open(struct tool_pcap_out *o, const char *path, int precision, pcap_t *in,
		       char *errbuf);

/*
 * Append one record (h->caplen bytes of `data`).  Returns 0, or -errno of
 * the first write that failed, this one or an earlier one (buffered data
 * reaches the file later, so an error may show a few records late; the
 * final close reports any that is left).
 */
int tool_pcap_out_write(struct tool_pcap_out *o, const struct pcap_pkthdr *h, const void *data);

/*
 * Flush, close the file and free `o`.  Returns 0 if every byte was written
 * and the close succeeded, else -errno of the first failure.
 */
int tool_pcap_out_close(struct tool_pcap_out *o);

#endif
