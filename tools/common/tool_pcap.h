/*
 * pcap input/output for the tools: Ethernet captures only, timestamps kept
 * at the precision of the input file.
 */
#ifndef GSO_TOOL_PCAP_H
#define GSO_TOOL_PCAP_H

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
 * Open `path` ("-" = stdout) for writing Ethernet frames with timestamps
 * of `precision` (PCAP_TSTAMP_PRECISION_MICRO/NANO, as pcap_get_tstamp_precision
 * reports for the input).  *dead receives the handle to pcap_close after
 * pcap_dump_close.  Returns NULL with a message in errbuf.
 */
pcap_dumper_t *tool_pcap_open_out(const char *path, int precision, pcap_t **dead, char *errbuf);

#endif
