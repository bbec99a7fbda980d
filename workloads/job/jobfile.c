// SPDX-License-Identifier: GPL-2.0
/* fio job files: ini sections, [global] defaults for the sections below it,
 * "key=value" or a bare "key" per line, ';' or '#' comment lines, ${VAR}
 * taken from the environment. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "job/jobfile.h"
#include "job/options.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Replaces ${VAR} with the environment's value; -1 names an unset variable. */
static int expand_env(const char *in, char *out, size_t len, char *missing, size_t mlen)
{
	size_t o = 0;

	while (*in) {
		if (in[0] == '$' && in[1] == '{') {
			const char *end = strchr(in + 2, '}');
			char var[128];
			const char *val;

			if (!end || (size_t)(end - in - 2) >= sizeof(var))
				return -1;
			memcpy(var, in + 2, (size_t)(end - in - 2));
			var[end - in - 2] = 0;
			val = getenv(var);
			if (!val) {
				snprintf(missing, mlen, "%s", var);
				return -1;
			}
			if (o + strlen(val) >= len)
				return -1;
			memcpy(out + o, val, strlen(val));
			o += strlen(val);
			in = end + 1;
			continue;
		}
		if (o + 1 >= len)
			return -1;
		out[o++] = *in++;
	}
	out[o] = 0;
	return 0;
}

static int apply_line(struct job_opts *job, const char *path, int lineno, char *line,
		      char *err, size_t errlen)
{
	char *eq = strchr(line, '='), *key = line, *val = NULL;
	char expanded[4096], missing[128] = "", msg[400];
	const struct opt_def *d;

	if (eq) {
		*eq = 0;
		val = trim(eq + 1);
	}
	key = trim(key);
	d = options_find(key);
	if (!d) {
		snprintf(err, errlen, "%s:%d: unknown option '%s'", path, lineno, key);
		return -1;
	}
	if (d->scope != SCOPE_JOB) {
		snprintf(err, errlen, "%s:%d: option '%s' is only valid on the command line",
			 path, lineno, key);
		return -1;
	}
	if (val) {
		if (expand_env(val, expanded, sizeof(expanded), missing, sizeof(missing))) {
			if (*missing)
				snprintf(err, errlen, "%s:%d: option '%s': environment variable "
					 "'%s' is not set", path, lineno, key, missing);
			else
				snprintf(err, errlen, "%s:%d: option '%s': bad ${...} in value",
					 path, lineno, key);
			return -1;
		}
		val = expanded;
	}
	if (options_apply(d, job, NULL, val, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
		return -1;
	}
	return 0;
}

int jobfile_parse(const char *path, const struct job_opts *base, struct jobset *js,
		  char *err, size_t errlen)
{
	struct job_opts global, *cur = NULL;
	char line[4096];
	int lineno = 0, ret = -1;
	bool in_global = false;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "cannot open job file '%s': %s", path, strerror(errno));
		return -1;
	}
	job_opts_copy(&global, base);
	while (fgets(line, sizeof(line), f)) {
		char *p = trim(line);

		lineno++;
		if (!*p || *p == ';' || *p == '#')
			continue;
		if (*p == '[') {
			char *end = strchr(p, ']');

			if (!end || end == p + 1) {
				snprintf(err, errlen, "%s:%d: bad section header '%s'", path, lineno, p);
				goto out;
			}
			*end = 0;
			p = trim(p + 1);
			in_global = !strcmp(p, "global");
			if (in_global) {
				cur = &global;
				continue;
			}
			cur = jobset_add(js, &global);
			if (!cur) {
				snprintf(err, errlen, "%s:%d: too many jobs (max %d)", path, lineno,
					 MAX_JOBS);
				goto out;
			}
			free(cur->name);
			cur->name = strdup(p);
			continue;
		}
		if (!cur) {
			snprintf(err, errlen, "%s:%d: option '%s' outside of a [job] section",
				 path, lineno, p);
			goto out;
		}
		if (!strncmp(p, "include", 7) && (isspace((unsigned char)p[7]) || !p[7])) {
			snprintf(err, errlen, "%s:%d: unknown option 'include' (not supported)",
				 path, lineno);
			goto out;
		}
		if (apply_line(cur, path, lineno, p, err, errlen))
			goto out;
	}
	/* the report's "global options" */
	for (unsigned i = 0; i < global.ngiven; i++)
		job_opts_remember(&js->globals, global.given[i].key, global.given[i].val);
	ret = 0;
out:
	fclose(f);
	job_opts_free(&global);
	return ret;
}
