// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Vulkan driver manifests, read as the loader reads them (its
 * LoaderDriverInterface document): JSON files whose "ICD" object names
 * the driver's "library_path". Everything here is the target's: its
 * environment, its files, read as it and bounded. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "procfs.h"
#include "vkicd.h"

#define MANIFEST_MAX (64 << 10)
#define DIR_MAX 64	    /* manifests read from one directory */
#define ENV_MAX (128 << 10) /* of the environment */

/* where the loader looks when the environment does not say (the home
 * directory's are left out: a service's is seldom where its drivers are) */
static const char *const manifest_dirs[] = {
	"/etc/xdg/vulkan/icd.d",
	"/etc/vulkan/icd.d",
	"/usr/local/share/vulkan/icd.d",
	"/usr/share/vulkan/icd.d",
};

struct found {
	__u32 pid;
	char (*paths)[PATH_MAX];
	size_t n, max;
};

static void add(struct found *f, const char *path)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->paths[i], path))
			return;
	if (f->n < f->max && snprintf(f->paths[f->n], PATH_MAX, "%s", path) < PATH_MAX)
		f->n++;
}

/* one manifest: its library_path, made absolute when it is relative to the
 * manifest, kept bare when it is a file name alone */
static void read_manifest(struct found *f, const char *path)
{
	char buf[MANIFEST_MAX + 1], lib[PATH_MAX];
	struct json_object *root, *icd, *lp;
	const char *s, *slash;
	ssize_t n;
	size_t len = 0;
	int fd = procfs__open_in_root(f->pid, path);

	if (fd < 0)
		return;
	while (len < MANIFEST_MAX && (n = read(fd, buf + len, MANIFEST_MAX - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	root = json_tokener_parse(buf);
	if (root && json_object_object_get_ex(root, "ICD", &icd) &&
	    json_object_object_get_ex(icd, "library_path", &lp) &&
	    json_object_is_type(lp, json_type_string)) {
		s = json_object_get_string(lp);
		slash = strrchr(path, '/');
		if (!*s || strlen(s) != (size_t)json_object_get_string_len(lp))
			; /* empty, or a NUL inside */
		else if (s[0] == '/' || !strchr(s, '/'))
			add(f, s);
		else if (slash && snprintf(lib, sizeof(lib), "%.*s/%s", (int)(slash - path), path,
					   s) < (int)sizeof(lib))
			add(f, lib);
	}
	json_object_put(root);
}

static bool is_manifest_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && name[0] != '.' && !strcmp(name + n - 5, ".json");
}

/* a manifest, or a directory of them */
static void read_path(struct found *f, const char *path)
{
	char file[PATH_MAX];
	struct dirent *e;
	int fd, seen = 0;
	DIR *d;

	if (path[0] != '/')
		return; /* relative to what the target's cwd was: not followed */
	fd = procfs__open_dir_in_root(f->pid, path);
	if (fd < 0) {
		if (is_manifest_name(path))
			read_manifest(f, path);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) && seen < DIR_MAX)
		if (is_manifest_name(e->d_name) &&
		    snprintf(file, sizeof(file), "%s/%s", path, e->d_name) < (int)sizeof(file)) {
			seen++;
			read_manifest(f, file);
		}
	closedir(d);
}

/* each of a list's colon-separated paths */
static void read_list(struct found *f, const char *list)
{
	char path[PATH_MAX];
	const char *end;

	for (; *list; list = *end ? end + 1 : end) {
		end = strchrnul(list, ':');
		if (end > list && end - list < (long)sizeof(path)) {
			snprintf(path, sizeof(path), "%.*s", (int)(end - list), list);
			read_path(f, path);
		}
	}
}

/* NAME's value in an environment of NUL-ended "NAME=value" strings */
static const char *env_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *s = env, *end = env + len;

	for (; s < end; s += strlen(s) + 1)
		if (!strncmp(s, name, n) && s[n] == '=')
			return s + n + 1;
	return NULL;
}

size_t vkicd__drivers(__u32 pid, char (*paths)[PATH_MAX], size_t max)
{
	static char env[ENV_MAX + 1];
	struct found f = { .pid = pid, .paths = paths, .max = max };
	const char *only, *more;
	size_t len, i;

	len = procfs__read_raw(pid, "environ", env, ENV_MAX);
	env[len] = 0; /* a last string cut short still ends */
	more = env_get(env, len, "VK_ADD_DRIVER_FILES");
	only = env_get(env, len, "VK_DRIVER_FILES");
	if (!only)
		only = env_get(env, len, "VK_ICD_FILENAMES");
	if (more)
		read_list(&f, more);
	if (only)
		read_list(&f, only);
	else
		for (i = 0; i < sizeof(manifest_dirs) / sizeof(manifest_dirs[0]); i++)
			read_path(&f, manifest_dirs[i]);
	return f.n;
}
