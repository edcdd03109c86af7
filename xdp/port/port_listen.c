/*
 * gso_port__listen (port.h): a listener on every queue's engine behind
 * one steering entry.  The steering program is the port's, shared by
 * every engine, so the entry is the port's to add and remove: each
 * engine's listener is opened without one (gsoi_listener_open).  The
 * listeners themselves are flows of their engines and go with them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opts_internal.h"
#include "port_internal.h"
#include "tcp/engine_tcp_internal.h"

int gso_port__listen(struct gso_port *h, const struct gso_listen_opts *o)
{
	struct port *p = port_of(h);
	struct gso_listener **ls;
	uint32_t q;
	int err;

	if (h && !p)
		return -EBADF;
	if (!p || !o || !GSO_OPTS_VALID(gso_listen_opts, o) || p->closed)
		return -EINVAL;
	if (atomic_load(&p->running) || p->listeners)
		return -EBUSY;
	ls = calloc(p->n, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	for (q = 0; q < p->n; q++) {
		err = gsoi_listener_open(&ls[q], p->qs[q].e, o, false);
		if (err)
			goto undo;
	}
	p->listen_flow = (struct gso_flow){ .sz = sizeof(p->listen_flow), .l3 = o->l3, .l4 = GSO_L4_TCP,
					    .dport = o->port };
	memcpy(p->listen_flow.daddr, o->addr, 16);
	err = gso_steer__flow_add(p->steer, &p->listen_flow);
	if (err)
		goto undo;
	p->listeners = ls;
	return 0;
undo:
	while (q--)
		gso_listener__close(ls[q]);
	free(ls);
	return err;
}

struct gso_listener *gso_port__listener(const struct gso_port *h, uint32_t q)
{
	const struct port *p = port_of(h);

	if (!p || !p->listeners || q >= p->n)
		return NULL;
	return p->listeners[q];
}

void gsoi_port_unlisten(struct port *p)
{
	if (!p->listeners)
		return;
	if (p->steer)
		gso_steer__flow_del(p->steer, &p->listen_flow);
	free(p->listeners);
	p->listeners = NULL;
}
