#include "tool_pcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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

/* The stream under pcap_dump(): every write and the close are checked here. */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
	struct tool_pcap_out *o = cookie;
	size_t done = 0;

	while (!o->err && done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
		o->bytes += (uint64_t)w;
	}
	/* Short: stdio marks the stream as failed, and fwrite() reports it. */
	return (ssize_t)done;
}

static int out_close(void *cookie)
{
	struct tool_pcap_out *o = cookie;

	/* The last chance for a file system to report a failed write (NFS, quotas). */
	if (o->fd >= 0 && close(o->fd) && !o->err)
		o->err = errno;
	o->fd = -1;
	return o->err ? -1 : 0;
}

/* Is the open file `st` the (regular) file that `in` reads? */
static bool is_input(pcap_t *in, const struct stat *st)
{
	FILE *f = in ? pcap_file(in) : NULL;
	struct stat ist;

	if (!f || fstat(fileno(f), &ist) || !S_ISREG(ist.st_mode))
		return false;
	return ist.st_dev == st->st_dev && ist.st_ino == st->st_ino;
}

/* Descriptor for `path`, checked against the input, truncated only once it passed. */
static int out_fd(const char *path, pcap_t *in, char *errbuf)
{
	struct stat st;
	int fd, err;

	if (!strcmp(path, "-")) {
		int fl = fcntl(STDOUT_FILENO, F_GETFL);

		/* Closed, or reused by a file opened for reading (the input, say). */
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			snprintf(errbuf, PCAP_ERRBUF_SIZE, "standard output is not open for writing: %s",
				 strerror(EBADF));
			return -EBADF;
		}
		fd = STDOUT_FILENO;
	} else {
		/* No O_TRUNC yet: the file may be the input. */
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0) {
			err = errno;
			snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(err));
			return -err;
		}
	}
	/* Compared as open files, so that no rename can come between the check and the truncation. */
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(-err));
	} else if (is_input(in, &st)) {
		err = -EINVAL;
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "is the input file; refusing to overwrite it");
	} else if (fd != STDOUT_FILENO && S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		err = -errno;
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(-err));
	} else {
		return fd;
	}
	if (fd != STDOUT_FILENO)
		close(fd);
	return err;
}

int tool_pcap_out_open(struct tool_pcap_out *o, const char *path, int precision, pcap_t *in,
		       char *errbuf)
{
	static const cookie_io_functions_t io = { .write = out_write, .close = out_close };
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = out_fd(path, in, errbuf);
	if (o->fd < 0)
		return o->fd;
	o->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, TOOL_PCAP_SNAPLEN,
						       (unsigned)precision);
	o->f = o->dead ? fopencookie(o, "w", io) : NULL;
	if (!o->f) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "out of memory");
		if (o->fd != STDOUT_FILENO)
			close(o->fd);
		if (o->dead)
			pcap_close(o->dead);
		return -ENOMEM;
	}
	setvbuf(o->f, NULL, _IOFBF, 1u << 16);
	o->d = pcap_dump_fopen(o->dead, o->f);
	if (!o->d) {
		/* libpcap closed the stream (and with it the descriptor). */
		err = o->err ? o->err : EIO;
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(err));
		pcap_close(o->dead);
		return -err;
	}
	return 0;
}

int tool_pcap_out_write(struct tool_pcap_out *o, const struct pcap_pkthdr *h, const void *data)
{
	if (!o->err) {
		pcap_dump((u_char *)o->d, h, data);
		if (!o->err && ferror(o->f))
			o->err = EIO;
	}
	return -o->err;
}

int tool_pcap_out_close(struct tool_pcap_out *o)
{
	int err;

	if (fflush(o->f) && !o->err)
		o->err = EIO;
	pcap_dump_close(o->d);
	pcap_close(o->dead);
	err = o->err;
	memset(o, 0, sizeof(*o));
	return -err;
}
