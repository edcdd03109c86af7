/* The soak's summary (soak.h): counts, churn, the balance at the end, CPU; text or one JSON object. */
#include <stdio.h>

#include "json.h"
#include "soak.h"

void soak_report(const struct soak *S, double secs, const struct rusage *self, const struct rusage *kids)
{
	const struct soak_counts *c = &S->c;
	double cpu = (double)self->ru_utime.tv_sec + self->ru_utime.tv_usec / 1e6 + (double)self->ru_stime.tv_sec +
		     self->ru_stime.tv_usec / 1e6;
	double kcpu = (double)kids->ru_utime.tv_sec + kids->ru_utime.tv_usec / 1e6 + (double)kids->ru_stime.tv_sec +
		      kids->ru_stime.tv_usec / 1e6;
	uint64_t rxd = atomic_load(&S->sink.dgrams), rxb = atomic_load(&S->sink.bytes), bad = atomic_load(&S->sink.bad);
	const char *status = S->fail[0] ? "failed" : S->interrupted ? "interrupted" : "ok";

	if (S->o.json) {
		struct bench_json j;

		bench_json_begin(&j, stdout);
		bench_json_str(&j, "tool", "soak");
		bench_json_str(&j, "status", status);
		if (S->fail[0])
			bench_json_str(&j, "failure", S->fail);
		bench_json_u64(&j, "seed", S->o.seed);
		bench_json_dbl(&j, "seconds", secs);
		bench_json_bool(&j, "mtu_changes_on", !S->o.no_mtu);
		bench_json_u64(&j, "streams_opened", c->streams);
		bench_json_u64(&j, "streams_verified", c->streams_ok);
		bench_json_u64(&j, "streams_failed_explained", c->streams_explained);
		bench_json_u64(&j, "streams_connect_failed", c->streams_connect_failed);
		bench_json_u64(&j, "stream_bytes", c->stream_bytes);
		bench_json_u64(&j, "dgram_flows_opened", c->dgram_flows);
		bench_json_u64(&j, "dgram_flows_ok", c->dgram_flows_ok);
		bench_json_u64(&j, "dgram_flows_failed_explained", c->dgram_flows_explained);
		bench_json_u64(&j, "dgrams_sent", c->dgrams_sent);
		bench_json_u64(&j, "dgrams_received", rxd);
		bench_json_u64(&j, "dgram_bytes_received", rxb);
		bench_json_u64(&j, "dgrams_bad", bad);
		bench_json_u64(&j, "flaps", c->flaps);
		bench_json_u64(&j, "mtu_changes", c->mtu_changes);
		bench_json_u64(&j, "receiver_kills", c->kills);
		bench_json_u64(&j, "receiver_restarts", c->restarts);
		bench_json_u64(&j, "receiver_exits", c->receiver_exits);
		bench_json_u64(&j, "receiver_resets", c->receiver_resets);
		bench_json_u64(&j, "port_cycles", c->port_cycles);
		bench_json_u64(&j, "steer_own_cycles", c->steer_own);
		bench_json_u64(&j, "steer_soak_cycles", c->steer_soak);
		bench_json_u64(&j, "checks", c->checks);
		bench_json_u64(&j, "route_waits", c->route_waits);
		bench_json_obj(&j, "errors");
		for (unsigned i = 0; i < SOAK_MAX_ERRNOS && c->errno_n[i]; i++)
			bench_json_u64(&j, soak_errname(c->errnos[i]), c->errno_n[i]);
		bench_json_close(&j);
		bench_json_i64(&j, "fds", S->last.fds);
		bench_json_i64(&j, "fds_baseline", S->base.fds);
		bench_json_i64(&j, "threads", S->last.tasks);
		bench_json_i64(&j, "threads_baseline", S->base.tasks);
		bench_json_u64(&j, "rss_kib", S->last.rss >> 10);
		bench_json_u64(&j, "rss_kib_baseline", S->base.rss >> 10);
		bench_json_u64(&j, "heap_kib", S->last.heap >> 10);
		bench_json_u64(&j, "heap_kib_baseline", S->base.heap >> 10);
		bench_json_u64(&j, "umem_chunks", S->chunks_total);
		bench_json_u64(&j, "umem_chunks_free", S->chunks_free);
		bench_json_dbl(&j, "cpu_s", cpu);
		bench_json_dbl(&j, "cpu_pct", secs > 0 ? 100 * cpu / secs : 0);
		bench_json_dbl(&j, "receivers_cpu_s", kcpu);
		bench_json_end(&j);
		return;
	}
	printf("soak: %s after %.1f min (seed %llu, MTU changes %s)%s%s\n", status, secs / 60,
	       (unsigned long long)S->o.seed, S->o.no_mtu ? "off" : "on", S->fail[0] ? ": " : "", S->fail);
	printf("  streams     %llu opened, %llu verified (%.1f MB), %llu failed with an error the churn explains "
	       "(%llu of them at connect)\n", (unsigned long long)c->streams, (unsigned long long)c->streams_ok,
	       (double)c->stream_bytes / 1e6, (unsigned long long)c->streams_explained,
	       (unsigned long long)c->streams_connect_failed);
	printf("  datagrams   %llu flows opened, %llu ended cleanly, %llu failed (explained); %llu datagrams sent, "
	       "%llu received (%.1f MB), %llu bad\n", (unsigned long long)c->dgram_flows,
	       (unsigned long long)c->dgram_flows_ok, (unsigned long long)c->dgram_flows_explained,
	       (unsigned long long)c->dgrams_sent, (unsigned long long)rxd, (double)rxb / 1e6, (unsigned long long)bad);
	printf("  errors     ");
	for (unsigned i = 0; i < SOAK_MAX_ERRNOS && c->errno_n[i]; i++)
		printf(" %s %llu", soak_errname(c->errnos[i]), (unsigned long long)c->errno_n[i]);
	printf("%s\n", c->errno_n[0] ? "" : " none");
	printf("  churn       %llu flaps, %llu MTU changes, %llu receiver kills (%llu restarts, %llu after a failed "
	       "stream, %llu ended by themselves), %llu port cycles (%llu with the port's own steering program, %llu with one the soak "
	       "created and destroyed), %llu balance checks\n", (unsigned long long)c->flaps,
	       (unsigned long long)c->mtu_changes, (unsigned long long)c->kills, (unsigned long long)c->restarts,
	       (unsigned long long)c->receiver_resets, (unsigned long long)c->receiver_exits, (unsigned long long)c->port_cycles,
	       (unsigned long long)c->steer_own, (unsigned long long)c->steer_soak, (unsigned long long)c->checks);
	printf("  balance     %d descriptors (baseline %d), %d threads (%d), RSS %llu KiB (%llu), heap %llu KiB "
	       "(%llu), UMEM %u of %u chunks free\n", S->last.fds, S->base.fds, S->last.tasks, S->base.tasks,
	       (unsigned long long)(S->last.rss >> 10), (unsigned long long)(S->base.rss >> 10),
	       (unsigned long long)(S->last.heap >> 10), (unsigned long long)(S->base.heap >> 10), S->chunks_free,
	       S->chunks_total);
	printf("  cpu         %.1f s (%.1f%% of one core), receivers %.1f s\n", cpu, secs > 0 ? 100 * cpu / secs : 0,
	       kcpu);
}
