#include "test_progs.h"
#include "gso_test.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int test_prog_run(const char *prog, const char *const *args, const char *out_path)
{
	char path[4096];
	const char *argv[32] = { path };
	posix_spawn_file_actions_t fa;
	size_t n = 1;
	pid_t pid;
	int err, st;

	snprintf(path, sizeof(path), "%s", gso_test_build_path(prog));
	for (size_t i = 0; args && args[i]; i++) {
		if (n + 1 >= sizeof(argv) / sizeof(argv[0]))
			return -E2BIG;
		argv[n++] = args[i];
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

char *test_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *b = realloc(buf, cap + 65536);

			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
			cap += 65536;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (!r)
			break;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

bool test_summary_u64(const char *text, const char *key, uint64_t *val)
{
	const char *line = NULL, *p;
	size_t kl = strlen(key);

	for (p = text; (p = strstr(p, "summary ")); p++)
		if (p == text || p[-1] == '\n')
			line = p;
	if (!line)
		return false;
	for (p = line + 1; *p && *p != '\n'; p++) {
		if (p[-1] == ' ' && !strncmp(p, key, kl) && p[kl] == '=') {
			char *end;

			*val = strtoull(p + kl + 1, &end, 10);
			return end != p + kl + 1;
		}
	}
	return false;
}
