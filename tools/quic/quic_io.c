/* The front door of quic_io.h: pick the backend, then dispatch. */
#include <errno.h>
#include <time.h>

#include "quic_io.h"

int qio_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen)
{
	if (!out || !cfg || !cfg->cb.on_recv || !cfg->cb.on_sent)
		return -EINVAL;
	return cfg->backend == QIO_KERNEL ? qio_kernel_open(out, cfg, errbuf, errlen)
					  : qio_gso_open(out, cfg, errbuf, errlen);
}

int qio_path_open(struct qio *q, const struct qio_peer *peer, struct qio_path **out)
{
	return q->ops->path_open(q, peer, out);
}

void qio_path_close(struct qio *q, struct qio_path *p)
{
	if (p)
		q->ops->path_close(q, p);
}

int qio_send(struct qio *q, struct qio_path *p, const void *buf, uint32_t len, uint32_t gso_size,
	     uint64_t at_ns, uint64_t cookie)
{
	return q->ops->send(q, p, buf, len, gso_size, at_ns, cookie);
}

int qio_set_rate(struct qio *q, struct qio_path *p, uint64_t rate)
{
	return q->ops->set_rate(q, p, rate);
}

int qio_send_once(struct qio *q, const struct qio_peer *peer, const void *buf, uint32_t len)
{
	return q->ops->send_once(q, peer, buf, len);
}

int qio_run(struct qio *q, uint64_t until_ns)
{
	return q->ops->run(q, until_ns);
}

void qio_stop(struct qio *q)
{
	q->ops->stop(q);
}

void qio_close(struct qio *q, struct qio_report *rep)
{
	q->ops->close(q, rep);
}

void qio_destroy(struct qio *q)
{
	if (q)
		q->ops->destroy(q);
}

uint64_t qio_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
