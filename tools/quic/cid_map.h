/*
 * Connection IDs to connections, for gsoquicd: every CID the server
 * issued (and each connection's client-chosen original DCID, for
 * Initials the client sends again) names its connection.  A chained hash
 * table with a random seed, so that a client choosing CIDs cannot aim
 * them at one bucket; it doubles when it is full.  Not part of libgso.
 */
#ifndef GSO_TOOL_CID_MAP_H
#define GSO_TOOL_CID_MAP_H

#include <stddef.h>
#include <stdint.h>

#define CID_MAX 20

struct cid_ent;

struct cid_map {
	struct cid_ent **b;
	size_t nb, n;
	uint64_t seed;
};

int cid_map_init(struct cid_map *m, uint64_t seed);
void cid_map_free(struct cid_map *m);
/* 0, -EEXIST (the CID names a connection already), -ENOMEM, -EINVAL (too long). */
int cid_map_add(struct cid_map *m, const uint8_t *cid, size_t len, void *val);
/* The connection, or NULL. */
void *cid_map_get(const struct cid_map *m, const uint8_t *cid, size_t len);
/* 0, or -ENOENT. */
int cid_map_del(struct cid_map *m, const uint8_t *cid, size_t len);

#endif
