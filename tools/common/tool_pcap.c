#include "tool_pcap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * libpcap converts timestamps to whatever precision the handle was opened
 * with, so the file's own precision has to be read from its magic number to
 * copy timestamps to the output unchanged.  pcapng and stdin stay micro.
 */
static int file_precision(const char *path)
{
	uint8_t m[4];
	FILE *f;
	size_t n;

	if (!strcmp(path, "-"))
		return PCAP_TSTAMP_PRECISION_MICRO;
	f = fopen(path, "rb");
	if (!f)
		return PCAP_TSTAMP_PRECISION_MICRO;
	n = fread(m, 1, sizeof(m), f);
	fclose(f);
	if (n == sizeof(m) && ((m[0] == 0xa1 && m[1] == 0xb2 && m[2] == 0x3c && m[3] == 0x4d) ||
			       (m[0] == 0x4d && m[1] == 0x3c && m[2] == 0xb2 && m[3] == 0xa1)))
		return PCAP_TSTAMP_PRECISION_NANO;
	return PCAP_TSTAMP_PRECISION_MICRO;
}

pcap_t *tool_pcap_open_in(const char *path, char *errbuf)
{
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, (unsigned)file_precision(path),
							    errbuf);

	if (!p) {
		/* Callers name the file themselves; libpcap sometimes does too. */
		size_t n = strlen(path);

		if (!strncmp(errbuf, path, n) && !strncmp(errbuf + n, ": ", 2))
			memmove(errbuf, errbuf + n + 2, strlen(errbuf + n + 2) + 1);
		return NULL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "link type %s (%d) is not Ethernet (EN10MB)",
			 pcap_datalink_val_to_name(pcap_datalink(p)) ?: "?", pcap_datalink(p));
		pcap_close(p);
		return NULL;
	}
	return p;
}

pcap_dumper_t *tool_pcap_open_out(const char *path, int precision, pcap_t **dead, char *errbuf)
{
	pcap_dumper_t *d;
	pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, TOOL_PCAP_SNAPLEN,
							 (unsigned)precision);

	if (!p) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "pcap_open_dead failed");
		return NULL;
	}
	d = pcap_dump_open(p, path);
	if (!d) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	*dead = p;
	return d;
}
