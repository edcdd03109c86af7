/* Connection IDs to connections: see cid_map.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cid_map.h"

struct cid_ent {
	struct cid_ent *next;
	void *val;
	uint8_t len;
	uint8_t cid[CID_MAX];
};

static size_t hash(const struct cid_map *m, const uint8_t *cid, size_t len)
{
	uint64_t h = m->seed ^ (len * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < len; i++) {
		h ^= cid[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= h >> 32;
	return (size_t)h & (m->nb - 1);
}

int cid_map_init(struct cid_map *m, uint64_t seed)
{
	m->nb = 256;
	m->n = 0;
	m->seed = seed;
	m->b = calloc(m->nb, sizeof(*m->b));
	return m->b ? 0 : -ENOMEM;
}

void cid_map_free(struct cid_map *m)
{
	for (size_t i = 0; m->b && i < m->nb; i++)
		while (m->b[i]) {
			struct cid_ent *e = m->b[i];

			m->b[i] = e->next;
			free(e);
		}
	free(m->b);
	m->b = NULL;
	m->n = 0;
}

static void grow(struct cid_map *m)
{
	struct cid_map n = { .nb = m->nb * 2, .seed = m->seed, .n = m->n };

	n.b = calloc(n.nb, sizeof(*n.b));
	if (!n.b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < m->nb; i++)
		while (m->b[i]) {
			struct cid_ent *e = m->b[i];
			size_t h = hash(&n, e->cid, e->len);

			m->b[i] = e->next;
			e->next = n.b[h];
			n.b[h] = e;
		}
	free(m->b);
	*m = n;
}

int cid_map_add(struct cid_map *m, const uint8_t *cid, size_t len, void *val)
{
	struct cid_ent *e;
	size_t h;

	if (len > CID_MAX)
		return -EINVAL;
	if (cid_map_get(m, cid, len))
		return -EEXIST;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (m->n >= m->nb)
		grow(m);
	h = hash(m, cid, len);
	e->val = val;
	e->len = (uint8_t)len;
	memcpy(e->cid, cid, len);
	e->next = m->b[h];
	m->b[h] = e;
	m->n++;
	return 0;
}

void *cid_map_get(const struct cid_map *m, const uint8_t *cid, size_t len)
{
	if (len > CID_MAX)
		return NULL;
	for (struct cid_ent *e = m->b[hash(m, cid, len)]; e; e = e->next)
		if (e->len == len && !memcmp(e->cid, cid, len))
			return e->val;
	return NULL;
}

int cid_map_del(struct cid_map *m, const uint8_t *cid, size_t len)
{
	if (len > CID_MAX)
		return -ENOENT;
	for (struct cid_ent **p = &m->b[hash(m, cid, len)]; *p; p = &(*p)->next)
		if ((*p)->len == len && !memcmp((*p)->cid, cid, len)) {
			struct cid_ent *e = *p;

			*p = e->next;
			free(e);
			m->n--;
			return 0;
		}
	return -ENOENT;
}
